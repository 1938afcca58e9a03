//! `toolhost serve`'s connections, accepted and served here rather than by `axum::serve`,
//! which has neither timeouts nor caps: a client that can reach the port could otherwise
//! hold sockets open for ever and use up the process's file descriptors.
//!
//! - Timeouts. A connection between requests must send the next request's headers
//!   within `header_timeout` of their first byte, and is closed after `idle_timeout`
//!   without a byte (the keep-alive limit). A request body must arrive whole within
//!   `body_timeout` of its headers. Responses (long calls, event streams) have no deadline
//!   here. hyper's own header timeout is off: it runs from the end of the previous
//!   response, so it would also be the keep-alive limit.
//! - Caps. At most `max_connections` are open, `max_connections_per_ip` from one client
//!   address (an IPv6 /64 counts as one address). A newcomer at a cap takes the place of
//!   the connection idle the longest of those it competes with: one with no request in
//!   progress (silent, headers half-sent, or kept alive between requests). Only when all
//!   of them are in a request is the newcomer closed at once. Sockets that never complete
//!   a request therefore cannot lock anyone out.
//! - File descriptors. [`raise_fd_limit`] lifts the soft limit to the hard one, and
//!   [`ConnectionLimits::within_fds`] keeps the cap below it, with room for tool workers.

mod caps;
mod deadlines;

use std::convert::Infallible;
use std::future::poll_fn;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::throttle::Throttle;
use caps::{Admitted, Registry};
use deadlines::{InRequest, RequestBody, Watch, Watched};

/// How `serve` bounds connections. Every value must be above zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once; a newcomer beyond evicts the idlest, or is closed when
    /// every open one is in a request.
    pub max_connections: usize,
    /// Connections open at once from one client address, so one client cannot take them all.
    pub max_connections_per_ip: usize,
    /// From a request's first byte to the end of its headers.
    pub header_timeout: Duration,
    /// From the end of a request's headers to the end of its body.
    pub body_timeout: Duration,
    /// How long a connection may stay open without a request (keep-alive).
    pub idle_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 1024,
            max_connections_per_ip: 128,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

impl ConnectionLimits {
    /// `[serve]`'s connection limits; those it leaves unset take the defaults.
    pub fn from_config(serve: &toolhost_host::ServeConfig) -> ConnectionLimits {
        let d = ConnectionLimits::default();
        ConnectionLimits {
            max_connections: serve.max_connections.unwrap_or(d.max_connections),
            max_connections_per_ip: serve
                .max_connections_per_ip
                .unwrap_or(d.max_connections_per_ip),
            header_timeout: serve.header_timeout.unwrap_or(d.header_timeout),
            body_timeout: serve.body_timeout.unwrap_or(d.body_timeout),
            idle_timeout: serve.idle_timeout.unwrap_or(d.idle_timeout),
        }
    }

    /// These limits with `max_connections` lowered, if need be, to leave a quarter of
    /// `fd_limit` (at least 64) to everything else: tool workers and their sockets,
    /// sandbox helpers, file watches, logs.
    pub fn within_fds(mut self, fd_limit: u64) -> ConnectionLimits {
        let spare = (fd_limit / 4).max(64);
        let room = usize::try_from(fd_limit.saturating_sub(spare))
            .unwrap_or(usize::MAX)
            .max(1);
        self.max_connections = self.max_connections.min(room);
        self
    }
}

/// Raises the soft limit on open files to the hard limit (so that the connection cap,
/// not the limit, is what binds); returns the limit now in force.
pub fn raise_fd_limit() -> u64 {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let soft = limit.current.unwrap_or(u64::MAX);
    if limit.current == limit.maximum {
        return soft;
    }
    let raised = rustix::process::Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => limit.maximum.unwrap_or(u64::MAX),
        Err(e) => {
            tracing::warn!("cannot raise the open-file limit from {soft}: {e}");
            soft
        }
    }
}

/// Serves `app` on `listener` until `stop`, then lets open requests finish for up to
/// `shutdown_wait` before closing their connections.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
    shutdown_wait: Duration,
) {
    let registry = Arc::new(Registry::new(limits));
    let mut accept_errors = Throttle::default();
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            () = stop.cancelled() => break,
        };
        let (tcp, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors (or memory): an idle connection gives its own back.
                let exhausted = is_exhaustion(&e);
                let freed = exhausted && registry.evict_idlest();
                if let Some(n) = accept_errors.note(Instant::now()) {
                    tracing::warn!(
                        "cannot accept connections ({n} time(s) in the last minute): {e}"
                    );
                }
                if !freed && !is_transient(&e) {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(50)) => {}
                        () = stop.cancelled() => break,
                    }
                }
                continue;
            }
        };
        let Some(admitted) = registry.admit(client_of(peer)) else {
            continue;
        };
        // Small JSON-RPC messages must not wait for delayed ACKs (Nagle): no delay.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        tokio::spawn(connection(admitted, tcp, peer, app.clone(), stop.clone()));
    }
    drop(listener);
    let all_closed = registry.all_closed();
    if tokio::time::timeout(shutdown_wait, all_closed)
        .await
        .is_err()
    {
        // A client that never reads would hold a graceful shutdown open for ever.
        tracing::warn!(
            "closing connections that did not finish within {shutdown_wait:?} of shutdown"
        );
        registry.close_all();
        registry.all_closed().await;
    }
}

fn is_exhaustion(e: &std::io::Error) -> bool {
    use rustix::io::Errno;
    matches!(
        Errno::from_io_error(e),
        Some(Errno::MFILE | Errno::NFILE | Errno::NOBUFS | Errno::NOMEM)
    )
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionReset, Interrupted};
    matches!(e.kind(), ConnectionAborted | ConnectionReset | Interrupted)
}

/// The address a connection counts against: IPv4 as is (also when mapped into IPv6), IPv6
/// by its /64, which one client usually has whole.
fn client_of(peer: SocketAddr) -> IpAddr {
    match peer.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

/// One connection, served until it ends, times out, is evicted or is drained at shutdown.
async fn connection(
    admitted: Admitted,
    tcp: TcpStream,
    peer: SocketAddr,
    app: axum::Router,
    stop: CancellationToken,
) {
    let watch = Arc::clone(&admitted.watch);
    let io = TokioIo::new(Watched {
        io: tcp,
        watch: Arc::clone(&watch),
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.header_read_timeout(None::<Duration>);
    let service = Counted {
        app,
        watch: Arc::clone(&watch),
    };
    let conn = builder.serve_connection(io, service);
    let mut conn = pin!(conn);
    let mut expired = pin!(watch.expired());
    let mut draining = false;
    loop {
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(%peer, "connection ended: {e}");
                }
                break;
            }
            why = &mut expired => {
                tracing::debug!(%peer, "closing the connection: {why}");
                break;
            }
            () = admitted.close.cancelled() => break,
            () = stop.cancelled(), if !draining => {
                draining = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The router, with each request counted and its body timed on its connection's watch.
struct Counted {
    app: axum::Router,
    watch: Arc<Watch>,
}

impl hyper::service::Service<Request<Incoming>> for Counted {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        use tower_service::Service;
        let in_request = InRequest::start(Arc::clone(&self.watch));
        let req = req.map(|body| RequestBody::new(body, Arc::clone(&self.watch)));
        let mut app = self.app.clone();
        Box::pin(async move {
            let ready =
                poll_fn(|cx| Service::<Request<RequestBody>>::poll_ready(&mut app, cx)).await;
            let res = match ready {
                Ok(()) => app.call(req).await,
                Err(e) => Err(e),
            };
            let res = match res {
                Ok(res) => res,
                Err(never) => match never {},
            };
            Ok(res.map(|body| {
                // The request is over once its response body is dropped.
                crate::holding_body::HoldingBody::wrap(body, in_request)
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn clients_are_addresses_and_ipv6_64s() {
        let c = |s: &str| client_of(s.parse().unwrap());
        assert_eq!(c("10.0.0.1:5"), "10.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(c("[::ffff:10.0.0.1]:5"), c("10.0.0.1:6"));
        assert_eq!(c("[2001:db8:1:2:aaaa::1]:5"), c("[2001:db8:1:2:bbbb::9]:5"));
        assert_ne!(c("[2001:db8:1:2::1]:5"), c("[2001:db8:1:3::1]:5"));
    }

    #[test]
    fn the_cap_leaves_room_for_everything_else() {
        let limits = |max| ConnectionLimits {
            max_connections: max,
            ..ConnectionLimits::default()
        };
        assert_eq!(limits(1024).within_fds(256).max_connections, 192);
        assert_eq!(limits(1024).within_fds(1 << 20).max_connections, 1024);
        assert_eq!(limits(1024).within_fds(10).max_connections, 1);
    }
}
