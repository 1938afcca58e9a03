//! Toolhost's web console: server-rendered pages over the host and the store, mounted by
//! `toolhost serve` at `/` beside `/mcp` and `/api/v1`.
//!
//! Every page is its own route and works without JavaScript; htmx (vendored, like the
//! Lucide icons, by `scripts/vendor-assets.mjs`) only enhances. A browser signs in with a
//! token and gets a session cookie (HttpOnly, SameSite=Strict) holding a random secret:
//! the store keeps its hash and the token, sealed, and authenticates that token again on
//! every request. No token ever appears in a page.
#![warn(missing_docs, unreachable_pub)]

mod agents;
mod assets;
mod audit;
mod catalog;
mod chat;
mod guard;
mod history;
mod icons;
mod layout;
mod markdown;
mod mcp_servers;
mod overview;
mod page;
mod playground;
mod session;
mod settings;
mod sources;
mod time;
mod tokens;
mod tool_icons;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use toolhost_host::{CatalogView, Host, ToolSource};
use toolhost_store::Store;
use tower_http::compression::CompressionLayer;

pub use guard::Allowed;

/// What every page shares.
#[derive(Clone)]
pub struct ConsoleState {
    host: Arc<Host>,
    store: Store,
    /// The tools of the main endpoint: the caller's catalog, or their agent's tools.
    endpoint: Arc<dyn ToolSource>,
    /// Whether the session cookie is `Secure` (the console is reached over HTTPS).
    secure: bool,
    /// The chat turns running, per user.
    chats: Arc<chat::Running>,
}

impl ConsoleState {
    /// The console of `host`, its sessions kept in `store`. With `secure`, the session
    /// cookie is sent over HTTPS only (say so when `[serve] public_url` is `https://`).
    pub fn new(host: Arc<Host>, store: Store, secure: bool) -> ConsoleState {
        let endpoint = host.endpoint_source(CatalogView::PerCaller);
        ConsoleState {
            host,
            store,
            endpoint,
            secure,
            chats: Arc::default(),
        }
    }
}

/// The console's routes, to be merged at `/`, with the `Host` and `Origin` checks of the
/// API (`allowed`) and compressed responses.
pub fn router(state: ConsoleState, allowed: Allowed) -> Router {
    Router::new()
        .route("/", get(overview::page))
        .route(
            "/sign-in",
            get(session::sign_in_page).post(session::sign_in),
        )
        .route("/sign-out", post(session::sign_out))
        .route("/catalog", get(catalog::index))
        .route("/catalog/sets/{id}", get(catalog::set_page))
        .route("/catalog/tools/{name}", get(catalog::tool_page))
        .merge(chat::routes())
        .merge(tokens::routes())
        .merge(mcp_servers::routes())
        .merge(sources::routes())
        .merge(audit::routes())
        .merge(settings::routes())
        .merge(agents::routes())
        .merge(playground::routes())
        .merge(history::routes())
        .route("/assets/{file}", get(assets::serve))
        .fallback(page::not_found)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(allowed),
            guard::check,
        ))
        .layer(axum::middleware::from_fn(page::headers))
        .layer(CompressionLayer::new())
        .with_state(state)
}
