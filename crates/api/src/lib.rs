//! Toolhost's HTTP API under `/api/v1`: JSON in and out, errors as
//! `application/problem+json`, every route behind a bearer token checked against the
//! caller's role and scopes, and the OpenAPI 3.1 document generated from this code
//! ([`openapi`], served at `/api/v1/openapi.json` and committed as `docs/openapi.json`).
#![warn(missing_docs, unreachable_pub)]

mod access;
mod agents;
mod auth;
mod body;
mod calls;
mod catalog;
mod cluster;
mod guard;
mod health;
mod history;
mod live;
mod mcp_servers;
mod params;
mod problem;
mod tools;
mod turns;

use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use tokio_util::sync::CancellationToken;
use toolhost_host::{CatalogView, Host, ToolSource};
use toolhost_store::Store;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

pub use guard::Allowed;
pub use problem::Problem;
use problem::Problems;

/// What every handler shares.
#[derive(Clone)]
pub struct ApiState {
    host: Arc<Host>,
    store: Store,
    /// The tools of the main endpoint: the caller's catalog, or their agent's tools.
    endpoint: Arc<dyn ToolSource>,
    live: Arc<live::LiveCalls>,
    stop: CancellationToken,
}

impl ApiState {
    /// The API of `host`, keeping its state in `store`; `stop` (the server's) cancels the
    /// calls it started.
    pub fn new(host: Arc<Host>, store: Store, stop: CancellationToken) -> ApiState {
        // Stored tokens always authenticate: each caller sees their own tools.
        let endpoint = host.endpoint_source(CatalogView::PerCaller);
        ApiState {
            host,
            store,
            endpoint,
            live: Arc::default(),
            stop,
        }
    }
}

/// The API's routes, to be nested at `/api/v1`, with the same `Host` and `Origin` checks
/// as `/mcp` (`allowed`).
pub fn router(state: ApiState, allowed: Allowed) -> Router {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/metrics", get(health::metrics))
        .route("/cluster", get(cluster::status))
        .route("/openapi.json", get(openapi_json))
        .route("/tool-sets", get(catalog::tool_sets))
        .route("/plugins", get(catalog::plugins))
        .route("/agents", get(agents::list).post(agents::create))
        .route(
            "/agents/{id}",
            get(agents::get).put(agents::update).delete(agents::delete),
        )
        .route("/agents/{id}/effective-tools", get(turns::effective_tools))
        .route(
            "/tokens",
            get(access::list_tokens).post(access::create_token),
        )
        .route("/tokens/{id}", axum::routing::delete(access::revoke_token))
        .route("/users", get(access::list_users))
        .route("/users/{name}", axum::routing::put(access::put_user))
        .route(
            "/mcp-servers",
            get(mcp_servers::list).post(mcp_servers::create),
        )
        .route(
            "/mcp-servers/test",
            axum::routing::post(mcp_servers::test_settings),
        )
        .route(
            "/mcp-servers/{name}",
            get(mcp_servers::get)
                .put(mcp_servers::update)
                .delete(mcp_servers::delete),
        )
        .route(
            "/mcp-servers/{name}/test",
            axum::routing::post(mcp_servers::test),
        )
        .route("/tools", get(tools::list))
        .route("/tools/{name}", get(tools::get))
        .route("/calls", get(history::calls).post(calls::start))
        .route("/calls/{id}", get(calls::get).delete(calls::cancel))
        .route("/calls/{id}/events", get(calls::events))
        .route("/audit", get(history::audit))
        .fallback(|| async {
            Problem::new(
                axum::http::StatusCode::NOT_FOUND,
                "no such route: see /api/v1/openapi.json",
            )
        })
        .layer(axum::middleware::from_fn(params::nul_in_path))
        .layer(axum::extract::DefaultBodyLimit::max(body::MAX_BODY + 1))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(allowed),
            guard::check,
        ))
        .with_state(state)
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Toolhost API",
        description = "Manage what Toolhost serves: agents, tools, calls, tokens. Errors are \
                       application/problem+json (RFC 9457)."
    ),
    servers((url = "/api/v1")),
    components(schemas(live::CallUpdate)),
    paths(
        health::healthz,
        health::metrics,
        cluster::status,
        catalog::tool_sets,
        catalog::plugins,
        agents::list,
        agents::get,
        agents::create,
        agents::update,
        agents::delete,
        turns::effective_tools,
        access::list_tokens,
        access::create_token,
        access::revoke_token,
        access::list_users,
        access::put_user,
        mcp_servers::list,
        mcp_servers::get,
        mcp_servers::create,
        mcp_servers::update,
        mcp_servers::delete,
        mcp_servers::test_settings,
        mcp_servers::test,
        tools::list,
        tools::get,
        history::calls,
        calls::start,
        calls::get,
        calls::cancel,
        calls::events,
        history::audit,
    ),
    modifiers(&Bearer, &Problems),
    tags(
        (name = "catalog", description = "Tool sets, plugins and MCP servers"),
        (name = "agents", description = "Agents and their grants"),
        (name = "mcp-servers", description = "MCP servers: settings, secrets (write-only) and a connection test"),
        (name = "tokens", description = "API tokens: shown once, stored as hashes"),
        (name = "users", description = "Users and their roles"),
        (name = "calls", description = "Calling tools, following calls, and the call log"),
        (name = "audit", description = "The admin audit log"),
        (name = "operations", description = "Health"),
    )
)]
struct Doc;

struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The OpenAPI 3.1 document of the API, as JSON.
pub fn openapi() -> String {
    let mut doc = Doc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc.to_pretty_json().unwrap_or_default() + "\n"
}

async fn openapi_json() -> impl axum::response::IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        openapi(),
    )
}
