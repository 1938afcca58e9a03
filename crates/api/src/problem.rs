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

/// The document's side of "every error is a problem": each answer from 400 up is
/// declared as `application/problem+json`, and the errors the API's shared machinery
/// gives are declared on every operation that can meet them, beside each handler's own
/// (404, 409, 422…): the `Host`/`Origin` guard (403) on all; authentication (401, with
/// `WWW-Authenticate`), roles and scopes (403) and the store being down (503) where a
/// token is needed; an unreadable query string (400) where there are query parameters;
/// an unmatched path (404) where there are path parameters (an empty segment matches no
/// route); and an unreadable, oversized, non-JSON or invalid body (400, 413, 415, 422)
/// where there is a body. Responses without a description get their status's phrase.
pub(crate) struct Problems;

impl utoipa::Modify for Problems {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::RefOr;
        use utoipa::openapi::path::ParameterIn;

        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
            ];
            for op in operations.into_iter().flatten() {
                let secured = op.security.as_ref().is_some_and(|s| !s.is_empty());
                let has_in = |place: ParameterIn| {
                    op.parameters.iter().flatten().any(|p| match p {
                        RefOr::T(p) => p.parameter_in == place,
                        RefOr::Ref(_) => false,
                    })
                };
                let (query, path) = (has_in(ParameterIn::Query), has_in(ParameterIn::Path));
                let body = op.request_body.is_some();
                let responses = &mut op.responses.responses;
                let mut declare = |status: StatusCode, why: &str| {
                    responses
                        .entry(status.as_str().to_string())
                        .or_insert_with(|| RefOr::T(problem_response(why)));
                };
                if secured {
                    declare(
                        StatusCode::UNAUTHORIZED,
                        "No `Authorization: Bearer TOKEN`, or not a valid token",
                    );
                    declare(
                        StatusCode::FORBIDDEN,
                        "The token lacks the scope or its user the role; or the `Host` or \
                         `Origin` is refused",
                    );
                    declare(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "The store cannot answer now",
                    );
                } else {
                    declare(StatusCode::FORBIDDEN, "The `Host` or `Origin` is refused");
                }
                if query || body {
                    declare(
                        StatusCode::BAD_REQUEST,
                        "The query string or the body cannot be read (a parameter unknown or \
                         of the wrong type, JSON that does not parse)",
                    );
                }
                if path {
                    declare(StatusCode::NOT_FOUND, "No such object, or no such route");
                }
                if body {
                    declare(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "The body is larger than 1 MiB",
                    );
                    declare(
                        StatusCode::UNSUPPORTED_MEDIA_TYPE,
                        "The body is not `Content-Type: application/json`",
                    );
                    declare(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "A field is missing, unknown or invalid (`field` names it)",
                    );
                }
                for (status, response) in op.responses.responses.iter_mut() {
                    let RefOr::T(response) = response else {
                        continue;
                    };
                    let code = status
                        .parse::<u16>()
                        .ok()
                        .and_then(|s| StatusCode::from_u16(s).ok());
                    if response.description.is_empty() {
                        response.description = code
                            .and_then(|c| c.canonical_reason())
                            .unwrap_or("Error")
                            .to_string();
                    }
                    let a_problem = response
                        .content
                        .get("application/json")
                        .and_then(|c| match c {
                            RefOr::T(c) => c.schema.as_ref(),
                            RefOr::Ref(_) => None,
                        })
                        .is_some_and(|s| {
                            matches!(s, RefOr::Ref(r) if r.ref_location == "#/components/schemas/Problem")
                        });
                    if a_problem {
                        *response = problem_response(&response.description);
                    }
                    if code == Some(StatusCode::UNAUTHORIZED) {
                        response.headers.insert(
                            "WWW-Authenticate".to_string(),
                            RefOr::T(
                                utoipa::openapi::header::HeaderBuilder::new()
                                    .schema(Some(
                                        utoipa::openapi::ObjectBuilder::new()
                                            .schema_type(utoipa::openapi::Type::String),
                                    ))
                                    .description(Some("`Bearer`"))
                                    .build(),
                            ),
                        );
                    }
                }
            }
        }
    }
}

/// A response whose body is a [`Problem`].
fn problem_response(description: &str) -> utoipa::openapi::Response {
    utoipa::openapi::ResponseBuilder::new()
        .description(description)
        .content(
            "application/problem+json",
            utoipa::openapi::ContentBuilder::new()
                .schema(Some(utoipa::openapi::Ref::from_schema_name("Problem")))
                .build(),
        )
        .build()
}
