//! The messages between the host and a Node.js worker (`harness.mjs`), one JSON object
//! per frame (see `frame.rs`), its `type` first.
//!
//! The host reads a worker's messages strictly: a kind, field or error kind this module
//! does not know is a protocol violation, and the worker is stopped. The harness is
//! embedded in this crate, so it and these types change together; `tests` below run the
//! real harness through a conversation to hold them to that.

use std::fmt;
use std::path::Path;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::events::{ErrorKind, ExecutionEvent};

/// Host → worker.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum HostMessage<'a> {
    /// Run `execute` of a tool's entry file.
    Call(CallMessage<'a>),
    /// Fire the `AbortSignal` of call `id`.
    Cancel {
        /// The call's id on this worker.
        id: u64,
    },
}

impl HostMessage<'_> {
    /// Every kind, as its `type` (for the harness check).
    #[cfg(test)]
    pub(crate) const KINDS: [&'static str; 2] = ["call", "cancel"];

    /// The message's `type`.
    #[cfg(test)]
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            HostMessage::Call(_) => "call",
            HostMessage::Cancel { .. } => "cancel",
        }
    }
}

/// A call for a worker to run.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallMessage<'a> {
    /// The call's id on this worker (not the tool's `toolCallId`).
    pub id: u64,
    /// The entry file, as the worker sees it (inside its sandbox).
    pub entry: &'a Path,
    /// The code's version: entry modules are cached by path and version.
    pub version: &'a str,
    /// Passed to `execute` as `toolCallId`.
    pub tool_call_id: &'a str,
    /// The validated arguments.
    pub params: &'a Value,
    /// Most characters of text the result may carry; the worker cuts above it early.
    pub max_text: usize,
    /// An operation of the Platypus plugin whose entry file `entry` is, instead of a tool
    /// folder's `execute`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<crate::plugin::PluginMessage<'a>>,
}

/// Worker → host. Deserialised by hand, `type` first, so a large result streams into
/// its value instead of being buffered whole first (as serde's internally tagged enums do).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum WorkerMessage {
    /// Connected and ready for calls.
    Ready(Ready),
    /// A call's progress update.
    Progress(ProgressMessage),
    /// A console line or stdout/stderr output, a call's when `id` says which.
    Log(LogMessage),
    /// What a call's `execute` returned.
    Result(ResultMessage),
    /// How a call failed.
    Error(ErrorMessage),
}

/// The `type` of a worker's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum WorkerKind {
    Ready,
    Progress,
    Log,
    Result,
    Error,
}

impl WorkerKind {
    /// Every kind (for the harness check).
    #[cfg(test)]
    pub(crate) const ALL: [WorkerKind; 5] = [
        WorkerKind::Ready,
        WorkerKind::Progress,
        WorkerKind::Log,
        WorkerKind::Result,
        WorkerKind::Error,
    ];

    #[cfg(test)]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WorkerKind::Ready => "ready",
            WorkerKind::Progress => "progress",
            WorkerKind::Log => "log",
            WorkerKind::Result => "result",
            WorkerKind::Error => "error",
        }
    }
}

impl WorkerMessage {
    /// The message's `type`.
    #[cfg(test)]
    pub(crate) fn kind(&self) -> WorkerKind {
        match self {
            WorkerMessage::Ready(_) => WorkerKind::Ready,
            WorkerMessage::Progress(_) => WorkerKind::Progress,
            WorkerMessage::Log(_) => WorkerKind::Log,
            WorkerMessage::Result(_) => WorkerKind::Result,
            WorkerMessage::Error(_) => WorkerKind::Error,
        }
    }

    /// The call it is about, if any, and what it tells that call's lifecycle.
    pub(crate) fn into_event(self) -> Option<(Option<u64>, ExecutionEvent)> {
        Some(match self {
            WorkerMessage::Ready(_) => return None,
            WorkerMessage::Progress(p) => (Some(p.id), ExecutionEvent::Progress(p.content)),
            WorkerMessage::Log(l) => (
                l.id,
                ExecutionEvent::Log {
                    level: l.level,
                    text: l.text,
                },
            ),
            WorkerMessage::Result(r) => (
                Some(r.id),
                ExecutionEvent::Result {
                    truncated_from: r.truncated.then_some(r.original_length.unwrap_or(0)),
                    value: r.value,
                },
            ),
            WorkerMessage::Error(e) => (
                Some(e.id),
                ExecutionEvent::Error {
                    kind: e.kind.into(),
                    message: e.message,
                    stack: e.stack,
                },
            ),
        })
    }
}

/// The worker's first message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Ready {
    /// Its process id (in its own pid namespace when sandboxed).
    pub pid: u32,
    /// The Node.js version.
    pub node: String,
}

/// A progress update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProgressMessage {
    pub id: u64,
    /// MCP content blocks.
    pub content: Vec<Value>,
}

/// A line of output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogMessage {
    /// The call it came from; `null` for output no call can be tied to.
    pub id: Option<u64>,
    /// The console method or stream (`log`, `warn`, `stdout`, …).
    pub level: String,
    pub text: String,
}

/// A call's return value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ResultMessage {
    pub id: u64,
    /// Whether the worker cut the value to the call's `maxText`.
    pub truncated: bool,
    /// The value's JSON length before it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_length: Option<usize>,
    pub value: Value,
}

/// A call's failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ErrorMessage {
    pub id: u64,
    pub kind: WorkerErrorKind,
    pub message: String,
    /// Empty when there is none; absent from some failures.
    #[serde(default)]
    pub stack: String,
}

/// How a call failed in the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum WorkerErrorKind {
    /// The entry file (or an import) did not load.
    Load,
    /// The entry file has no `execute`.
    Export,
    /// Cancelled before `execute` started.
    Cancelled,
    /// `execute` threw or rejected.
    Throw,
    /// Its return value cannot be turned into JSON.
    Serialize,
    /// A Platypus plugin failed around the tool (manifest, settings, factory).
    Plugin,
}

impl WorkerErrorKind {
    /// Every kind (for the harness check).
    #[cfg(test)]
    pub(crate) const ALL: [WorkerErrorKind; 6] = [
        WorkerErrorKind::Load,
        WorkerErrorKind::Export,
        WorkerErrorKind::Cancelled,
        WorkerErrorKind::Throw,
        WorkerErrorKind::Serialize,
        WorkerErrorKind::Plugin,
    ];
}

impl From<WorkerErrorKind> for ErrorKind {
    fn from(kind: WorkerErrorKind) -> ErrorKind {
        match kind {
            WorkerErrorKind::Load => ErrorKind::Load,
            WorkerErrorKind::Export => ErrorKind::Export,
            WorkerErrorKind::Cancelled => ErrorKind::Cancelled,
            WorkerErrorKind::Throw => ErrorKind::Throw,
            WorkerErrorKind::Serialize => ErrorKind::Serialize,
            WorkerErrorKind::Plugin => ErrorKind::Plugin,
        }
    }
}

impl<'de> Deserialize<'de> for WorkerMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = WorkerMessage;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a worker message: a JSON object whose first field is `type`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WorkerMessage, A::Error> {
        match map.next_key::<std::borrow::Cow<'de, str>>()? {
            Some(key) if key == "type" => {}
            Some(key) => {
                return Err(de::Error::custom(format!(
                    "the first field must be `type`, not `{key}`"
                )));
            }
            None => return Err(de::Error::missing_field("type")),
        }
        let kind: WorkerKind = map.next_value()?;
        let rest = MapAccessDeserializer::new(map);
        Ok(match kind {
            WorkerKind::Ready => WorkerMessage::Ready(Ready::deserialize(rest)?),
            WorkerKind::Progress => WorkerMessage::Progress(ProgressMessage::deserialize(rest)?),
            WorkerKind::Log => WorkerMessage::Log(LogMessage::deserialize(rest)?),
            WorkerKind::Result => WorkerMessage::Result(ResultMessage::deserialize(rest)?),
            WorkerKind::Error => WorkerMessage::Error(ErrorMessage::deserialize(rest)?),
        })
    }
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
