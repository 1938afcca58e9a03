//! The few operations the sandbox needs that Rust cannot prove safe. Each runs only in
//! the helper's fresh single-threaded processes.
#![allow(unsafe_code)]

use rustix::thread::UnshareFlags;

/// `unshare(2)`. Unsafe in rustix only because of `CLONE_FILES`, which splits the
/// descriptor table between threads; callers never pass it, and the helper has one thread.
pub(super) fn unshare(flags: UnshareFlags) -> rustix::io::Result<()> {
    debug_assert!(!flags.contains(UnshareFlags::FILES));
    // SAFETY: see above: no CLONE_FILES, single-threaded process.
    unsafe { rustix::thread::unshare_unsafe(flags - UnshareFlags::FILES) }
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

/// Closes every descriptor from 3 up: the helper needs none it inherited (its spec comes
/// on stdin), and whatever the host's own parent left open (a file, a directory) must not
/// sit in a process beside the tool.
pub(super) fn close_from_3() -> Result<(), String> {
    // SAFETY: called first thing in the helper, before anything of this process opened a
    // descriptor, so nothing Rust owns is closed under it. Arguments are plain integers.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("close_range: {}", std::io::Error::last_os_error()))
    }
}

pub(super) enum Forked {
    Child,
    Parent(rustix::process::Pid),
}

/// `fork(2)`.
///
/// # Safety
///
/// The calling process must have exactly one thread. The child gets a copy of the caller's
/// thread only: a lock another thread held (the allocator's, stdout's) would stay locked
/// in it forever, and any Rust code it runs could deadlock or see a half-made state. With
/// one thread, the child's copy of the address space is consistent and it may go on
/// running ordinary Rust code.
pub(super) unsafe fn fork() -> Result<Forked, String> {
    // SAFETY: the caller guarantees a single-threaded process (this function's contract).
    let pid = unsafe { libc::fork() };
    match pid {
        0 => Ok(Forked::Child),
        p if p > 0 => rustix::process::Pid::from_raw(p)
            .map(Forked::Parent)
            .ok_or_else(|| "fork returned an invalid pid".to_string()),
        _ => Err(format!("fork: {}", std::io::Error::last_os_error())),
    }
}
