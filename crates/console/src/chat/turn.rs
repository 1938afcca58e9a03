//! One turn of the chat: the model answers (streamed), the tools it asks for run through
//! Toolhost as the signed-in user acting as the agent, their results go back to the model,
//! and so on until it answers without tools. Everything that happens is sent to the
//! browser as server-sent events; closing the connection (Stop) cancels the model's
//! request and any tool still running.

use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolhost_host::{CallTrace, Caller, ToolInfo};
use toolhost_runtime::{CallEvent, Stopped, ToolResult};
use toolhost_store::ChatModel;

use super::completions::{self, ToolCall};
use crate::ConsoleState;
use crate::tool_icons::ToolIcons;

/// Rounds of tool calls one turn may take before the chat stops it.
const MAX_ROUNDS: usize = 10;
/// The most of a tool's result the model is sent.
const MAX_RESULT_CHARS: usize = 64 * 1024;

/// One event for the browser: its name and JSON data.
pub(crate) type Event = (&'static str, Value);

/// What the turn needs.
pub(crate) struct Turn {
    pub(crate) state: ConsoleState,
    pub(crate) caller: Caller,
    pub(crate) model: ChatModel,
    pub(crate) tools: Vec<ToolInfo>,
    pub(crate) icons: ToolIcons,
    pub(crate) messages: Vec<Value>,
}

/// The tools as the chat-completions format offers them.
pub(crate) fn offered(tools: &[ToolInfo]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name,
                "description": t.description,
                "parameters": Value::Object((*t.input_schema).clone()),
            }})
        })
        .collect()
}

/// Runs the turn, sending its events to `tx` until done or `stop`.
pub(crate) async fn run(turn: Turn, tx: mpsc::Sender<Event>, stop: CancellationToken) {
    let client = match completions::client() {
        Ok(c) => c,
        Err(e) => {
            let _ = tx.send(("failed", json!({"message": e.to_string()}))).await;
            return;
        }
    };
    let offered = offered(&turn.tools);
    let mut messages = turn.messages.clone();
    for round in 0.. {
        if round == MAX_ROUNDS {
            let message = format!(
                "the model asked for tools {MAX_ROUNDS} times in one turn; the chat stopped it"
            );
            let _ = tx.send(("failed", json!({"message": message}))).await;
            return;
        }
        let text_tx = tx.clone();
        let asked = completions::complete(&client, &turn.model, &messages, &offered, |text| {
            // The browser reads as fast as text comes; a full queue only means a stalled
            // tab, and `stop` handles a closed one.
            let _ = text_tx.try_send(("text", json!({"text": text})));
        });
        let answer = tokio::select! {
            a = asked => a,
            () = stop.cancelled() => return,
        };
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                let _ = tx.send(("failed", json!({"message": e.to_string()}))).await;
                return;
            }
        };
        let mut new = vec![answer.message()];
        if answer.tool_calls.is_empty() {
            let _ = tx.send(("messages", json!({"messages": new}))).await;
            let _ = tx
                .send(("done", json!({"finish_reason": answer.finish_reason})))
                .await;
            return;
        }
        for call in &answer.tool_calls {
            let icon = turn.icons.name(&call.name, None);
            let args: Value = serde_json::from_str(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            let _ = tx
                .send((
                    "tool",
                    json!({"id": call.id, "name": call.name, "icon": icon,
                           "arguments": args, "state": "pending"}),
                ))
                .await;
        }
        for call in &answer.tool_calls {
            let Some(content) = run_tool(&turn, call, &tx, &stop).await else {
                return; // stopped
            };
            new.push(json!({"role": "tool", "tool_call_id": call.id, "content": content}));
        }
        let _ = tx.send(("messages", json!({"messages": new}))).await;
        messages.extend(new);
    }
}

/// Runs one tool call, sending its card's states; the text the model gets back, or
/// `None` when the turn was stopped.
async fn run_tool(
    turn: &Turn,
    call: &ToolCall,
    tx: &mpsc::Sender<Event>,
    stop: &CancellationToken,
) -> Option<String> {
    let began = Instant::now();
    let finished = |state: &str, result: &ToolResult| {
        json!({"id": call.id, "state": state, "result": result,
               "duration_ms": began.elapsed().as_millis() as u64})
    };
    let args: Value = match serde_json::from_str(&call.arguments) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) | Err(_) if call.arguments.trim().is_empty() => json!({}),
        _ => {
            let why = format!(
                "the arguments for `{}` are not a JSON object: {}",
                call.name, call.arguments
            );
            let result = ToolResult::error(why.clone());
            let _ = tx.send(("tool", finished("error", &result))).await;
            return Some(why);
        }
    };
    let log = turn.state.host.call_log();
    let Some(target) = turn.state.endpoint.resolve(&turn.caller, &call.name).await else {
        let why = format!(
            "tool `{}` does not exist, or this agent may not call it",
            call.name
        );
        CallTrace::deny(&*log, &turn.caller, &call.name, "console", &why);
        let result = ToolResult::error(why.clone());
        let _ = tx.send(("tool", finished("error", &result))).await;
        return Some(why);
    };
    let id = toolhost_store::new_id();
    let mut trace = CallTrace::begin(log, &turn.caller, &call.name, "console", &args, &target)
        .with_id(id.clone());
    let mut request = target.request(args, turn.caller.space.clone());
    request.tool_call_id = Some(id.clone());
    let mut running = turn.state.host.runtime().call(request);
    let _ = tx
        .send((
            "tool",
            json!({"id": call.id, "state": "running", "call": id}),
        ))
        .await;
    let mut cancelled = false;
    let result = loop {
        let event = tokio::select! {
            e = running.next() => e,
            () = stop.cancelled(), if !cancelled => {
                cancelled = true;
                running.cancel();
                continue;
            }
        };
        match event {
            Some(CallEvent::Progress(p)) => {
                let _ = tx.try_send((
                    "progress",
                    json!({"id": call.id, "message": p.text(), "seq": p.seq}),
                ));
            }
            Some(CallEvent::Done(r)) => break r,
            None => break ToolResult::error("the call ended without a result"),
        }
    };
    trace.finish(&result);
    if cancelled || matches!(result.stopped, Some(Stopped::Cancelled)) {
        return None;
    }
    let state = if result.is_error {
        "error"
    } else {
        "completed"
    };
    let _ = tx.send(("tool", finished(state, &result))).await;
    Some(for_model(&result))
}

/// A result as the text the model reads.
fn for_model(result: &ToolResult) -> String {
    let mut text = String::new();
    if result.is_error {
        text.push_str("Error: ");
    }
    for block in &result.content {
        if !text.is_empty() && !text.ends_with(' ') {
            text.push('\n');
        }
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some(kind) => text.push_str(&format!("[{kind} content]")),
            None => text.push_str(&block.to_string()),
        }
    }
    if text.is_empty()
        && let Some(s) = &result.structured_content
    {
        text = s.to_string();
    }
    if text.len() > MAX_RESULT_CHARS {
        let mut cut = MAX_RESULT_CHARS;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[… cut: the result was longer]");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_read_as_text_for_the_model() {
        let ok = ToolResult {
            content: vec![
                json!({"type": "text", "text": "one"}),
                json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            ],
            is_error: false,
            structured_content: None,
            stopped: None,
        };
        assert_eq!(for_model(&ok), "one\n[image content]");
        let failed = ToolResult::error("no such file");
        assert!(
            for_model(&failed).starts_with("Error: "),
            "{}",
            for_model(&failed)
        );
        let long = ToolResult {
            content: vec![json!({"type": "text", "text": "é".repeat(MAX_RESULT_CHARS)})],
            is_error: false,
            structured_content: None,
            stopped: None,
        };
        assert!(for_model(&long).len() < MAX_RESULT_CHARS + 100);
    }
}
