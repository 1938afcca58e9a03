//! `/healthz`: whether the host and its store answer (no token needed).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use toolhost_host::prometheus_label;
use toolhost_toolsets::SourceHealth;
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
/// workers, MCP servers and their state, sandbox starts, the call log's rows.
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
    if let Some(fleet) = state.host.fleet() {
        fleet.metrics(&mut out);
    }
    out.push_str("# HELP toolhost_workers Live Node.js workers.\n# TYPE toolhost_workers gauge\n");
    out.push_str(&format!(
        "toolhost_workers {}\n",
        state.host.runtime().workers().await
    ));
    let sources = state
        .host
        .registry()
        .map(|r| r.external_sources())
        .unwrap_or_default();
    out.push_str("# HELP toolhost_mcp_servers MCP servers configured as tool sources.\n# TYPE toolhost_mcp_servers gauge\n");
    out.push_str(&format!("toolhost_mcp_servers {}\n", sources.len()));
    if !sources.is_empty() {
        out.push_str("# HELP toolhost_mcp_server_state How each MCP server's last listing went (1 for its state).\n# TYPE toolhost_mcp_server_state gauge\n");
        for source in &sources {
            let now = match source.health() {
                SourceHealth::NotContacted => "not_contacted",
                SourceHealth::Live => "live",
                SourceHealth::Failing {
                    serving_stale: true,
                    ..
                } => "stale",
                SourceHealth::Failing { .. } => "failing",
            };
            for state in ["not_contacted", "live", "stale", "failing"] {
                out.push_str(&format!(
                    "toolhost_mcp_server_state{{server=\"{}\",state=\"{state}\"}} {}\n",
                    prometheus_label(source.name()),
                    u8::from(state == now)
                ));
            }
        }
    }
    if let Some(starts) = state.host.runtime().sandbox_starts() {
        out.push_str("# HELP toolhost_sandbox_starts_total Processes started in the sandbox.\n# TYPE toolhost_sandbox_starts_total counter\n");
        out.push_str(&format!("toolhost_sandbox_starts_total {starts}\n"));
    }
    let log = state.host.call_log().counts();
    out.push_str("# HELP toolhost_call_log_rows_total Call-log rows taken, written and lost (a full queue).\n# TYPE toolhost_call_log_rows_total counter\n");
    for (what, n) in [
        ("accepted", log.accepted),
        ("written", log.written),
        ("lost", log.lost),
    ] {
        out.push_str(&format!(
            "toolhost_call_log_rows_total{{result=\"{what}\"}} {n}\n"
        ));
    }
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        out,
    ))
}
