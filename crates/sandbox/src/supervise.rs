//! The network supervisor of a networked tool.
//!
//! A networked tool lives in its own network namespace, like every tool: its sockets can
//! reach nothing but the sandbox's own loopback. Its seccomp filter hands every `connect`
//! to this supervisor, which runs in the helper's first stage, in the host's network
//! namespace. For a TCP connection to an address [`Egress`] allows, the supervisor opens
//! a socket of its own on the host's network, connects it, and puts it in place of the
//! tool's socket (under the same descriptor number). Every other connect it makes itself
//! on the tool's socket, which stays in the tool's namespace.
//!
//! The supervisor never lets the kernel resume a call with the tool's arguments: those
//! live in memory the tool can change after they were checked. It acts on its own copy
//! of the address and on its own duplicate of the socket. So the tool holds exactly two
//! kinds of socket: its own, which reach nothing outside, and TCP sockets the supervisor
//! connected to addresses it checked (and which no second `connect` can move: connects
//! always come here, and TCP Fast Open is refused by the filter).

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use rustix::net::{AddressFamily, SocketFlags, SocketType};
use rustix::process::{Pid, PidfdFlags, PidfdGetfdFlags};

use super::egress::Egress;
use super::notify::{self, Notification, Reply};

/// The size of `struct sockaddr_storage`: no valid address is longer.
const MAX_ADDRESS: usize = 128;
/// `PIDFD_THREAD` (Linux 6.9): a pidfd for a thread, which is what a notification names.
const PIDFD_THREAD: u32 = libc::O_EXCL as u32;
/// How long a tool's blocking connect may take (the kernel's own limit is about two
/// minutes of SYN retries).
const BLOCKING_CONNECT: Duration = Duration::from_secs(60);

pub(super) struct Supervisor {
    listener: OwnedFd,
    egress: Egress,
    /// The host's network namespace, told apart from the tool's by its cookie.
    host_cookie: u64,
    /// The host's `/proc`, opened before the sandbox hid it: where the tool's threads
    /// show their root and working directory.
    proc: OwnedFd,
}

impl Supervisor {
    pub(super) fn new(listener: OwnedFd, egress: Egress, proc: OwnedFd) -> io::Result<Self> {
        let probe = rustix::net::socket(AddressFamily::INET, SocketType::DGRAM, None)?;
        let host_cookie = notify::netns_cookie(probe.as_fd())?;
        Ok(Supervisor {
            listener,
            egress,
            host_cookie,
            proc,
        })
    }

    pub(super) fn listener(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }

    /// Answers one notification; call when the listener is readable. The first stage
    /// cannot start threads (it unshared its PID namespace), so this runs on its only
    /// one: the supervisor's own connects are non-blocking, and only a tool's blocking
    /// connect waits here, for at most [`BLOCKING_CONNECT`].
    pub(super) fn serve_one(&self) {
        // An error: the calling thread died before we got to it.
        let Ok(n) = notify::receive(self.listener.as_fd()) else {
            return;
        };
        let reply = match self.connect(&n) {
            Ok(reply) => reply,
            Err(e) => Reply::Error(e.raw_os_error().unwrap_or(libc::EACCES)),
        };
        // The thread may be gone by now (killed, or the call cancelled): nothing to answer.
        let _ = notify::respond(self.listener.as_fd(), n.id, reply);
    }

    fn connect(&self, n: &Notification) -> io::Result<Reply> {
        if n.nr != libc::SYS_connect {
            return Ok(Reply::Error(libc::ENOSYS));
        }
        let number = n.args[0] as i32;
        let thread = pidfd_of(n.pid)?;
        let socket = rustix::process::pidfd_getfd(&thread, number, PidfdGetfdFlags::empty())?;
        let len = (n.args[2] as u32) as usize;
        if len > MAX_ADDRESS {
            return Ok(Reply::Error(libc::EINVAL));
        }
        let mut address = vec![0u8; len];
        notify::read_memory(n.pid, n.args[1], &mut address)?;
        if !notify::still_pending(self.listener.as_fd(), n.id) {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        let family = rustix::net::sockopt::socket_domain(&socket)?;
        if notify::netns_cookie(socket.as_fd())? == self.host_cookie {
            // One we connected for the tool: it stays where we put it.
            return Ok(Reply::Error(libc::EISCONN));
        }
        if family == AddressFamily::INET || family == AddressFamily::INET6 {
            return self.connect_ip(n, &socket, family, &address);
        }
        if family == AddressFamily::UNIX {
            return self.connect_path(n, &socket, &address);
        }
        Ok(done(notify::connect_raw(socket.as_fd(), &address)))
    }

    fn connect_ip(
        &self,
        n: &Notification,
        socket: &OwnedFd,
        family: AddressFamily,
        address: &[u8],
    ) -> io::Result<Reply> {
        let tcp = rustix::net::sockopt::socket_type(socket)? == SocketType::STREAM
            && rustix::net::sockopt::socket_protocol(socket)?
                .is_none_or(|p| p == rustix::net::ipproto::TCP);
        let to = match parse_ip(address) {
            Some(to) if tcp => to,
            // Datagrams, other protocols and AF_UNSPEC stay in the tool's namespace.
            _ => return Ok(done(notify::connect_raw(socket.as_fd(), address))),
        };
        if to.port() == 53 && self.egress.is_local(to) {
            // DNS over TCP, to the resolver the sandbox's resolv.conf names.
            return match self.egress.dns.first() {
                Some(&resolver) => self.connect_host(n, socket, resolver),
                None => Ok(Reply::Error(libc::ECONNREFUSED)),
            };
        }
        if self.egress.is_local(to) {
            return Ok(done(notify::connect_raw(socket.as_fd(), address)));
        }
        if let Err(why) = self.egress.check(to, true) {
            eprintln!("toolhost sandbox: refused a connection to {to}: {why}");
            return Ok(Reply::Error(libc::EACCES));
        }
        // An IPv6 socket may connect to an IPv4 host; the replacement keeps the family.
        let to = match (family == AddressFamily::INET6, to) {
            (true, SocketAddr::V4(v4)) => {
                SocketAddr::V6(SocketAddrV6::new(v4.ip().to_ipv6_mapped(), v4.port(), 0, 0))
            }
            (_, to) => to,
        };
        self.connect_host(n, socket, to)
    }

    /// Connects a socket of ours on the host's network to `to` and gives it to the tool
    /// in place of `socket`, with its blocking mode and the options tools set before
    /// connecting.
    fn connect_host(
        &self,
        n: &Notification,
        socket: &OwnedFd,
        to: SocketAddr,
    ) -> io::Result<Reply> {
        let nonblocking = rustix::fs::fcntl_getfl(socket)?.contains(rustix::fs::OFlags::NONBLOCK);
        let family = match to {
            SocketAddr::V4(_) => AddressFamily::INET,
            SocketAddr::V6(_) => AddressFamily::INET6,
        };
        let host = rustix::net::socket_with(
            family,
            SocketType::STREAM,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            None,
        )?;
        copy_options(socket, &host);
        let reply = match rustix::net::connect(&host, &to) {
            Ok(()) => Reply::Value(0),
            Err(rustix::io::Errno::INPROGRESS) if nonblocking => Reply::Error(libc::EINPROGRESS),
            Err(rustix::io::Errno::INPROGRESS) => match wait_connected(&host) {
                Ok(()) => Reply::Value(0),
                Err(e) => return Ok(Reply::Error(e.raw_os_error().unwrap_or(libc::ETIMEDOUT))),
            },
            Err(e) => return Ok(Reply::Error(e.raw_os_error())),
        };
        if !nonblocking {
            let flags = rustix::fs::fcntl_getfl(&host)? - rustix::fs::OFlags::NONBLOCK;
            rustix::fs::fcntl_setfl(&host, flags)?;
        }
        notify::replace_descriptor(self.listener.as_fd(), n.id, host.as_fd(), n.args[0] as i32)?;
        Ok(reply)
    }

    /// A Unix socket's path means what it means to the tool. The supervisor shares the
    /// tool's mount namespace, and `pivot_root` moved its root along with PID 1's: an
    /// absolute path resolves the same for both (checked, not assumed), and a relative
    /// one is made absolute with the tool's working directory. Abstract names belong to
    /// the socket's network namespace, the tool's own.
    fn connect_path(
        &self,
        n: &Notification,
        socket: &OwnedFd,
        address: &[u8],
    ) -> io::Result<Reply> {
        const SUN_PATH: usize = 2;
        let path = match address.get(SUN_PATH..) {
            Some(rest @ [first, ..]) if *first != 0 => {
                rest.split(|&b| b == 0).next().unwrap_or_default()
            }
            // Abstract, unnamed or malformed: the kernel judges it in the tool's namespace.
            _ => return Ok(done(notify::connect_raw(socket.as_fd(), address))),
        };
        let tool_root = rustix::fs::statat(
            &self.proc,
            format!("{}/root/", n.pid),
            rustix::fs::AtFlags::empty(),
        )?;
        let our_root = rustix::fs::stat("/")?;
        if (tool_root.st_dev, tool_root.st_ino) != (our_root.st_dev, our_root.st_ino) {
            eprintln!(
                "toolhost sandbox: refused a Unix socket connection: the supervisor does not share the tool's root"
            );
            return Ok(Reply::Error(libc::EACCES));
        }
        let mut absolute = Vec::new();
        if path.first() != Some(&b'/') {
            let cwd = rustix::fs::readlinkat(&self.proc, format!("{}/cwd", n.pid), Vec::new())?;
            absolute.extend(cwd.as_bytes());
            absolute.push(b'/');
        }
        absolute.extend(path);
        let mut rewritten = address[..SUN_PATH].to_vec();
        rewritten.extend(&absolute);
        rewritten.push(0);
        if rewritten.len() > std::mem::size_of::<libc::sockaddr_un>() {
            return Ok(Reply::Error(libc::ENAMETOOLONG));
        }
        Ok(done(notify::connect_raw(socket.as_fd(), &rewritten)))
    }
}

/// Waits for a non-blocking connect to finish, as a blocking one would.
fn wait_connected(socket: &OwnedFd) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let timeout = Timespec {
        tv_sec: BLOCKING_CONNECT.as_secs() as i64,
        tv_nsec: 0,
    };
    let mut fds = [PollFd::new(socket, PollFlags::OUT)];
    loop {
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) => return Err(io::Error::from_raw_os_error(libc::ETIMEDOUT)),
            Ok(_) => break,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    rustix::net::sockopt::socket_error(socket)?.map_err(io::Error::from)
}

fn done(result: io::Result<()>) -> Reply {
    match result {
        Ok(()) => Reply::Value(0),
        Err(e) => Reply::Error(e.raw_os_error().unwrap_or(libc::EINVAL)),
    }
}

fn pidfd_of(tid: u32) -> io::Result<OwnedFd> {
    let pid = i32::try_from(tid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
    // A thread's own pidfd needs Linux 6.9; before that only the process leader has one.
    rustix::process::pidfd_open(pid, PidfdFlags::from_bits_retain(PIDFD_THREAD))
        .or_else(|_| rustix::process::pidfd_open(pid, PidfdFlags::empty()))
        .map_err(io::Error::from)
}

/// A `sockaddr_in` or `sockaddr_in6` in the kernel's layout; `None` for anything else.
fn parse_ip(bytes: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]));
    let port = u16::from_be_bytes([*bytes.get(2)?, *bytes.get(3)?]);
    match family {
        libc::AF_INET if bytes.len() >= 16 => {
            let ip: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
            Some(SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(ip), port)))
        }
        libc::AF_INET6 if bytes.len() >= 24 => {
            let flow = u32::from_be_bytes(bytes.get(4..8)?.try_into().ok()?);
            let ip: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
            let scope = bytes
                .get(24..28)
                .and_then(|s| s.try_into().ok())
                .map(u32::from_ne_bytes)
                .unwrap_or(0);
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(ip),
                port,
                flow,
                scope,
            )))
        }
        _ => None,
    }
}

/// Options a tool commonly sets before it connects; the rest it can set afterwards.
fn copy_options(from: &OwnedFd, to: &OwnedFd) {
    use rustix::net::sockopt as o;
    if let Ok(v) = o::tcp_nodelay(from) {
        let _ = o::set_tcp_nodelay(to, v);
    }
    if let Ok(v) = o::socket_keepalive(from) {
        let _ = o::set_socket_keepalive(to, v);
    }
    if let Ok(v) = o::socket_linger(from) {
        let _ = o::set_socket_linger(to, v);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn bytes_of(addr: SocketAddr) -> Vec<u8> {
        let mut b = Vec::new();
        match addr {
            SocketAddr::V4(v4) => {
                b.extend((libc::AF_INET as u16).to_ne_bytes());
                b.extend(v4.port().to_be_bytes());
                b.extend(v4.ip().octets());
                b.extend([0; 8]);
            }
            SocketAddr::V6(v6) => {
                b.extend((libc::AF_INET6 as u16).to_ne_bytes());
                b.extend(v6.port().to_be_bytes());
                b.extend(v6.flowinfo().to_be_bytes());
                b.extend(v6.ip().octets());
                b.extend(v6.scope_id().to_ne_bytes());
            }
        }
        b
    }

    #[test]
    fn reads_addresses_in_the_kernels_layout() {
        for s in [
            "127.0.0.1:8080",
            "93.184.216.34:443",
            "[::1]:80",
            "[fe80::1%2]:22",
        ] {
            let addr: SocketAddr = s.parse().unwrap();
            assert_eq!(parse_ip(&bytes_of(addr)), Some(addr), "{s}");
        }
        assert_eq!(parse_ip(&[1, 0, b'/', b't']), None);
        assert_eq!(parse_ip(&bytes_of("1.2.3.4:5".parse().unwrap())[..8]), None);
        assert_eq!(parse_ip(&[]), None);
    }
}
