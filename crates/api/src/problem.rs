//! Errors as `application/problem+json` (RFC 9457): a status, a title, what is wrong in
//! words, and the field at fault when there is one.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use toolhost_store::StoreError;
use utoipa::ToSchema;

/// An API error.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem (`about:blank` for the plain HTTP meaning).
    #[serde(rename = "type")]
    pub kind: String,
    /// The status's reason phrase.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What is wrong, for a person.
    pub detail: String,
    /// The field at fault (`grants[1].tool_set`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl Problem {
    /// A problem with `status` saying `detail`.
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Problem {
        Problem {
            kind: "about:blank".into(),
            title: status.canonical_reason().unwrap_or("Error").into(),
            status: status.as_u16(),
            detail: detail.into(),
            field: None,
        }
    }

    /// The same, naming `field`.
    pub fn at(mut self, field: impl Into<String>) -> Problem {
        self.field = Some(field.into());
        self
    }

    /// 401: no credential, or one that is not valid.
    pub fn unauthenticated() -> Problem {
        Problem::new(
            StatusCode::UNAUTHORIZED,
            "send `Authorization: Bearer TOKEN` with a valid token",
        )
    }

    /// 403: the caller may not do this.
    pub fn forbidden(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::FORBIDDEN, detail)
    }

    /// 404: no such object (or not one the caller may see).
    pub fn not_found(kind: &str, id: &str) -> Problem {
        Problem::new(
            StatusCode::NOT_FOUND,
            format!("{kind} `{id}` does not exist"),
        )
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut res = (status, body).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if status == StatusCode::UNAUTHORIZED {
            res.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        res
    }
}

impl From<StoreError> for Problem {
    fn from(e: StoreError) -> Problem {
        let status = match &e {
            StoreError::NotFound { .. } => StatusCode::NOT_FOUND,
            StoreError::Exists { .. } | StoreError::Conflict { .. } => StatusCode::CONFLICT,
            StoreError::Invalid { field, problem } => {
                return Problem::new(StatusCode::UNPROCESSABLE_ENTITY, problem.clone())
                    .at(field.clone());
            }
            _ => {
                tracing::error!("the store failed: {e}");
                return Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the store cannot answer now; try again",
                );
            }
        };
        Problem::new(status, e.to_string())
    }
}

impl From<toolhost_host::store::StoreError> for Problem {
    fn from(e: toolhost_host::store::StoreError) -> Problem {
        tracing::error!("a store failed: {e}");
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the store cannot answer now; try again",
        )
    }
}
