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
