//! The subjects and messages of the fleet, on NATS core (request and streamed reply; no
//! JetStream: a tool call must never be delivered twice).
//!
//! | Subject | From → to | Message |
//! |---|---|---|
//! | `toolhost.call.RUNNER` | gateway → runner, reply inbox `_INBOX.GATEWAY.…` | [`CallRequest`], answered by [`Frame`]s |
//! | `toolhost.cancel.RUNNER.CALL` | gateway → runner | [`Cancel`] |
//! | `toolhost.alive.GATEWAY` | runner → gateway (request) | [`AliveAsk`] → [`AliveAnswer`] |
//! | `toolhost.bundle.get` | runner → any gateway (request) | [`BundleAsk`] → the bytes |
//! | `toolhost.runners.RUNNER` | runner → all, every second | [`Announcement`] |
//! | `toolhost.gateways.GATEWAY` | gateway → all, every second | [`Announcement`] |
//! | `toolhost.catalog.changed` | publisher or gateway → gateways | [`CatalogChanged`] |
//!
//! Everything is JSON in the message body. Headers carry nothing: a call's secrets travel
//! in its body only, to the one runner that runs it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every subject starts with it.
pub const PREFIX: &str = "toolhost";

/// Where `runner` takes calls.
pub fn call_subject(runner: &str) -> String {
    format!("{PREFIX}.call.{runner}")
}

/// Where `runner` hears that call `call` is to stop.
pub fn cancel_subject(runner: &str, call: &str) -> String {
    format!("{PREFIX}.cancel.{runner}.{call}")
}

/// Where `runner` hears every cancellation addressed to it.
pub fn cancel_filter(runner: &str) -> String {
    format!("{PREFIX}.cancel.{runner}.*")
}

/// Where `gateway` answers whether it still waits for calls.
pub fn alive_subject(gateway: &str) -> String {
    format!("{PREFIX}.alive.{gateway}")
}

/// Where gateways hand out bundles.
pub const BUNDLE_SUBJECT: &str = "toolhost.bundle.get";

/// Where `runner` announces itself.
pub fn runner_subject(runner: &str) -> String {
    format!("{PREFIX}.runners.{runner}")
}

/// Every runner's announcements.
pub const RUNNERS: &str = "toolhost.runners.*";

/// Where `gateway` announces itself.
pub fn gateway_subject(gateway: &str) -> String {
    format!("{PREFIX}.gateways.{gateway}")
}

/// Every gateway's announcements.
pub const GATEWAYS: &str = "toolhost.gateways.*";

/// Where a change of the shared catalog is announced.
pub const CATALOG_CHANGED: &str = "toolhost.catalog.changed";

/// Where gateways relay a client's message for a 2025-11-25 session to the gateway that
/// runs the request it concerns.
pub const SESSION_RELAY: &str = "toolhost.sessions.relay";

/// Where a gateway says that tokens or users changed (the body is empty).
pub const ACCESS_CHANGED: &str = "toolhost.access.changed";

/// A client's message for a session, relayed.
#[derive(Debug, Serialize, Deserialize)]
pub struct Relayed {
    /// The session's key (a hash: never its id).
    pub key: String,
    /// The JSON-RPC message.
    pub message: String,
    /// The gateway that relayed it (which handled it already).
    pub from: String,
}

/// The queue group gateways serve bundles in (one of them answers each request).
pub const GATEWAY_QUEUE: &str = "gateways";

/// A call, as a gateway hands it to a runner.
#[derive(Debug, Serialize, Deserialize)]
pub struct CallRequest {
    /// Unique in the fleet: the gateway's id, then its own counter.
    pub call: String,
    /// The gateway waiting for it (asked whether it still waits).
    pub gateway: String,
    /// The tool's name, for logs.
    pub tool: String,
    /// The tool folder's bundle (see [`crate::bundle`]).
    pub bundle: String,
    /// The user it runs for (the user-name rule applies on the runner too).
    pub user: String,
    /// The tool's `toolCallId`.
    pub tool_call_id: String,
    /// Validated arguments, defaults applied.
    pub args: Value,
    /// What the tool's environment holds: the gateway's `[env]` and `[resources]`.
    pub env: CallEnv,
    /// Most bytes of text the result may carry.
    pub max_result_bytes: usize,
    /// How long the call may take, from now, in milliseconds.
    pub deadline_ms: u64,
    /// When the gateway sent it (ms since the Unix epoch). A runner refuses a call older
    /// than [`ACCEPT_WITHIN`]: by then its gateway may have given it to another runner.
    pub sent_at_ms: u64,
}

/// A runner accepts a call only this soon after it was sent.
pub const ACCEPT_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

/// A gateway waits this long for a runner's first word before trying the next runner:
/// [`ACCEPT_WITHIN`] plus the clock difference tolerated between nodes.
pub const ACCEPT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A call's environment: the operator's `[env]` and `[resources]`, as the gateway has them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallEnv {
    /// `[env]`.
    pub vars: BTreeMap<String, String>,
    /// `[resources]`.
    pub resources: serde_json::Map<String, Value>,
}

impl CallEnv {
    /// Identifies it: runners keep one runtime per environment.
    pub fn fingerprint(&self) -> [u8; 32] {
        let text = serde_json::to_string(self).unwrap_or_default();
        *blake3::hash(text.as_bytes()).as_bytes()
    }
}

/// What a runner says about a call, on the call's reply inbox, in order.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "frame", rename_all = "snake_case")]
pub enum Frame {
    /// The runner took the call: from now on it is never sent elsewhere.
    Accepted {
        /// The runner.
        runner: String,
    },
    /// The runner is full; the call did not start there.
    Busy {
        /// The runner.
        runner: String,
        /// Calls it runs.
        running: usize,
    },
    /// The call is still running (every second, so a silent runner is known lost).
    Running,
    /// A progress update: MCP content blocks.
    Progress {
        /// The blocks.
        content: Vec<Value>,
    },
    /// The call's result, normalised and redacted by the runner.
    Result {
        /// A `{content, isError, structuredContent}` object.
        result: Value,
    },
}

/// Stops a call a runner runs.
#[derive(Debug, Serialize, Deserialize)]
pub struct Cancel {
    /// Stop now rather than ask.
    pub kill: bool,
}

/// A runner asks a gateway which of its calls the gateway still waits for.
#[derive(Debug, Serialize, Deserialize)]
pub struct AliveAsk {
    /// The asking runner.
    pub runner: String,
    /// Calls of this gateway it runs.
    pub calls: Vec<String>,
}

/// A gateway's answer: the calls nobody waits for any more.
#[derive(Debug, Serialize, Deserialize)]
pub struct AliveAnswer {
    /// Calls to stop.
    pub gone: Vec<String>,
}

/// A runner asks a gateway for part of a bundle.
#[derive(Debug, Serialize, Deserialize)]
pub struct BundleAsk {
    /// The bundle's name.
    pub hash: String,
    /// Where the part starts.
    pub offset: usize,
}

/// Most bytes of a bundle in one reply (under NATS's default 1 MiB payload).
pub const BUNDLE_CHUNK: usize = 512 * 1024;

/// The header of a bundle part's reply giving the bundle's whole size.
pub const SIZE_HEADER: &str = "Toolhost-Bundle-Size";
/// The header of a bundle reply saying why there are no bytes.
pub const ERROR_HEADER: &str = "Toolhost-Error";

/// What a node says about itself, every second: the host's [`toolhost_host::NodeStatus`],
/// which `toolhost cluster status`, the API and the console show as it is.
pub type Announcement = toolhost_host::NodeStatus;

/// The shared catalog changed.
#[derive(Debug, Serialize, Deserialize)]
pub struct CatalogChanged {
    /// The new epoch.
    pub epoch: i64,
}
