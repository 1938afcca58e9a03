//! `toolhost serve`'s MCP endpoint: rmcp's Streamable HTTP service at `/mcp`, behind bearer
//! authentication, with `Host`/`Origin` validation, a body cap, and sessions bound to their
//! users (`sessions.rs`). With OAuth issuers, each endpoint is a protected resource
//! (`resource.rs`): its tokens must be issued for its canonical URI, and 401 and 403
//! answers carry challenges that lead clients to the metadata (`challenge.rs`,
//! `scopes.rs`).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use toolhost_host::store::TokenStore;
use toolhost_host::{ServeConfig, Tokens};

use crate::holding_body::HoldingBody;
use crate::scopes::{ScopeGate, require_scopes};
use crate::sessions::{Endpoint, OwnedSessions, SessionBook, SessionLimits, bind_sessions};
use crate::{McpServer, ProtectedResource};

/// Largest request body accepted (413 beyond): generous for tool arguments, bounded.
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How `/mcp` is guarded.
#[derive(Clone)]
pub struct HttpOptions {
    /// None at all: every request is the server's default caller.
    pub tokens: Arc<dyn TokenStore>,
    /// Accepted `Host` values besides the loopback names (DNS-rebinding protection).
    pub allowed_hosts: Vec<String>,
    /// Accepted browser `Origin`s besides loopback ones, such as `https://app.example.com`.
    pub allowed_origins: Vec<String>,
    /// Stops the endpoint: sessions end and their calls are cancelled.
    pub stop: CancellationToken,
    /// Caps on 2025-11-25 sessions, over all endpoints together.
    pub sessions: SessionLimits,
    /// With OAuth issuers: the endpoints as protected resources.
    pub oauth: Option<ProtectedResource>,
    /// Where 2025-11-25 sessions are kept for every gateway of a fleet (a session opened
    /// on one continues on another); `None`: in this server's memory only.
    pub shared_sessions: Option<Arc<dyn toolhost_host::store::SessionRecords>>,
    /// The fleet this server is a gateway of: a 2025-11-25 client's notifications and
    /// responses reach every gateway holding its session (the request a cancellation
    /// names may run on another), whichever gateway they were sent to.
    pub fleet: Option<Arc<dyn toolhost_host::Fleet>>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            tokens: Arc::new(Tokens::default()),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            stop: CancellationToken::new(),
            sessions: SessionLimits::default(),
            oauth: None,
            shared_sessions: None,
            fleet: None,
        }
    }
}

impl HttpOptions {
    /// The options `[serve]` gives, with `tokens`; `stop` ends the endpoint.
    pub fn from_config(
        serve: &ServeConfig,
        tokens: Arc<dyn TokenStore>,
        stop: CancellationToken,
    ) -> HttpOptions {
        HttpOptions {
            tokens,
            allowed_hosts: serve.allowed_hosts.clone(),
            allowed_origins: serve.allowed_origins.clone(),
            stop,
            sessions: SessionLimits::from_config(serve),
            oauth: ProtectedResource::from_config(serve),
            shared_sessions: None,
            fleet: None,
        }
    }
}

/// A token that a request's handler finds in its `http::request::Parts` and that fires
/// when the client drops the response (closes the stream) before it ends.
#[derive(Clone)]
pub(crate) struct StreamClosed(pub(crate) CancellationToken);

/// The router serving each server at its path (`/mcp`, `/agents/ID/mcp`, …), all behind
/// the same authentication and checks.
pub fn router_at(servers: Vec<(String, McpServer)>, options: HttpOptions) -> axum::Router {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .into_iter()
        .map(String::from)
        .collect();
    hosts.extend(options.allowed_hosts);
    let mut origins: Vec<String> = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
        .into_iter()
        .map(String::from)
        .collect();
    origins.extend(options.allowed_origins);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_sse_retry(None)
        .with_cancellation_token(options.stop.child_token());
    let book = SessionBook::new(options.sessions);
    if let Some(fleet) = &options.fleet {
        // Messages relayed by other gateways, for the sessions held here.
        let (mut relayed, book, stop) = (
            fleet.relayed_to_sessions(),
            Arc::clone(&book),
            options.stop.clone(),
        );
        tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    next = relayed.recv() => next,
                    () = stop.cancelled() => break,
                };
                match next {
                    Ok((key, message)) => book.deliver(&key, &message).await,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!("{n} relayed session messages dropped");
                    }
                    Err(_) => break,
                }
            }
        });
    }
    let paths: Vec<String> = servers.iter().map(|(p, _)| p.clone()).collect();
    let mut router = axum::Router::new();
    for (index, (path, server)) in servers.into_iter().enumerate() {
        let gate = ScopeGate {
            call_log: server.call_log(),
            metadata: options.oauth.as_ref().map(|o| o.metadata_url(&path)),
        };
        // A closed stream cancels its call (`watch_stream`), so there is nothing to resume:
        // no priming events (here and in `config`) inviting clients to reconnect with
        // Last-Event-ID.
        let mut local = LocalSessionManager::default();
        local.session_config.sse_retry = None;
        local.session_config.keep_alive = Some(book.limits().idle_timeout);
        let sessions = OwnedSessions::new(Arc::clone(&book), local, index, path.clone());
        let mut config = config.clone();
        if let Some(records) = &options.shared_sessions {
            config.session_store = Some(Arc::new(crate::shared_sessions::SharedSessions {
                records: Arc::clone(records),
                path: path.clone(),
            }));
        }
        let service: StreamableHttpService<McpServer, OwnedSessions> =
            StreamableHttpService::new(move || Ok(server.session()), Arc::new(sessions), config);
        let endpoint = Endpoint {
            book: Arc::clone(&book),
            index,
            path: path.clone(),
            fleet: options.fleet.clone(),
        };
        router = router.merge(
            axum::Router::new()
                .nest_service(&path, service)
                .layer(axum::middleware::from_fn_with_state(
                    endpoint,
                    bind_sessions,
                ))
                .layer(axum::middleware::from_fn_with_state(gate, require_scopes)),
        );
    }
    let guard = Arc::new(Guard {
        tokens: options.tokens,
        oauth: options.oauth,
        paths,
    });
    let router = router.layer(axum::middleware::from_fn(watch_stream)).layer(
        axum::middleware::from_fn_with_state(Arc::clone(&guard), authenticate),
    );
    match &guard.oauth {
        // Added after the layers: reachable without a token.
        Some(oauth) => router.merge(oauth.routes(&guard.paths)),
        None => router,
    }
}

/// What authentication needs to know: the tokens, and each endpoint's resource.
struct Guard {
    tokens: Arc<dyn TokenStore>,
    oauth: Option<ProtectedResource>,
    /// The endpoints' paths, the main one first.
    paths: Vec<String>,
}

impl Guard {
    /// The endpoint a request path is for (the main one for any other path).
    fn endpoint(&self, path: &str) -> &str {
        let within = |p: &&String| {
            path.strip_prefix(p.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        self.paths
            .iter()
            .find(within)
            .or(self.paths.first())
            .map_or("/mcp", String::as_str)
    }
}

/// 401 without a body for a missing or wrong token: the client learns nothing else but,
/// with OAuth, where to get a token (`challenge.rs`). A store that cannot answer (or an
/// issuer whose keys cannot be had) is a 503, never a 401: the token may well be good.
async fn authenticate(State(guard): State<Arc<Guard>>, mut req: Request, next: Next) -> Response {
    if guard.tokens.is_empty() {
        return next.run(req).await;
    }
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let token_given = header.is_some_and(|v| {
        v.trim().split_once(' ').is_some_and(|(scheme, token)| {
            scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty()
        })
    });
    let path = guard.endpoint(req.uri().path());
    let caller = match (header, &guard.oauth) {
        (Some(v), Some(oauth)) => guard.tokens.authenticate_at(v, &oauth.resource(path)).await,
        (Some(v), None) => guard.tokens.authenticate(v).await,
        (None, _) => Ok(None),
    };
    match caller {
        Err(e) => {
            tracing::error!("cannot authenticate a request: {e}");
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
        Ok(Some(caller)) => {
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Ok(None) => {
            let metadata = guard.oauth.as_ref().map(|o| o.metadata_url(path));
            let challenge = crate::challenge::unauthorized(metadata.as_deref(), token_given);
            let mut res = StatusCode::UNAUTHORIZED.into_response();
            res.headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
            res
        }
    }
}

/// Cancels the request's [`StreamClosed`] token when the response body is dropped, which
/// is when the client closes the stream (or after the last byte went out, when the call
/// has ended anyway).
async fn watch_stream(mut req: Request, next: Next) -> Response {
    let closed = CancellationToken::new();
    req.extensions_mut().insert(StreamClosed(closed.clone()));
    let res = next.run(req).await;
    let (parts, body) = res.into_parts();
    Response::from_parts(parts, HoldingBody::wrap(body, closed.drop_guard()))
}
