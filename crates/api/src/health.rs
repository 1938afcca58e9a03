//! `/healthz`: whether the host and its store answer (no token needed).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

use crate::ApiState;

/// How the host is.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Health {
    /// `ok`, or `degraded` when the store does not answer.
    pub(crate) status: String,
    /// `ok`, or why the store does not answer.
    pub(crate) store: String,
}

/// The host's health.
#[utoipa::path(get, path = "/healthz", operation_id = "health", tag = "operations",
    responses((status = 200, body = Health), (status = 503, body = Health)))]
pub(crate) async fn healthz(State(state): State<ApiState>) -> (StatusCode, Json<Health>) {
    match state.store.ping().await {
        Ok(()) => (
            StatusCode::OK,
            Json(Health {
                status: "ok".into(),
                store: "ok".into(),
            }),
        ),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Health {
                status: "degraded".into(),
                store: e.to_string(),
            }),
        ),
    }
}

/// Counters in Prometheus's text format: calls by tool and outcome, their latency, live
/// workers, MCP servers.
#[utoipa::path(get, path = "/metrics", operation_id = "metrics", tag = "operations",
    responses((status = 200, body = String, content_type = "text/plain; version=0.0.4"), (status = 401, body = crate::Problem)),
    security(("bearer" = [])))]
pub(crate) async fn metrics(
    State(state): State<ApiState>,
    who: crate::auth::Principal,
) -> Result<impl axum::response::IntoResponse, crate::Problem> {
    who.reader()?;
    let mut out = String::new();
    state.host.metrics().render(&mut out);
    out.push_str("# HELP toolhost_workers Live Node.js workers.\n# TYPE toolhost_workers gauge\n");
    out.push_str(&format!(
        "toolhost_workers {}\n",
        state.host.runtime().workers().await
    ));
    let servers = state
        .host
        .registry()
        .map_or(0, |r| r.external_sources().len());
    out.push_str("# HELP toolhost_mcp_servers MCP servers configured as tool sources.\n# TYPE toolhost_mcp_servers gauge\n");
    out.push_str(&format!("toolhost_mcp_servers {servers}\n"));
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        out,
    ))
}
