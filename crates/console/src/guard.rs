//! The `Host` and `Origin` checks of `/mcp` and the API, for the console, with the policy
//! of [`Allowed`]: a `Host` that is not loopback, the listen address or an allowed host is
//! refused (DNS rebinding); a request whose `Origin` is not this console's own, a loopback
//! one or an allowed one is refused (cross-site requests: with the SameSite=Strict cookie,
//! what makes signing out and every other form safe from other sites).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
pub use toolhost_host::Allowed;

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
        return (
            StatusCode::FORBIDDEN,
            "this Host is not one the server answers to",
        )
            .into_response();
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !allowed.origin_ok(origin, host, true) {
            return (
                StatusCode::FORBIDDEN,
                "requests from this Origin are refused",
            )
                .into_response();
        }
    }
    next.run(req).await
}
