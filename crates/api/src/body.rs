//! JSON request bodies: bounded, unknown fields refused, and every error a problem that
//! names the field.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use crate::Problem;

/// The largest request body the API reads.
pub(crate) const MAX_BODY: usize = 1024 * 1024;

/// A JSON body of type `T`.
pub(crate) struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        let json = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !json {
            return Err(Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the body as `Content-Type: application/json`",
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Problem::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body is larger than {MAX_BODY} bytes"),
                )
            } else {
                Problem::new(
                    StatusCode::BAD_REQUEST,
                    format!("cannot read the body: {e}"),
                )
            }
        })?;
        if bytes.len() > MAX_BODY {
            return Err(Problem::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the body holds {} bytes; the most is {MAX_BODY}",
                    bytes.len()
                ),
            ));
        }
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        match serde_path_to_error::deserialize(de) {
            Ok(value) => Ok(Body(value)),
            Err(e) => {
                let path = e.path().to_string();
                let inner = e.into_inner();
                let status = if inner.is_syntax() || inner.is_eof() {
                    StatusCode::BAD_REQUEST
                } else {
                    StatusCode::UNPROCESSABLE_ENTITY
                };
                let problem = Problem::new(status, inner.to_string());
                Err(if path == "." {
                    problem
                } else {
                    problem.at(path)
                })
            }
        }
    }
}
