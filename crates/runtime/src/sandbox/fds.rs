//! The few operations the sandbox needs that Rust cannot prove safe. Each runs only in
//! the helper's fresh single-threaded processes.
#![allow(unsafe_code)]

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use rustix::thread::UnshareFlags;

/// `unshare(2)`. Unsafe in rustix only because of `CLONE_FILES`, which splits the
/// descriptor table between threads; callers never pass it, and the helper has one thread.
pub(super) fn unshare(flags: UnshareFlags) -> rustix::io::Result<()> {
    debug_assert!(!flags.contains(UnshareFlags::FILES));
    // SAFETY: see above: no CLONE_FILES, single-threaded process.
    unsafe { rustix::thread::unshare_unsafe(flags - UnshareFlags::FILES) }
}

/// Takes ownership of descriptors the first stage opened for us and named in the spec.
pub(super) fn adopt(fds: &[RawFd]) -> Result<Vec<OwnedFd>, String> {
    let mut owned = Vec::with_capacity(fds.len());
    for &fd in fds {
        if fd < 3 || rustix::io::fcntl_getfd(borrow(fd)).is_err() {
            return Err(format!(
                "descriptor {fd} named in the sandbox spec is not open"
            ));
        }
        // SAFETY: the first stage opened `fd` without close-on-exec for this process
        // alone, it is open (checked above), and nothing else in this process owns it.
        owned.push(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    Ok(owned)
}

fn borrow<'a>(fd: RawFd) -> std::os::fd::BorrowedFd<'a> {
    // SAFETY: used only for an `F_GETFD` probe right away; a closed descriptor yields EBADF.
    unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }
}

/// Marks every descriptor from 3 up close-on-exec, so that nothing the helper inherited
/// or opened reaches the tool by accident.
pub(super) fn cloexec_from_3() -> Result<(), String> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with CLOEXEC only sets a flag on open descriptors; nothing is
    // closed or reused. Arguments are plain integers.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("close_range: {}", std::io::Error::last_os_error()))
    }
}
