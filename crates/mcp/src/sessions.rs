//! 2025-11-25 sessions (those begun by `initialize`): each belongs to the user who opened
//! it, and they are capped per user and overall.
//!
//! rmcp's [`LocalSessionManager`] keeps the sessions; [`OwnedSessions`] wraps it to record
//! each session's owner in a [`SessionBook`] shared by every endpoint of the server.
//! rmcp's `SessionManager` trait is not told who asks, so [`bind_sessions`] (an HTTP
//! middleware in front of each endpoint) names the caller in a task-local [`OPENER`] for
//! the request's duration, and answers a request naming a session that is not the caller's
//! exactly as rmcp answers an unknown one.
//!
//! At the caps: a user who already holds `max_sessions_per_user` sessions loses the least
//! recently used one to the new one (a client that leaks sessions only hurts itself); when
//! the server holds `max_sessions`, `initialize` gets `503` until some end.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use crate::throttle::Throttle;
use toolhost_host::{Caller, ServeConfig};

/// How many 2025-11-25 sessions the server keeps, and for how long an idle one lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLimits {
    /// Sessions of all users together; `initialize` gets `503` beyond.
    pub max_sessions: usize,
    /// Sessions of one user; a new one ends the user's least recently used.
    pub max_sessions_per_user: usize,
    /// A session with no request for this long ends.
    pub idle_timeout: Duration,
}

impl SessionLimits {
    /// `[serve]`'s session limits; those it leaves unset take the defaults.
    pub(crate) fn from_config(serve: &ServeConfig) -> SessionLimits {
        let d = SessionLimits::default();
        SessionLimits {
            max_sessions: serve.max_sessions.unwrap_or(d.max_sessions),
            max_sessions_per_user: serve
                .max_sessions_per_user
                .unwrap_or(d.max_sessions_per_user),
            idle_timeout: serve.session_idle_timeout.unwrap_or(d.idle_timeout),
        }
    }
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            max_sessions: 512,
            max_sessions_per_user: 32,
            idle_timeout: Duration::from_secs(300),
        }
    }
}

/// Who opens or names sessions in the current request: the authenticated user, or `""`
/// for the one default user of a server without tokens.
pub(crate) struct Opener {
    pub(crate) user: Arc<str>,
    /// Set by `create_session` when the server is full, so the middleware can answer 503
    /// instead of the 500 rmcp makes of any error.
    refused: AtomicBool,
}

tokio::task_local! {
    /// The request's [`Opener`], for the session manager (which rmcp calls on the
    /// request's own task).
    pub(crate) static OPENER: Arc<Opener>;
}

/// The owner and use of one session.
struct Held {
    owner: Arc<str>,
    /// What the session is kept and relayed under (see `shared_sessions::session_key`).
    key: String,
    /// Which endpoint's manager holds it (a session is unknown at every other endpoint).
    endpoint: usize,
    last_used: Instant,
    manager: Arc<LocalSessionManager>,
}

#[derive(Default)]
struct Book {
    held: HashMap<SessionId, Held>,
    /// Sessions per owner, counting those being created.
    per_user: HashMap<Arc<str>, usize>,
    /// Every session, counting those being created.
    total: usize,
    evicted: Throttle,
    refused: Throttle,
}

impl Book {
    fn release(&mut self, owner: &Arc<str>) {
        self.total = self.total.saturating_sub(1);
        if let Some(n) = self.per_user.get_mut(owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_user.remove(owner);
            }
        }
    }

    fn forget(&mut self, id: &SessionId) -> Option<Held> {
        let held = self.held.remove(id)?;
        self.release(&held.owner);
        Some(held)
    }
}

/// Every session of the server: its owner, endpoint and last use; the counts the caps
/// apply to.
pub(crate) struct SessionBook {
    limits: SessionLimits,
    book: Mutex<Book>,
}

/// What a request's session id is to its caller at one endpoint.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Standing {
    Own,
    /// Another user's, or another endpoint's.
    Foreign,
    Unknown,
}

impl SessionBook {
    pub(crate) fn new(limits: SessionLimits) -> Arc<SessionBook> {
        Arc::new(SessionBook {
            limits,
            book: Mutex::new(Book::default()),
        })
    }

    pub(crate) fn limits(&self) -> &SessionLimits {
        &self.limits
    }

    fn lock(&self) -> MutexGuard<'_, Book> {
        // The book stays consistent at every step: a panic elsewhere leaves it usable.
        self.book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whose session `id` is; marks it used when it is the caller's.
    pub(crate) fn standing(&self, id: &str, user: &str, endpoint: usize) -> Standing {
        let mut book = self.lock();
        match book.held.get_mut(id) {
            None => Standing::Unknown,
            Some(h) if &*h.owner == user && h.endpoint == endpoint => {
                h.last_used = Instant::now();
                Standing::Own
            }
            Some(_) => Standing::Foreign,
        }
    }

    /// Makes room for one more session of `user`: ends their least recently used session
    /// when they are at their cap (returned, for the caller to close outside the lock),
    /// refuses when the server is full. On success a slot is reserved for the session.
    fn reserve(&self, user: &Arc<str>) -> Result<Option<(SessionId, Held)>, Full> {
        let mut book = self.lock();
        let mine = book.per_user.get(user).copied().unwrap_or(0);
        let mut evicted = None;
        if mine >= self.limits.max_sessions_per_user {
            let oldest = book
                .held
                .iter()
                .filter(|(_, h)| h.owner == *user)
                .min_by_key(|(_, h)| h.last_used)
                .map(|(id, _)| id.clone());
            // With none (every slot is a session still being created) the user goes over
            // the cap for a moment; their next session ends one.
            evicted = oldest.and_then(|id| book.forget(&id).map(|h| (id, h)));
            if evicted.is_some()
                && let Some(n) = book.evicted.note(Instant::now())
            {
                tracing::warn!(
                    user = %user,
                    "closed {n} least recently used session(s) of users at their limit of {} ([serve] max_sessions_per_user)",
                    self.limits.max_sessions_per_user
                );
            }
        }
        if book.total >= self.limits.max_sessions {
            if let Some(n) = book.refused.note(Instant::now()) {
                tracing::warn!(
                    "refused {n} new session(s): the server holds its limit of {} ([serve] max_sessions)",
                    self.limits.max_sessions
                );
            }
            return Err(Full);
        }
        book.total += 1;
        *book.per_user.entry(Arc::clone(user)).or_insert(0) += 1;
        Ok(evicted)
    }

    /// Whether a new session of `user` would be refused now: the server is full and they
    /// have none to give up for it.
    fn refuses(&self, user: &str) -> bool {
        let book = self.lock();
        book.total >= self.limits.max_sessions
            && book.per_user.get(user).copied().unwrap_or(0) < self.limits.max_sessions_per_user
    }

    fn unreserve(&self, user: &Arc<str>) {
        self.lock().release(user);
    }

    fn record(&self, id: SessionId, held: Held) {
        self.lock().held.insert(id, held);
    }

    fn forget(&self, id: &SessionId) {
        self.lock().forget(id);
    }

    /// The session kept under `key` here, and its manager.
    fn find(&self, key: &str) -> Option<(SessionId, Arc<LocalSessionManager>)> {
        let book = self.lock();
        book.held
            .iter()
            .find(|(_, h)| h.key == key)
            .map(|(id, h)| (id.clone(), Arc::clone(&h.manager)))
    }

    /// Hands a message relayed from another gateway (a `notifications/cancelled` for a
    /// request running here) to the session it names, if that session is held here.
    pub(crate) async fn deliver(&self, key: &str, message: &str) {
        let Some((id, manager)) = self.find(key) else {
            return;
        };
        match serde_json::from_str::<ClientJsonRpcMessage>(message) {
            Ok(message) => {
                if let Err(e) = manager.accept_message(&id, message).await {
                    tracing::debug!(session = %id, "a relayed message: {e}");
                }
            }
            Err(e) => tracing::warn!("a relayed message that is not JSON-RPC: {e}"),
        }
    }

    /// Sessions held, for tests.
    #[cfg(test)]
    fn count(&self, user: &str) -> usize {
        self.lock().per_user.get(user).copied().unwrap_or(0)
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    #[error("the server holds its maximum number of sessions ([serve] max_sessions)")]
    Full,
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// The server holds `max_sessions`.
#[derive(Debug)]
struct Full;

/// rmcp's local session manager, with each session's owner recorded in the book.
pub(crate) struct OwnedSessions {
    book: Arc<SessionBook>,
    inner: Arc<LocalSessionManager>,
    endpoint: usize,
    /// The endpoint's path (part of each session's key).
    path: String,
}

impl OwnedSessions {
    pub(crate) fn new(
        book: Arc<SessionBook>,
        inner: LocalSessionManager,
        endpoint: usize,
        path: String,
    ) -> OwnedSessions {
        OwnedSessions {
            book,
            inner: Arc::new(inner),
            endpoint,
            path,
        }
    }
}

impl OwnedSessions {
    /// The book's entry for session `id` of `owner`, held by this endpoint's manager.
    fn held(&self, owner: Arc<str>, id: &SessionId) -> Held {
        Held {
            owner,
            key: crate::shared_sessions::session_key(&self.path, id),
            endpoint: self.endpoint,
            last_used: Instant::now(),
            manager: Arc::clone(&self.inner),
        }
    }
}

impl SessionManager for OwnedSessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let opener = OPENER.try_with(Arc::clone).ok();
        let user: Arc<str> = opener
            .as_ref()
            .map_or_else(|| Arc::from(""), |o| Arc::clone(&o.user));
        let evicted = match self.book.reserve(&user) {
            Ok(evicted) => evicted,
            Err(_) => {
                if let Some(o) = &opener {
                    o.refused.store(true, Ordering::Relaxed);
                }
                return Err(SessionError::Full);
            }
        };
        if let Some((id, held)) = evicted {
            // Ends its calls and streams; its client gets 404 and may begin again.
            if let Err(e) = held.manager.close_session(&id).await {
                tracing::debug!(session = %id, "closing a session over its user's limit: {e}");
            }
        }
        match self.inner.create_session().await {
            Ok((id, transport)) => {
                self.book.record(id.clone(), self.held(user, &id));
                Ok((id, transport))
            }
            Err(e) => {
                self.book.unreserve(&user);
                Err(e.into())
            }
        }
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // Also how rmcp reports a session whose worker ended (idle expiry, shutdown).
        self.book.forget(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    /// A session opened on another gateway of the fleet, continued here: it counts
    /// against its user's caps as a new one does.
    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let user: Arc<str> = OPENER
            .try_with(|o| Arc::clone(&o.user))
            .unwrap_or_else(|_| Arc::from(""));
        let evicted = self.book.reserve(&user).map_err(|_| SessionError::Full)?;
        if let Some((old, held)) = evicted
            && let Err(e) = held.manager.close_session(&old).await
        {
            tracing::debug!(session = %old, "closing a session over its user's limit: {e}");
        }
        match self.inner.restore_session(id.clone()).await {
            Ok(RestoreOutcome::Restored(transport)) => {
                self.book.record(id.clone(), self.held(user, &id));
                Ok(RestoreOutcome::Restored(transport))
            }
            Ok(other) => {
                self.book.unreserve(&user);
                Ok(other)
            }
            Err(e) => {
                self.book.unreserve(&user);
                Err(e.into())
            }
        }
    }
}

/// The state [`bind_sessions`] needs for one endpoint.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub(crate) book: Arc<SessionBook>,
    pub(crate) index: usize,
    /// The endpoint's path.
    pub(crate) path: String,
    /// The fleet this server is a gateway of: a client's cancellation is relayed to the
    /// gateway running the request.
    pub(crate) fleet: Option<Arc<dyn toolhost_host::Fleet>>,
}

/// Lets a request through only to the caller's own sessions (any other gets rmcp's 404 for
/// an unknown session, so a stolen id tells nothing), and names the caller to
/// `create_session`. Runs after authentication.
pub(crate) async fn bind_sessions(
    State(endpoint): State<Endpoint>,
    req: Request,
    next: Next,
) -> Response {
    let user: Arc<str> = req
        .extensions()
        .get::<Caller>()
        .map_or_else(|| Arc::from(""), |c| Arc::from(c.user()));
    if let Some(id) = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        match endpoint.book.standing(id, &user, endpoint.index) {
            Standing::Own => {}
            // rmcp answers POST and GET for an unknown session with this same 404, but a
            // DELETE with 202: an answer that differed from a foreign session's would tell
            // which ids are live.
            Standing::Unknown if req.method() != Method::DELETE => {}
            Standing::Unknown | Standing::Foreign => return session_not_found(),
        }
    }
    let req = if req.method() == Method::POST
        && !req.headers().contains_key("mcp-session-id")
        && endpoint.book.refuses(&user)
    {
        // Refused here, when it can be seen coming, rather than in `create_session`: rmcp
        // would log each of those as an internal error.
        match refuse_initialize(req).await {
            Ok(req) => req,
            Err(res) => return res,
        }
    } else {
        req
    };
    let (req, relay) = match &endpoint.fleet {
        Some(_) => match relayed_part(req).await {
            Ok(split) => split,
            Err(res) => return res,
        },
        None => (req, None),
    };
    let opener = Arc::new(Opener {
        user,
        refused: AtomicBool::new(false),
    });
    let res = OPENER.scope(Arc::clone(&opener), next.run(req)).await;
    if let (Some(fleet), Some((id, message))) = (&endpoint.fleet, relay) {
        let key = crate::shared_sessions::session_key(&endpoint.path, &id);
        fleet.relay_to_session(key, message);
    }
    if opener.refused.load(Ordering::Relaxed) {
        return server_full();
    }
    res
}

/// What of a 2025-11-25 session's message to relay to the other gateways, with the request
/// back: every message that is not a request. A notification (`initialized`, `cancelled`)
/// or a response (to `roots/list`) concerns the session wherever it is held, and the
/// request it answers or cancels may run on another gateway.
async fn relayed_part(req: Request) -> Result<(Request, Option<(String, String)>), Response> {
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<String>,
        id: Option<serde_json::Value>,
    }
    let Some(id) = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return Ok((req, None));
    };
    if req.method() != Method::POST {
        return Ok((req, None));
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, crate::http::MAX_BODY_BYTES).await else {
        return Err((StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response());
    };
    let request =
        serde_json::from_slice::<Probe>(&bytes).is_ok_and(|p| p.method.is_some() && p.id.is_some());
    let relay = (!request).then(|| (id, String::from_utf8_lossy(&bytes).into_owned()));
    Ok((
        Request::from_parts(parts, axum::body::Body::from(bytes)),
        relay,
    ))
}

/// The request back if it is not an `initialize` (such as a stateless 2026-07-28 request),
/// else the answer of a full server.
async fn refuse_initialize(req: Request) -> Result<Request, Response> {
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<String>,
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, crate::http::MAX_BODY_BYTES).await else {
        return Err((StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response());
    };
    let probe = serde_json::from_slice::<Probe>(&bytes).ok();
    if probe.and_then(|p| p.method).as_deref() == Some("initialize") {
        return Err(server_full());
    }
    Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
}

/// rmcp's answer to a session it does not know (the MCP spec's 404).
fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

fn server_full() -> Response {
    let mut res = (
        StatusCode::SERVICE_UNAVAILABLE,
        "Service Unavailable: the server holds its maximum number of sessions; try again later, or use the stateless 2026-07-28 revision, which needs no session",
    )
        .into_response();
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn user(name: &str) -> Arc<str> {
        Arc::from(name)
    }

    fn held(owner: &str, at: Instant) -> Held {
        Held {
            owner: user(owner),
            key: String::new(),
            endpoint: 0,
            last_used: at,
            manager: Arc::new(LocalSessionManager::default()),
        }
    }

    #[test]
    fn a_user_at_the_cap_loses_the_least_recently_used_session() {
        let book = SessionBook::new(SessionLimits {
            max_sessions: 10,
            max_sessions_per_user: 2,
            idle_timeout: Duration::from_secs(1),
        });
        let ada = user("ada");
        let now = Instant::now();
        for (id, age) in [("s1", 3), ("s2", 5)] {
            assert!(book.reserve(&ada).unwrap().is_none());
            book.record(Arc::from(id), held("ada", now - Duration::from_secs(age)));
        }
        let (gone, _) = book.reserve(&ada).unwrap().unwrap();
        assert_eq!(&*gone, "s2");
        assert_eq!(book.count("ada"), 2);
        assert_eq!(book.standing("s1", "ada", 0), Standing::Own);
        assert_eq!(book.standing("s1", "bob", 0), Standing::Foreign);
        assert_eq!(book.standing("s1", "ada", 1), Standing::Foreign);
        assert_eq!(book.standing("s2", "ada", 0), Standing::Unknown);
    }

    #[test]
    fn a_full_server_refuses_and_counts_stay_exact() {
        let book = SessionBook::new(SessionLimits {
            max_sessions: 2,
            max_sessions_per_user: 2,
            idle_timeout: Duration::from_secs(1),
        });
        let (ada, bob) = (user("ada"), user("bob"));
        book.reserve(&ada).unwrap();
        book.record(Arc::from("a1"), held("ada", Instant::now()));
        book.reserve(&bob).unwrap();
        assert!(book.refuses("bob") && book.refuses("cy"));
        assert!(matches!(book.reserve(&bob), Err(Full)));
        // A creation that failed gives its slot back.
        book.unreserve(&bob);
        assert_eq!(book.count("bob"), 0);
        book.reserve(&bob).unwrap();
        book.forget(&Arc::from("a1"));
        assert_eq!(book.count("ada"), 0);
        book.reserve(&ada).unwrap();
    }
}
