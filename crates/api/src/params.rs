//! Query strings: unknown parameters and NUL characters refused, every error a problem.

use axum::extract::{FromRequestParts, Query};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::Problem;

/// A query string of type `T`.
pub(crate) struct Params<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Params<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
        // A NUL is `%00` and nothing else in a URI; no store can hold it in text.
        if parts.uri.query().is_some_and(|q| q.contains("%00")) {
            return Err(Problem::new(
                StatusCode::BAD_REQUEST,
                "query parameters may not contain NUL characters (%00)",
            ));
        }
        match Query::<T>::try_from_uri(&parts.uri) {
            Ok(Query(value)) => Ok(Params(value)),
            Err(e) => Err(Problem::new(StatusCode::BAD_REQUEST, e.body_text())),
        }
    }
}

/// Refuses a path holding a NUL character (`%00`) as no such object: no id or name of
/// Toolhost's holds one, and PostgreSQL could not even look one up.
pub(crate) async fn nul_in_path(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if req.uri().path().contains("%00") {
        return Problem::new(
            StatusCode::NOT_FOUND,
            "no such object: its name holds a NUL",
        )
        .into_response();
    }
    next.run(req).await
}
