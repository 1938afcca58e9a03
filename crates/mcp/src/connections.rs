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

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::poll_fn;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{Request, Response};
use http_body::Frame;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::throttle::Throttle;

/// How `serve` bounds connections. Every value must be above zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    pub max_connections: usize,
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
                Body::new(ResponseBody {
                    inner: body,
                    _in_request: in_request,
                })
            }))
        })
    }
}

/// Why a connection was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    Header,
    Body,
    Idle,
}

impl std::fmt::Display for Expiry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Expiry::Header => "request headers not received in time",
            Expiry::Body => "request body not received in time",
            Expiry::Idle => "idle",
        })
    }
}

/// Where one connection stands, for its deadlines and for eviction.
struct Phase {
    /// Requests whose response has not ended.
    requests: usize,
    /// Since when the connection has had no request.
    idle_since: Instant,
    /// When the first byte of the next request's headers arrived.
    header_since: Option<Instant>,
    /// When the body being read must have arrived.
    body_deadline: Option<Instant>,
}

/// One connection's phase, updated by its I/O, its requests and their bodies; read by its
/// own task (deadlines) and by the registry (eviction).
struct Watch {
    limits: ConnectionLimits,
    phase: Mutex<Phase>,
    changed: Notify,
}

impl Watch {
    fn new(limits: ConnectionLimits) -> Watch {
        Watch {
            limits,
            phase: Mutex::new(Phase {
                requests: 0,
                idle_since: Instant::now(),
                header_since: None,
                body_deadline: None,
            }),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Phase> {
        self.phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn update(&self, f: impl FnOnce(&mut Phase)) {
        f(&mut self.lock());
        self.changed.notify_one();
    }

    /// Bytes arrived: between requests, they begin the next request's headers.
    fn bytes_read(&self) {
        let mut p = self.lock();
        if p.requests == 0 && p.header_since.is_none() {
            p.header_since = Some(Instant::now());
            drop(p);
            self.changed.notify_one();
        }
    }

    /// Since when the connection has had no request in progress; `None` while it has one.
    fn idle_since(&self) -> Option<Instant> {
        let p = self.lock();
        (p.requests == 0).then_some(p.idle_since)
    }

    fn deadline(&self) -> Option<(Instant, Expiry)> {
        let p = self.lock();
        if let Some(at) = p.body_deadline {
            return Some((at, Expiry::Body));
        }
        if p.requests > 0 {
            return None;
        }
        Some(match p.header_since {
            Some(since) => (since + self.limits.header_timeout, Expiry::Header),
            None => (p.idle_since + self.limits.idle_timeout, Expiry::Idle),
        })
    }

    /// Resolves when the current deadline passes with nothing having moved it.
    async fn expired(&self) -> Expiry {
        loop {
            let changed = self.changed.notified();
            match self.deadline() {
                Some((at, why)) if at <= Instant::now() => return why,
                Some((at, _)) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at.into()) => {}
                        () = changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

/// Counts a request from its headers until its response has been sent (or dropped).
struct InRequest(Arc<Watch>);

impl InRequest {
    fn start(watch: Arc<Watch>) -> InRequest {
        watch.update(|p| {
            p.requests += 1;
            p.header_since = None;
        });
        InRequest(watch)
    }
}

impl Drop for InRequest {
    fn drop(&mut self) {
        self.0.update(|p| {
            p.requests = p.requests.saturating_sub(1);
            if p.requests == 0 {
                p.idle_since = Instant::now();
                p.header_since = None;
            }
        });
    }
}

/// A request body, due whole within `body_timeout` of its headers.
struct RequestBody {
    inner: Incoming,
    watch: Arc<Watch>,
    reading: bool,
}

impl RequestBody {
    fn new(inner: Incoming, watch: Arc<Watch>) -> RequestBody {
        let reading = !http_body::Body::is_end_stream(&inner);
        if reading {
            let at = Instant::now() + watch.limits.body_timeout;
            watch.update(|p| p.body_deadline = Some(at));
        }
        RequestBody {
            inner,
            watch,
            reading,
        }
    }

    fn done(&mut self) {
        if std::mem::take(&mut self.reading) {
            self.watch.update(|p| p.body_deadline = None);
        }
    }
}

impl http_body::Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_frame(cx);
        match &poll {
            Poll::Ready(None | Some(Err(_))) => this.done(),
            Poll::Ready(Some(Ok(_))) if this.inner.is_end_stream() => this.done(),
            _ => {}
        }
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        self.done();
    }
}

/// A response body; the request it answers is over when it is dropped.
struct ResponseBody {
    inner: Body,
    _in_request: InRequest,
}

impl http_body::Body for ResponseBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// The socket, telling its watch when bytes arrive.
struct Watched {
    io: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(poll, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.watch.bytes_read();
        }
        poll
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

struct Open {
    client: IpAddr,
    watch: Arc<Watch>,
    close: CancellationToken,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    open: HashMap<u64, Open>,
    per_client: HashMap<IpAddr, usize>,
    evicted: Throttle,
    refused: Throttle,
}

impl Table {
    fn remove(&mut self, id: u64) -> Option<Open> {
        let open = self.open.remove(&id)?;
        if let Some(n) = self.per_client.get_mut(&open.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_client.remove(&open.client);
            }
        }
        Some(open)
    }

    /// Closes the connection (of `client`, or of anyone) idle the longest; false if every
    /// one is in a request.
    fn evict_idlest(&mut self, client: Option<IpAddr>) -> bool {
        let idlest = self
            .open
            .iter()
            .filter(|(_, o)| client.is_none_or(|c| o.client == c))
            .filter_map(|(id, o)| o.watch.idle_since().map(|since| (since, *id)))
            .min();
        let Some((_, id)) = idlest else {
            return false;
        };
        if let Some(open) = self.remove(id) {
            open.close.cancel();
        }
        true
    }
}

/// Every open connection, by client address, and the caps on them.
struct Registry {
    limits: ConnectionLimits,
    table: Mutex<Table>,
    emptied: Notify,
}

impl Registry {
    fn new(mut limits: ConnectionLimits) -> Registry {
        limits.max_connections = limits.max_connections.max(1);
        limits.max_connections_per_ip = limits
            .max_connections_per_ip
            .clamp(1, limits.max_connections);
        Registry {
            limits,
            table: Mutex::new(Table::default()),
            emptied: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Room for a connection from `client`, made by evicting idle ones if need be; `None`
    /// (the newcomer is to be closed) when every connection it competes with is in a
    /// request.
    fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Admitted> {
        let mut t = self.lock();
        let now = Instant::now();
        let client_full =
            t.per_client.get(&client).copied().unwrap_or(0) >= self.limits.max_connections_per_ip;
        let mut evicted = false;
        let mut room = true;
        if client_full {
            room = t.evict_idlest(Some(client));
            evicted = room;
        }
        if room && t.open.len() >= self.limits.max_connections {
            room = t.evict_idlest(None);
            evicted |= room;
        }
        if !room {
            if let Some(n) = t.refused.note(now) {
                tracing::warn!(
                    "closed {n} new connection(s) at once: every open connection they compete with was in a request ([serve] max_connections = {}, max_connections_per_ip = {})",
                    self.limits.max_connections,
                    self.limits.max_connections_per_ip
                );
            }
            return None;
        }
        if evicted && let Some(n) = t.evicted.note(now) {
            tracing::warn!(
                "closed {n} idle connection(s) to make room for new ones ([serve] max_connections = {}, max_connections_per_ip = {})",
                self.limits.max_connections,
                self.limits.max_connections_per_ip
            );
        }
        let id = t.next_id;
        t.next_id += 1;
        let watch = Arc::new(Watch::new(self.limits.clone()));
        let close = CancellationToken::new();
        t.open.insert(
            id,
            Open {
                client,
                watch: Arc::clone(&watch),
                close: close.clone(),
            },
        );
        *t.per_client.entry(client).or_insert(0) += 1;
        Some(Admitted {
            registry: Arc::clone(self),
            id,
            watch,
            close,
        })
    }

    fn evict_idlest(&self) -> bool {
        self.lock().evict_idlest(None)
    }

    fn close_all(&self) {
        for open in self.lock().open.values() {
            open.close.cancel();
        }
    }

    async fn all_closed(&self) {
        loop {
            let mut emptied = pin!(self.emptied.notified());
            emptied.as_mut().enable();
            if self.lock().open.is_empty() {
                return;
            }
            emptied.await;
        }
    }
}

/// A connection's place in the registry, given back when its task ends.
struct Admitted {
    registry: Arc<Registry>,
    id: u64,
    watch: Arc<Watch>,
    close: CancellationToken,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut t = self.registry.lock();
        t.remove(self.id);
        if t.open.is_empty() {
            self.registry.emptied.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn limits(max: usize, per_ip: usize) -> ConnectionLimits {
        ConnectionLimits {
            max_connections: max,
            max_connections_per_ip: per_ip,
            ..ConnectionLimits::default()
        }
    }

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
        assert_eq!(limits(1024, 8).within_fds(256).max_connections, 192);
        assert_eq!(limits(1024, 8).within_fds(1 << 20).max_connections, 1024);
        assert_eq!(limits(1024, 8).within_fds(10).max_connections, 1);
    }

    #[tokio::test]
    async fn a_newcomer_evicts_the_idlest_or_is_refused_when_all_are_busy() {
        let r = Arc::new(Registry::new(limits(3, 2)));
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let a1 = r.admit(a).unwrap();
        let a2 = r.admit(a).unwrap();
        let _busy = InRequest::start(Arc::clone(&a2.watch));
        // a is at its cap of 2: its idle a1 makes room, not b's connections.
        let a3 = r.admit(a).unwrap();
        assert!(a1.close.is_cancelled());
        let b1 = r.admit(b).unwrap();
        // Full (3): b2 takes the place of the idlest overall (a3), never of busy a2.
        let _b2 = r.admit(b).unwrap();
        assert!(a3.close.is_cancelled() && !a2.close.is_cancelled());
        let _busy_b1 = InRequest::start(Arc::clone(&b1.watch));
        let _busy_b2 = InRequest::start(Arc::clone(&_b2.watch));
        assert!(r.admit(a).is_none(), "every connection is in a request");
        drop(a1);
        drop(a3);
        assert_eq!(r.lock().open.len(), 3);
    }

    #[tokio::test]
    async fn deadlines_follow_the_phase() {
        let w = Watch::new(ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            ..ConnectionLimits::default()
        });
        assert_eq!(w.deadline().unwrap().1, Expiry::Idle);
        w.bytes_read();
        assert_eq!(w.deadline().unwrap().1, Expiry::Header);
        let w = Arc::new(w);
        let req = InRequest::start(Arc::clone(&w));
        assert_eq!(w.deadline(), None);
        w.update(|p| p.body_deadline = Some(Instant::now()));
        assert_eq!(w.expired().await, Expiry::Body);
        w.update(|p| p.body_deadline = None);
        drop(req);
        assert_eq!(w.deadline().unwrap().1, Expiry::Idle);
    }
}
