//! What a call returns, and how whatever a tool produced becomes that.
//!
//! The rules (the seed's contract, made strict where hosts commonly get it wrong):
//! - `{content: [...], isError?}` is a result; only `isError: true` makes it an error.
//! - A bare string becomes one text block.
//! - Any other value becomes its JSON as text, plus `structuredContent` when it is an object.
//! - `undefined`/`null` is an error: `execute` must return something.
//! - Text beyond the cap is cut with a note pointing at the seed's `output_path` advice.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The outcome of a call, as MCP and the HTTP API serve it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// MCP content blocks (text, image, resource, …).
    pub content: Vec<Value>,
    /// Whether the call failed; `content` then says why.
    #[serde(rename = "isError")]
    pub is_error: bool,
    /// The tool's structured result, when it returned one.
    #[serde(
        rename = "structuredContent",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub structured_content: Option<Value>,
    /// Set when the runtime stopped the call before its tool finished (never sent: the
    /// content says so in words).
    #[serde(skip)]
    pub stopped: Option<Stopped>,
}

/// Why the runtime stopped a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Its caller cancelled it or went away.
    Cancelled,
    /// Its deadline, or its idle timer, ran out.
    TimedOut,
    /// It never started: every runner of the fleet tried was busy. Safe to retry.
    Overloaded,
}

impl ToolResult {
    /// A successful result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![text_block(text)],
            is_error: false,
            structured_content: None,
            stopped: None,
        }
    }

    /// A failed result saying why in one text block.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![text_block(text)],
            is_error: true,
            structured_content: None,
            stopped: None,
        }
    }

    /// All text blocks joined by newlines (what a terminal shows).
    pub fn joined_text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.content
            .iter_mut()
            .filter_map(|b| match b.get_mut("text") {
                Some(Value::String(s)) => Some(s),
                _ => None,
            })
    }

    /// Replaces every occurrence of each secret in the result's text.
    pub fn redact(&mut self, secrets: &crate::redact::Secrets) {
        // An object returned bare is shown as its own JSON text: that text is rendered
        // again from the redacted object, so a secret too short to search for in text,
        // replaced there as a whole value, leaves the text too.
        let rendered = match (&self.structured_content, self.content.as_slice()) {
            (Some(structured), [block]) => {
                block.get("text").and_then(Value::as_str)
                    == serde_json::to_string_pretty(structured).ok().as_deref()
            }
            _ => false,
        };
        for text in self.texts_mut() {
            if let Some(clean) = secrets.redact(text) {
                *text = clean;
            }
        }
        if let Some(structured) = &mut self.structured_content {
            secrets.redact_json(structured);
            if rendered && let Ok(text) = serde_json::to_string_pretty(structured) {
                self.content = vec![text_block(text)];
            }
        }
    }
}

/// An MCP text content block.
pub fn text_block(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

/// Normalises what `execute` returned. `truncated_from` is set when the runner already cut
/// an oversized value (its original size in characters).
pub fn normalise(value: Value, truncated_from: Option<usize>, cap: usize) -> ToolResult {
    let mut result = match value {
        Value::Null => ToolResult::error(
            "the tool returned no result: `execute` must return { content: [{ type: 'text', text }] }",
        ),
        Value::String(s) if truncated_from.is_some() => ToolResult::text(s),
        Value::String(s) => ToolResult::text(s),
        Value::Object(mut obj) if obj.get("content").is_some_and(Value::is_array) => {
            let content = match obj.remove("content") {
                Some(Value::Array(blocks)) => blocks.into_iter().map(block).collect(),
                _ => Vec::new(),
            };
            let structured_content = obj.remove("structuredContent").filter(Value::is_object);
            ToolResult {
                content,
                is_error: obj.get("isError") == Some(&Value::Bool(true)),
                structured_content,
                stopped: None,
            }
        }
        other => {
            let text = serde_json::to_string_pretty(&other).unwrap_or_default();
            let structured_content = other.is_object().then_some(other);
            ToolResult {
                content: vec![text_block(text)],
                is_error: false,
                structured_content,
                stopped: None,
            }
        }
    };
    cap_text(&mut result, cap, truncated_from);
    result
}

/// A content block as MCP expects it: a string becomes a text block; anything that is not
/// an object with a `type` becomes the JSON text of itself.
fn block(b: Value) -> Value {
    match b {
        Value::String(s) => text_block(s),
        Value::Object(ref o) if o.get("type").is_some_and(Value::is_string) => {
            if o.get("type") == Some(&json!("text")) && !o.get("text").is_some_and(Value::is_string)
            {
                let text = o.get("text").map(|t| t.to_string()).unwrap_or_default();
                return text_block(text);
            }
            b
        }
        other => text_block(other.to_string()),
    }
}

/// Cuts the text of `result` to `cap` bytes in all, adding a note that tells the model
/// how to get the rest.
pub fn cap_text(result: &mut ToolResult, cap: usize, already_cut_from: Option<usize>) {
    let total: usize = result.texts_mut().map(|t| t.len()).sum();
    if total <= cap && already_cut_from.is_none() {
        return;
    }
    let original = already_cut_from.unwrap_or(total).max(total);
    let mut budget = cap;
    for text in result.texts_mut() {
        if text.len() > budget {
            let mut end = budget;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        budget -= text.len();
    }
    result.structured_content = None;
    result.content.push(text_block(format!(
        "[toolhost: output cut to {} of about {}. To get all of it, call the tool again with its `output_path` parameter (if it has one) so it saves the data to a file and returns a summary, or ask for less.]",
        human_bytes(cap),
        human_bytes(original)
    )));
}

pub(crate) fn human_bytes(n: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= 1024 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_every_kind_of_value() {
        let r = normalise(
            json!({"content": [{"type": "text", "text": "hi"}]}),
            None,
            100,
        );
        assert_eq!((r.joined_text().as_str(), r.is_error), ("hi", false));
        let r = normalise(
            json!({"content": [{"type": "text", "text": "bad"}], "isError": true}),
            None,
            100,
        );
        assert!(r.is_error);
        let r = normalise(json!({"content": [], "isError": "yes"}), None, 100);
        assert!(!r.is_error, "only `true` is an error");
        let r = normalise(json!("plain"), None, 100);
        assert_eq!(r.joined_text(), "plain");
        let r = normalise(json!({"rows": 3}), None, 100);
        assert_eq!(r.structured_content, Some(json!({"rows": 3})));
        assert!(r.joined_text().contains("\"rows\": 3"));
        let r = normalise(json!([1, 2]), None, 100);
        assert_eq!(r.structured_content, None);
        let r = normalise(Value::Null, None, 100);
        assert!(r.is_error && r.joined_text().contains("returned no result"));
        let r = normalise(
            json!({"content": ["a", 5, {"type": "text", "text": 7}]}),
            None,
            100,
        );
        assert_eq!(
            r.content,
            vec![text_block("a"), text_block("5"), text_block("7")]
        );
    }

    #[test]
    fn caps_text_at_char_boundaries_with_a_note() {
        let r = normalise(json!("ééééé"), None, 5);
        assert_eq!(r.content[0]["text"], "éé");
        assert!(
            r.content[1]["text"]
                .as_str()
                .unwrap()
                .contains("output_path")
        );
        let r = normalise(json!("short"), Some(10_000_000), 100);
        assert!(r.content[1]["text"].as_str().unwrap().contains("9.5 MiB"));
    }
}
