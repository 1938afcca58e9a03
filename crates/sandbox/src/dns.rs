//! The networked sandbox's DNS server: queries sent to 127.0.0.1:53 inside the sandbox
//! (what its resolv.conf names) are relayed to the real resolvers from the host's network
//! and the answers sent back. The tool itself never holds a socket that could send
//! datagrams anywhere else. DNS over TCP goes through the supervisor instead
//! ([`super::supervise`]).

use std::net::SocketAddr;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};

/// How long one resolver has to answer.
const TIMEOUT: Duration = Duration::from_secs(2);
const MAX_MESSAGE: usize = 65_535;

/// Relays one query waiting on `socket` (bound inside the sandbox) to `resolvers`, and
/// the answer back. Runs on the first stage's only thread, between connects.
pub(super) fn relay_one(socket: BorrowedFd<'_>, resolvers: &[SocketAddr]) {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let Ok((n, _, Some(from))) = rustix::net::recvfrom(socket, &mut buf, RecvFlags::DONTWAIT)
    else {
        return;
    };
    let query = &buf[..n.min(buf.len())];
    if let Some(answer) = ask(resolvers, query) {
        let _ = rustix::net::sendto(socket, &answer, SendFlags::DONTWAIT, &from);
    }
}

/// The first answer to `query` from the resolvers, tried in order.
fn ask(resolvers: &[SocketAddr], query: &[u8]) -> Option<Vec<u8>> {
    let id = query.get(..2)?;
    for resolver in resolvers {
        let family = match resolver {
            SocketAddr::V4(_) => AddressFamily::INET,
            SocketAddr::V6(_) => AddressFamily::INET6,
        };
        let Ok(socket) = rustix::net::socket(family, SocketType::DGRAM, None) else {
            continue;
        };
        if rustix::net::connect(&socket, resolver).is_err()
            || rustix::net::sockopt::set_socket_timeout(
                &socket,
                rustix::net::sockopt::Timeout::Recv,
                Some(TIMEOUT),
            )
            .is_err()
            || rustix::net::send(&socket, query, SendFlags::empty()).is_err()
        {
            continue;
        }
        let mut answer = vec![0u8; MAX_MESSAGE];
        // A connected socket only hears from the resolver; the id pairs the answer with
        // this query.
        while let Ok(n) = rustix::net::recv(socket.as_fd(), &mut answer, RecvFlags::empty()) {
            let n = n.0.min(answer.len());
            if answer.get(..2) == Some(id) {
                answer.truncate(n);
                return Some(answer);
            }
        }
    }
    None
}
