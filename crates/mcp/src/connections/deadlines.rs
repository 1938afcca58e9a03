//! One connection's deadlines: it is watched from its socket (bytes arriving), its requests
//! (from headers to the end of the response) and their bodies, and its task closes it when
//! the deadline of its phase passes.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Bytes;
use http_body::Frame;
use hyper::body::Incoming;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use super::ConnectionLimits;

/// Why a connection was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expiry {
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
pub(super) struct Watch {
    limits: ConnectionLimits,
    phase: Mutex<Phase>,
    changed: Notify,
}

impl Watch {
    pub(super) fn new(limits: ConnectionLimits) -> Watch {
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
    pub(super) fn idle_since(&self) -> Option<Instant> {
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
    pub(super) async fn expired(&self) -> Expiry {
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
pub(super) struct InRequest(Arc<Watch>);

impl InRequest {
    pub(super) fn start(watch: Arc<Watch>) -> InRequest {
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
pub(super) struct RequestBody {
    inner: Incoming,
    watch: Arc<Watch>,
    reading: bool,
}

impl RequestBody {
    pub(super) fn new(inner: Incoming, watch: Arc<Watch>) -> RequestBody {
        let reading = !http_body::Body::is_end_stream(&inner);
        if reading {
            // A timeout beyond the clock's range is no timeout (not a panic).
            let now = Instant::now();
            let at = now
                .checked_add(watch.limits.body_timeout)
                .unwrap_or(now + std::time::Duration::from_secs(365 * 24 * 3600));
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

/// The socket, telling its watch when bytes arrive.
pub(super) struct Watched {
    pub(super) io: TcpStream,
    pub(super) watch: Arc<Watch>,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn deadlines_follow_the_phase() {
        let w = Arc::new(Watch::new(ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            ..ConnectionLimits::default()
        }));
        assert_eq!(w.deadline().unwrap().1, Expiry::Idle);
        w.bytes_read();
        assert_eq!(w.deadline().unwrap().1, Expiry::Header);
        let req = InRequest::start(Arc::clone(&w));
        assert_eq!(w.deadline(), None);
        w.update(|p| p.body_deadline = Some(Instant::now()));
        assert_eq!(w.expired().await, Expiry::Body);
        w.update(|p| p.body_deadline = None);
        drop(req);
        assert_eq!(w.deadline().unwrap().1, Expiry::Idle);
    }
}
