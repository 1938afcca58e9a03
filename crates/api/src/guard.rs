//! The `Host` and `Origin` checks `/mcp` makes (DNS rebinding, cross-site requests),
//! made for the API too, with the policy of [`Allowed`]. The server's own origin is
//! allowed: the console's pages call the API.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
pub use toolhost_host::Allowed;

use crate::Problem;

pub(crate) async fn check(
    State(allowed): State<Arc<Allowed>>,
    req: Request,
    next: Next,
) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !allowed.host_ok(host) {
        return Problem::forbidden("this Host is not one the server answers to").into_response();
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !allowed.origin_ok(origin, host, true) {
            return Problem::new(
                StatusCode::FORBIDDEN,
                "requests from this Origin are refused",
            )
            .into_response();
        }
    }
    next.run(req).await
}
