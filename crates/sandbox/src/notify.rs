//! Seccomp user notification: the system calls behind the network supervisor, which
//! neither rustix nor seccompiler offer. Each wrapper is small and checks what it can;
//! the supervisor's logic stays in safe code ([`super::supervise`]).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// Installs `program` as a seccomp filter. With `listener`, its `SECCOMP_RET_USER_NOTIF`
/// answers go to the returned descriptor. The caller must have `no_new_privs` set.
pub(super) fn install(
    program: &[libc::sock_filter],
    listener: bool,
) -> io::Result<Option<OwnedFd>> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| io::Error::other("filter too long"))?,
        filter: program.as_ptr().cast_mut(),
    };
    let install = |flags: libc::c_ulong| {
        // SAFETY: `prog` points at `program`, which outlives the call; the kernel copies it.
        unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &prog as *const libc::sock_fprog,
            )
        }
    };
    if !listener {
        return match install(0) {
            0 => Ok(None),
            _ => Err(io::Error::last_os_error()),
        };
    }
    // Killable waits (Linux 5.19) keep a signal from interrupting a connect the supervisor
    // is already making on the tool's behalf; older kernels get the plain listener.
    let mut fd = install(
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
    );
    if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        fd = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER);
    }
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("invalid listener descriptor"))?;
    // SAFETY: the kernel just returned this descriptor to us and nothing else owns it.
    Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// One intercepted system call, waiting for the supervisor's answer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Notification {
    pub id: u64,
    /// The calling thread, in the supervisor's PID namespace.
    pub pid: u32,
    pub nr: i64,
    pub args: [u64; 6],
}

pub(super) fn receive(listener: BorrowedFd<'_>) -> io::Result<Notification> {
    // SAFETY: seccomp_notif is plain old data; all zeroes is valid (and required by RECV).
    let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: NOTIF_RECV writes one seccomp_notif, the type of `n`.
    unsafe { ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV as _, &mut n)? };
    Ok(Notification {
        id: n.id,
        pid: n.pid,
        nr: i64::from(n.data.nr),
        args: n.data.args,
    })
}

/// The supervisor's answer to one notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reply {
    /// The call's result, as the supervisor made the call itself.
    Value(i64),
    /// Fail the call with this errno.
    Error(i32),
}

pub(super) fn respond(listener: BorrowedFd<'_>, id: u64, reply: Reply) -> io::Result<()> {
    let (val, error, flags) = match reply {
        Reply::Value(v) => (v, 0, 0),
        Reply::Error(e) => (0, -e, 0),
    };
    let mut resp = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags,
    };
    // SAFETY: NOTIF_SEND reads one seccomp_notif_resp, the type of `resp`.
    unsafe { ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND as _, &mut resp) }
}

/// Whether the notification is still pending: the thread has not been killed and its pid
/// not reused. Checked after reading the tool's memory, before acting on what was read.
pub(super) fn still_pending(listener: BorrowedFd<'_>, id: u64) -> bool {
    let mut id = id;
    // SAFETY: NOTIF_ID_VALID reads one u64, the type of `id`.
    unsafe { ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _, &mut id).is_ok() }
}

/// Copies `buf.len()` bytes of thread `pid`'s memory at `addr`; the kernel checks that
/// we may (ptrace access: we are the sandbox's ancestor and hold its user namespace).
pub(super) fn read_memory(pid: u32, addr: u64, buf: &mut [u8]) -> io::Result<()> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` covers exactly `buf`; the remote range is another process's and
    // only read by the kernel, which checks it.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    match usize::try_from(n) {
        Ok(n) if n == buf.len() => Ok(()),
        Ok(_) => Err(io::Error::from_raw_os_error(libc::EFAULT)),
        Err(_) => Err(io::Error::last_os_error()),
    }
}

/// Puts `socket` into the notifying process's descriptor table at `number`, replacing
/// what is there (the tool's own socket), as `dup2` would.
pub(super) fn replace_descriptor(
    listener: BorrowedFd<'_>,
    id: u64,
    socket: BorrowedFd<'_>,
    number: i32,
) -> io::Result<()> {
    let number = u32::try_from(number).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    let mut addfd = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: u32::try_from(socket.as_raw_fd()).map_err(|_| io::Error::other("bad fd"))?,
        newfd: number,
        newfd_flags: libc::O_CLOEXEC as u32,
    };
    // SAFETY: NOTIF_ADDFD reads one seccomp_notif_addfd, the type of `addfd`; its `srcfd`
    // is `socket`, which the caller keeps open for the duration.
    unsafe { ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ADDFD as _, &mut addfd) }
}

/// `connect(2)` with an address as raw bytes (a copy of the tool's, already checked),
/// for families rustix has no type for.
pub(super) fn connect_raw(socket: BorrowedFd<'_>, address: &[u8]) -> io::Result<()> {
    let len = u32::try_from(address.len()).map_err(|_| io::Error::other("long address"))?;
    // SAFETY: the pointer and length describe `address`, which the kernel only reads.
    let rc = unsafe { libc::connect(socket.as_raw_fd(), address.as_ptr().cast(), len) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The cookie of the network namespace a socket belongs to (Linux 5.14): tells the
/// host's namespace from the tool's without any privilege.
pub(super) fn netns_cookie(socket: BorrowedFd<'_>) -> io::Result<u64> {
    const SO_NETNS_COOKIE: libc::c_int = 71;
    let mut cookie = 0u64;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cookie`, which is ours.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_NETNS_COOKIE,
            (&mut cookie as *mut u64).cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cookie)
}

/// Brings the loopback interface of the current (new) network namespace up, which needs
/// CAP_NET_ADMIN there: PID 1 does it before it gives up its capabilities.
pub(super) fn loopback_up() -> io::Result<()> {
    let socket = rustix::net::socket(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::DGRAM,
        None,
    )?;
    // SAFETY: ifreq is plain old data; all zeroes is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo") {
        *dst = *src as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    // SAFETY: SIOCSIFFLAGS reads one ifreq, the type of `req`, on a socket.
    unsafe { ioctl(socket.as_fd(), libc::SIOCSIFFLAGS as _, &mut req) }
}

/// `ioctl(2)` whose argument is a pointer to one `T`.
///
/// # Safety
///
/// `request` must be one that reads or writes at most one `T` through its argument (and
/// nothing else the caller's memory holds): the kernel trusts the request's own idea of
/// the argument's type and size, so a `T` smaller than that, or of another layout, lets it
/// read or write past `arg`. Descriptors inside `T` must stay open for the call.
unsafe fn ioctl<T>(fd: BorrowedFd<'_>, request: libc::Ioctl, arg: &mut T) -> io::Result<()> {
    // SAFETY: `arg` is a live, exclusively borrowed `T`, and the caller guarantees that
    // `request` accesses exactly one `T` (this function's contract).
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), request, arg as *mut T) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
