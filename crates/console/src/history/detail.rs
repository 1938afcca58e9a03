//! `/history/{id}`: one call as the log keeps it: who, how, how long, its redacted
//! arguments, its outcome and its result (text as text, JSON pretty-printed, images as
//! images), and a link that replays it in the playground.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;
use toolhost_store::Outcome;

use crate::icons::Icons;
use crate::layout::Layout;
use crate::page::{self, encode};
use crate::session::Signed;
use crate::tool_icons::ToolIcons;
use crate::{ConsoleState, time};

/// One block of a result, as the page draws it.
pub(crate) enum Block {
    Text(String),
    Json(String),
    /// A `data:` URL of an image (its type checked, its data base64 only).
    Image(String),
}

#[derive(Template)]
#[template(path = "call.html")]
struct CallPage {
    layout: Layout,
    id: String,
    tool: String,
    icon: &'static str,
    when: String,
    duration: String,
    outcome: &'static str,
    ok: bool,
    user: String,
    agent: String,
    token: String,
    tool_set: String,
    surface: String,
    error: String,
    result_bytes: i64,
    arguments: String,
    /// Whether the arguments were too large to keep (only their names are).
    arguments_cut: bool,
    has_result: bool,
    result_error: bool,
    blocks: Vec<Block>,
    structured: String,
    /// The result was larger than the log keeps: how large it was.
    result_cut: Option<u64>,
    replay: String,
}

pub(crate) async fn page(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(id): Path<String>,
) -> Response {
    let row = match state.store.call(&id).await {
        Ok(r) => r,
        Err(e) => return page::store_error(e),
    };
    let own = super::own_only(&who.caller);
    // Another user's call looks like one that does not exist.
    let Some(c) = row.filter(|r| own.as_ref().is_none_or(|u| *u == r.principal)) else {
        return page::failure(
            StatusCode::NOT_FOUND,
            "There is no call of that id in your history.",
        );
    };
    let mut icons = Icons::default();
    let icon = ToolIcons::of(&state).take(&mut icons, &c.tool, c.tool_set.as_deref());
    icons.take(Some("play"));
    let args: Value =
        serde_json::from_str(&c.arguments).unwrap_or(Value::String(c.arguments.clone()));
    let arguments_cut = args.get("truncated_from_bytes").is_some();
    let result: Option<Value> = c
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    let (blocks, structured, result_error, result_cut) = match &result {
        Some(r) => (
            r.get("content")
                .and_then(Value::as_array)
                .map(|b| b.iter().map(block).collect())
                .unwrap_or_default(),
            r.get("structuredContent").map(pretty).unwrap_or_default(),
            r.get("isError").and_then(Value::as_bool).unwrap_or(false),
            r.get("truncated_from_bytes").and_then(Value::as_u64),
        ),
        None => (Vec::new(), String::new(), false, None),
    };
    let mut replay = format!(
        "/playground?tool={}&replay={}",
        encode(&c.tool),
        encode(&c.id)
    );
    if let Some(agent) = &c.agent_id {
        replay.push_str(&format!("&agent={}", encode(agent)));
    }
    let layout = Layout::new(
        &who.caller,
        "/history",
        format!("Call of {}", c.tool),
        icons,
    );
    page::html(
        StatusCode::OK,
        &CallPage {
            layout,
            icon,
            when: time::utc(c.started_at),
            duration: time::duration(c.duration_ms),
            outcome: c.outcome.as_str(),
            ok: c.outcome == Outcome::Success,
            user: c.principal,
            agent: c.agent_id.unwrap_or_default(),
            token: c.token_id.unwrap_or_default(),
            tool_set: c.tool_set.unwrap_or_default(),
            surface: c.transport,
            error: c.error.unwrap_or_default(),
            result_bytes: c.result_bytes,
            arguments: pretty(&args),
            arguments_cut,
            has_result: result.is_some(),
            result_error,
            blocks,
            structured,
            result_cut,
            replay,
            id: c.id,
            tool: c.tool,
        },
    )
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A content block as the page draws it: text (pretty-printed when it is JSON), an image
/// when its type and data are plainly an image's, else the block's JSON.
pub(crate) fn block(b: &Value) -> Block {
    match b.get("type").and_then(Value::as_str) {
        Some("text") => {
            let text = b.get("text").and_then(Value::as_str).unwrap_or("");
            let trimmed = text.trim_start();
            if (trimmed.starts_with('{') || trimmed.starts_with('['))
                && let Ok(v) = serde_json::from_str::<Value>(text)
            {
                return Block::Json(pretty(&v));
            }
            Block::Text(text.to_string())
        }
        Some("image") => {
            let mime = b.get("mimeType").and_then(Value::as_str).unwrap_or("");
            let data = b.get("data").and_then(Value::as_str).unwrap_or("");
            let mime_ok = mime.strip_prefix("image/").is_some_and(|s| {
                !s.is_empty()
                    && s.bytes()
                        .all(|c| c.is_ascii_alphanumeric() || b"+.-".contains(&c))
            });
            let data_ok = !data.is_empty()
                && data
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"+/=".contains(&c));
            if mime_ok && data_ok {
                Block::Image(format!("data:{mime};base64,{data}"))
            } else {
                Block::Json(pretty(b))
            }
        }
        _ => Block::Json(pretty(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_are_text_json_or_checked_images() {
        assert!(
            matches!(block(&json!({"type": "text", "text": "hi"})), Block::Text(t) if t == "hi")
        );
        assert!(
            matches!(block(&json!({"type": "text", "text": "{\"a\":1}"})), Block::Json(t) if t.contains("\"a\": 1"))
        );
        assert!(
            matches!(block(&json!({"type": "image", "mimeType": "image/png", "data": "iVBO="})), Block::Image(u) if u == "data:image/png;base64,iVBO=")
        );
        // Anything else in a data URL stays JSON text.
        assert!(matches!(
            block(&json!({"type": "image", "mimeType": "text/html", "data": "PGI+"})),
            Block::Json(_)
        ));
        assert!(matches!(
            block(&json!({"type": "image", "mimeType": "image/png", "data": "\"><b>"})),
            Block::Json(_)
        ));
        assert!(matches!(
            block(&json!({"type": "resource", "resource": {}})),
            Block::Json(_)
        ));
    }
}
