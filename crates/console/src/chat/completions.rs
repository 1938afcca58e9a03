//! A client of OpenAI's chat-completions wire format, streamed: `POST BASE/chat/completions`
//! with `stream: true`, answered with server-sent events whose `data:` lines are chunks
//! (`choices[0].delta` with `content` and `tool_calls` fragments, then `finish_reason`)
//! and a final `data: [DONE]`. Any endpoint that speaks it works (OpenAI, vLLM, Ollama,
//! LiteLLM, llama.cpp's server); one that answers without streaming is read too.

use std::time::Duration;

use serde_json::{Map, Value, json};
use toolhost_store::ChatModel;

/// How long the endpoint may take to start answering, and to send each next chunk.
const IDLE: Duration = Duration::from_secs(120);
/// The most a single answer may bring (a runaway stream is cut here).
const MAX_ANSWER: usize = 4 << 20;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ToolCall {
    pub(crate) id: String,
    pub(crate) name: String,
    /// The arguments as the model wrote them (JSON text, possibly invalid).
    pub(crate) arguments: String,
}

/// One whole answer of the model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Answer {
    pub(crate) content: String,
    pub(crate) tool_calls: Vec<ToolCall>,
    pub(crate) finish_reason: Option<String>,
}

impl Answer {
    /// The answer as the assistant message the next request repeats.
    pub(crate) fn message(&self) -> Value {
        let mut m = Map::new();
        m.insert("role".into(), json!("assistant"));
        m.insert(
            "content".into(),
            if self.content.is_empty() && !self.tool_calls.is_empty() {
                Value::Null
            } else {
                json!(self.content)
            },
        );
        if !self.tool_calls.is_empty() {
            let calls: Vec<Value> = self
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        Value::Object(m)
    }
}

/// What went wrong talking to the model, in words for the chat.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ModelError {
    #[error("the chat model could not be reached at {url}: {why}")]
    Unreachable { url: String, why: String },
    #[error("the chat model answered {status}: {message}")]
    Refused { status: u16, message: String },
    #[error("the chat model's answer could not be read: {0}")]
    Garbled(String),
    #[error("the chat model sent nothing for {} s", IDLE.as_secs())]
    Silent,
}

/// Folds stream chunks into an [`Answer`], handing each piece of text on as it comes.
#[derive(Default)]
pub(crate) struct Assembler {
    answer: Answer,
    /// Partial lines between network reads.
    pending: String,
    done: bool,
    size: usize,
}

impl Assembler {
    /// Feeds raw bytes of the event stream; returns the new text, if any.
    pub(crate) fn feed(&mut self, bytes: &str) -> Result<String, ModelError> {
        self.size += bytes.len();
        if self.size > MAX_ANSWER {
            return Err(ModelError::Garbled(format!(
                "the answer is over {} MB",
                MAX_ANSWER >> 20
            )));
        }
        self.pending.push_str(bytes);
        let mut text = String::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            let line = line.trim_end_matches(['\r', '\n']);
            let Some(data) = line.strip_prefix("data:") else {
                continue; // comments, `event:` and `id:` lines, blank separators
            };
            let data = data.trim_start();
            if data == "[DONE]" {
                self.done = true;
                continue;
            }
            let chunk: Value = serde_json::from_str(data)
                .map_err(|e| ModelError::Garbled(format!("a chunk is not JSON ({e}): {data}")))?;
            if let Some(message) = chunk.pointer("/error/message").and_then(Value::as_str) {
                return Err(ModelError::Refused {
                    status: 200,
                    message: message.to_string(),
                });
            }
            text.push_str(&self.chunk(&chunk));
        }
        Ok(text)
    }

    /// One chunk's delta; returns its text.
    fn chunk(&mut self, chunk: &Value) -> String {
        let Some(choice) = chunk.pointer("/choices/0") else {
            return String::new(); // usage-only chunks
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.answer.finish_reason = Some(reason.to_string());
        }
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            // Fragments carry the call's `index`; its first fragment also its id and name.
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .map_or(self.answer.tool_calls.len().saturating_sub(1), |i| {
                    i as usize
                });
            while self.answer.tool_calls.len() <= index.min(63) {
                self.answer.tool_calls.push(ToolCall::default());
            }
            let Some(slot) = self.answer.tool_calls.get_mut(index) else {
                continue;
            };
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                slot.id = id.to_string();
            }
            if let Some(f) = call.get("function") {
                if let Some(name) = f.get("name").and_then(Value::as_str) {
                    slot.name.push_str(name);
                }
                if let Some(args) = f.get("arguments").and_then(Value::as_str) {
                    slot.arguments.push_str(args);
                }
            }
        }
        match delta.get("content").and_then(Value::as_str) {
            Some(text) => {
                self.answer.content.push_str(text);
                text.to_string()
            }
            None => String::new(),
        }
    }

    /// The answer, once the stream ended.
    pub(crate) fn finish(mut self) -> Answer {
        // Endpoints that stream a tool call without an id still need one to answer it.
        for (i, call) in self.answer.tool_calls.iter_mut().enumerate() {
            if call.id.is_empty() {
                call.id = format!("call_{i}");
            }
        }
        self.answer.tool_calls.retain(|c| !c.name.is_empty());
        let _ = self.done;
        self.answer
    }
}

/// The request's body.
pub(crate) fn request_body(model: &ChatModel, messages: &[Value], tools: &[Value]) -> Value {
    let mut body = json!({"model": model.model, "messages": messages, "stream": true});
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools.to_vec());
    }
    body
}

/// The HTTP client for the chat's model: no redirects (the key would follow them).
pub(crate) fn client() -> Result<reqwest::Client, ModelError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ModelError::Unreachable {
            url: String::new(),
            why: e.to_string(),
        })
}

/// Asks the model; `on_text` gets each piece of text as it streams in.
pub(crate) async fn complete(
    client: &reqwest::Client,
    model: &ChatModel,
    messages: &[Value],
    tools: &[Value],
    mut on_text: impl FnMut(String),
) -> Result<Answer, ModelError> {
    let url = format!("{}/chat/completions", model.base_url.trim_end_matches('/'));
    let body = serde_json::to_vec(&request_body(model, messages, tools))
        .map_err(|e| ModelError::Garbled(e.to_string()))?;
    let mut req = client
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(body);
    if let Some(key) = &model.api_key {
        req = req.bearer_auth(key);
    }
    let unreachable = |e: reqwest::Error| ModelError::Unreachable {
        url: url.clone(),
        why: e.to_string(),
    };
    let mut res = tokio::time::timeout(IDLE, req.send())
        .await
        .map_err(|_| ModelError::Silent)?
        .map_err(unreachable)?;
    let status = res.status();
    let streamed = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    if !status.is_success() || !streamed {
        let text = read_all(&mut res).await?;
        if !status.is_success() {
            return Err(ModelError::Refused {
                status: status.as_u16(),
                message: error_message(&text),
            });
        }
        return whole_answer(&text, on_text);
    }
    let mut assembler = Assembler::default();
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let chunk = tokio::time::timeout(IDLE, res.chunk())
            .await
            .map_err(|_| ModelError::Silent)?
            .map_err(|e| ModelError::Garbled(e.to_string()))?;
        let Some(chunk) = chunk else { break };
        carry.extend_from_slice(&chunk);
        // A chunk may end inside a UTF-8 sequence: keep the incomplete tail.
        let valid = match std::str::from_utf8(&carry) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => return Err(ModelError::Garbled(e.to_string())),
        };
        let text: String = String::from_utf8_lossy(&carry[..valid]).into_owned();
        carry.drain(..valid);
        let new = assembler.feed(&text)?;
        if !new.is_empty() {
            on_text(new);
        }
        if assembler.done {
            break;
        }
    }
    Ok(assembler.finish())
}

async fn read_all(res: &mut reqwest::Response) -> Result<String, ModelError> {
    let mut body = Vec::new();
    while let Some(chunk) = tokio::time::timeout(IDLE, res.chunk())
        .await
        .map_err(|_| ModelError::Silent)?
        .map_err(|e| ModelError::Garbled(e.to_string()))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ANSWER {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// `error.message` of an error body, else the body (cut short).
fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .or_else(|| v.get("message"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.chars().take(300).collect())
}

/// A non-streamed answer (`choices[0].message`).
fn whole_answer(body: &str, mut on_text: impl FnMut(String)) -> Result<Answer, ModelError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| ModelError::Garbled(format!("the answer is not JSON ({e})")))?;
    let message = v
        .pointer("/choices/0/message")
        .ok_or_else(|| ModelError::Garbled("the answer has no choices[0].message".into()))?;
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !content.is_empty() {
        on_text(content.clone());
    }
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: c
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_string),
            name: c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            arguments: c
                .pointer("/function/arguments")
                .and_then(Value::as_str)
                .unwrap_or("{}")
                .to_string(),
        })
        .filter(|c| !c.name.is_empty())
        .collect();
    Ok(Answer {
        content,
        tool_calls,
        finish_reason: v
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_tool_call_fragments_assemble_across_reads() {
        let stream = concat!(
            ": keep-alive\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Let me \"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"check.\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"echo\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"text\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"hi\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n",
        );
        let mut a = Assembler::default();
        let mut text = String::new();
        // Split at every 7 bytes: lines arrive in pieces.
        let bytes = stream.as_bytes();
        for piece in bytes.chunks(7) {
            text.push_str(&a.feed(std::str::from_utf8(piece).unwrap()).unwrap());
        }
        assert!(a.done);
        let answer = a.finish();
        assert_eq!(text, "Let me check.");
        assert_eq!(answer.content, "Let me check.");
        assert_eq!(answer.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            answer.tool_calls,
            [ToolCall {
                id: "call_a".into(),
                name: "echo".into(),
                arguments: "{\"text\":\"hi\"}".into()
            }]
        );
        let m = answer.message();
        assert_eq!(m["tool_calls"][0]["function"]["name"], "echo");
    }

    #[test]
    fn an_error_chunk_or_garbage_is_an_error_not_a_silent_stop() {
        let mut a = Assembler::default();
        let e = a
            .feed("data: {\"error\":{\"message\":\"rate limited\"}}\n")
            .unwrap_err();
        assert!(e.to_string().contains("rate limited"), "{e}");
        let mut a = Assembler::default();
        assert!(a.feed("data: {nope\n").is_err());
        assert_eq!(
            error_message("{\"error\":{\"message\":\"bad key\"}}"),
            "bad key"
        );
    }

    #[test]
    fn a_whole_answer_is_read_too() {
        let mut seen = String::new();
        let a = whole_answer(
            r#"{"choices":[{"message":{"role":"assistant","content":"hello","tool_calls":[{"id":"c1","type":"function","function":{"name":"echo","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
            |t| seen.push_str(&t),
        )
        .unwrap();
        assert_eq!(seen, "hello");
        assert_eq!(a.tool_calls[0].id, "c1");
    }
}
