//! The scope check at the HTTP layer: a JSON-RPC request whose method needs a scope the
//! caller's token lacks gets `403` with an `insufficient_scope` challenge, which an OAuth
//! client answers by asking for a token with more scopes. (The server checks the same
//! scopes again, for stdio.) The body is read only when the caller lacks a tool scope,
//! and the very bytes read are handed on.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_host::store::CallLog;
use toolhost_host::{CallTrace, Caller, Scope};

use crate::challenge::{TOOL_SCOPES, insufficient_scope};
use crate::http::MAX_BODY_BYTES;

/// One endpoint's scope check: where refused calls are logged, and its metadata's URL.
#[derive(Clone)]
pub(crate) struct ScopeGate {
    pub(crate) call_log: Arc<dyn CallLog>,
    pub(crate) metadata: Option<String>,
}

/// The part of a JSON-RPC message the check reads.
#[derive(Deserialize)]
struct Message {
    method: Option<String>,
    id: Option<Value>,
    params: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Messages {
    One(Message),
    Batch(Vec<Message>),
}

/// The scope `method` needs, if any.
fn needs(method: &str) -> Option<Scope> {
    match method {
        "tools/list" => Some(Scope::ToolsRead),
        "tools/call" => Some(Scope::ToolsCall),
        _ => None,
    }
}

/// What a body asks: the scopes its messages need, the tools it calls, and the id to
/// answer (a single request's). A body that is not JSON-RPC asks nothing here; rmcp
/// refuses it.
fn asks(body: &[u8]) -> (Vec<Scope>, Vec<String>, Value) {
    let (messages, id) = match serde_json::from_slice::<Messages>(body) {
        Ok(Messages::One(m)) => {
            let id = m.id.clone().unwrap_or(Value::Null);
            (vec![m], id)
        }
        Ok(Messages::Batch(list)) => (list, Value::Null),
        Err(_) => (Vec::new(), Value::Null),
    };
    let mut scopes = Vec::new();
    let mut tools = Vec::new();
    for m in &messages {
        let Some(scope) = m.method.as_deref().and_then(needs) else {
            continue;
        };
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
        if scope == Scope::ToolsCall {
            let name = m.params.as_ref().and_then(|p| p["name"].as_str());
            tools.push(name.unwrap_or_default().to_string());
        }
    }
    (scopes, tools, id)
}

/// Answers `403` before rmcp sees a request that needs a scope its caller lacks.
pub(crate) async fn require_scopes(
    State(gate): State<ScopeGate>,
    req: Request,
    next: Next,
) -> Response {
    let lacks_some = req
        .extensions()
        .get::<Caller>()
        .is_some_and(|c| TOOL_SCOPES.iter().any(|s| !c.may(*s)));
    if req.method() != Method::POST || !lacks_some {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response();
    };
    let Some(caller) = parts.extensions.get::<Caller>() else {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    let (needed, tools, id) = asks(&bytes);
    let lacking: Vec<Scope> = needed.iter().copied().filter(|s| !caller.may(*s)).collect();
    if lacking.is_empty() {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    let message = format!(
        "insufficient scope: this token lacks `{}`; ask for a token that has it",
        crate::challenge::scope_list(&lacking)
    );
    for tool in tools {
        CallTrace::deny(&*gate.call_log, caller, &tool, "mcp-http", &message);
    }
    let mut ask: Vec<Scope> = caller.scopes.clone();
    ask.extend(needed);
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32600, "message": message},
    });
    let challenge = insufficient_scope(gate.metadata.as_deref(), &ask, &lacking);
    (
        StatusCode::FORBIDDEN,
        [
            (header::WWW_AUTHENTICATE, challenge),
            (
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/json"),
            ),
        ],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_methods_need_their_scopes_and_others_none() {
        let (scopes, tools, id) =
            asks(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#);
        assert_eq!(
            (scopes, tools, id),
            (vec![Scope::ToolsCall], vec!["echo".into()], json!(7))
        );
        let (scopes, tools, _) = asks(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#);
        assert_eq!((scopes, tools.len()), (vec![Scope::ToolsRead], 0));
        for other in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "not json",
            "[]",
        ] {
            assert!(asks(other.as_bytes()).0.is_empty(), "{other}");
        }
    }

    #[test]
    fn a_batch_needs_every_scope_its_messages_need() {
        let (scopes, tools, id) = asks(
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},
                {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}},
                {"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1]}]"#,
        );
        assert_eq!(scopes, [Scope::ToolsRead, Scope::ToolsCall]);
        assert_eq!(tools, ["a", ""]);
        assert_eq!(id, Value::Null);
    }
}
