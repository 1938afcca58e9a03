//! JSON request bodies: bounded, unknown fields and NUL characters refused, and every error
//! a problem that names the field.

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
        // JSON first (what does not parse is a 400), then the type (a 422 naming the
        // field); in between, text no store can hold.
        let json: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| Problem::new(StatusCode::BAD_REQUEST, e.to_string()))?;
        if let Some(field) = nul_at(&json, String::new()) {
            let problem = Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "text may not contain NUL characters (\\u0000)",
            );
            return Err(if field.is_empty() {
                problem
            } else {
                problem.at(field)
            });
        }
        match serde_path_to_error::deserialize(json) {
            Ok(value) => Ok(Body(value)),
            Err(e) => {
                let path = e.path().to_string();
                let problem =
                    Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.into_inner().to_string());
                Err(if path == "." {
                    problem
                } else {
                    problem.at(path)
                })
            }
        }
    }
}

/// Where the first string (or key) holding a NUL character is, as a field path
/// (`grants[0].rules`); `None` when there is none. PostgreSQL cannot store NUL in text,
/// and no name or id of Toolhost's holds one.
fn nul_at(value: &serde_json::Value, at: String) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(s) => s.contains('\0').then_some(at),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| nul_at(v, format!("{at}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let field = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            if k.contains('\0') {
                Some(field)
            } else {
                nul_at(v, field)
            }
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::nul_at;

    #[test]
    fn a_nul_anywhere_is_found_with_its_field() {
        assert_eq!(nul_at(&json!({"name": "ok", "n": 1}), String::new()), None);
        assert_eq!(
            nul_at(&json!({"name": "a\u{0}b"}), String::new()).as_deref(),
            Some("name")
        );
        assert_eq!(
            nul_at(
                &json!({"grants": [{"tool_set": "t"}, {"rules": {"x\u{0}": "deny"}}]}),
                String::new()
            )
            .as_deref(),
            Some("grants[1].rules.x\u{0}")
        );
        assert_eq!(nul_at(&json!("\u{0}"), String::new()).as_deref(), Some(""));
    }
}
