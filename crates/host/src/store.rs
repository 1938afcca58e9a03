//! The interfaces a store implements: who the agents are, which tokens let whom in, and
//! the log of calls. The configuration file implements the first two and a tracing log the
//! third; a database-backed store replaces them without any surface changing.

use std::time::{Duration, SystemTime};

use toolhost_toolsets::AgentConfig;

use crate::{Caller, ConfigFile, Tokens};

/// A store that could not answer (its database is down, say). Surfaces report it as a
/// server error, never as "not found".
#[derive(Debug, thiserror::Error)]
#[error("the store failed: {0}")]
pub struct StoreError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// The agents a host serves and what each is granted.
#[async_trait::async_trait]
pub trait AgentStore: Send + Sync {
    /// Every agent's id, sorted.
    async fn agent_ids(&self) -> Result<Vec<String>, StoreError>;
    /// One agent's configuration, if it exists.
    async fn agent(&self, id: &str) -> Result<Option<AgentConfig>, StoreError>;
}

#[async_trait::async_trait]
impl AgentStore for ConfigFile {
    async fn agent_ids(&self) -> Result<Vec<String>, StoreError> {
        // A BTreeMap: already sorted.
        Ok(self.agents.keys().cloned().collect())
    }

    async fn agent(&self, id: &str) -> Result<Option<AgentConfig>, StoreError> {
        Ok(self.agents.get(id).cloned())
    }
}

/// Which bearer token authenticates whom.
#[async_trait::async_trait]
pub trait TokenStore: Send + Sync {
    /// No tokens at all: the surface serves its one default caller, on loopback only.
    fn is_empty(&self) -> bool;
    /// The caller an `Authorization` header value authenticates; `None` for any other
    /// value.
    async fn authenticate(&self, authorization: &str) -> Result<Option<Caller>, StoreError>;
    /// The caller `authorization` authenticates at `resource`, the canonical URI of the
    /// endpoint asked (`https://tools.example.com/mcp`): an OAuth access token must have
    /// been issued for it. Stores of Toolhost's own tokens, which name no resource, answer
    /// as [`TokenStore::authenticate`] does.
    async fn authenticate_at(
        &self,
        authorization: &str,
        resource: &str,
    ) -> Result<Option<Caller>, StoreError> {
        let _ = resource;
        self.authenticate(authorization).await
    }
    /// Forgets what it remembers of tokens and users: one was revoked, or a role changed.
    fn forget_remembered(&self) {}
}

#[async_trait::async_trait]
impl TokenStore for Tokens {
    fn is_empty(&self) -> bool {
        Tokens::is_empty(self)
    }

    async fn authenticate(&self, authorization: &str) -> Result<Option<Caller>, StoreError> {
        Ok(Tokens::authenticate(self, authorization).cloned())
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The tool returned a result.
    Ok,
    /// The call ended in an error result (bad arguments, a thrown error).
    Error,
    /// The caller cancelled it, or went away before it ended.
    Abandoned,
    /// Its deadline or idle timer ran out.
    TimedOut,
    /// It was refused before anything ran: a tool the caller may not see, or a scope its
    /// credential lacks.
    Denied,
}

/// One call, as the call log keeps it: never its result, and its arguments only with
/// `sensitive` values replaced and their size capped ([`CallRecord::arguments_for_log`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// The call's id, when its surface named it (the API's calls); else the log makes one.
    pub id: Option<String>,
    /// Who called.
    pub user: String,
    /// The stored token it came with.
    pub token: Option<String>,
    /// The agent it was called as (a bound token's, or an agent's endpoint).
    pub agent: Option<String>,
    /// The tool's name as the caller called it.
    pub tool: String,
    /// The tool set it was granted through, when known.
    pub tool_set: Option<String>,
    /// Which surface it came through (`mcp-stdio`, `mcp-http`, `api`, `console`, `cli`).
    pub surface: &'static str,
    /// When it began.
    pub started: SystemTime,
    /// How long it took.
    pub duration: Duration,
    /// How it ended.
    pub outcome: CallOutcome,
    /// What went wrong, for an error (its first 500 characters).
    pub error: Option<String>,
    /// Bytes of the result's JSON.
    pub result_bytes: u64,
    /// The arguments, `sensitive` ones replaced, at most [`MAX_LOGGED_ARGUMENTS`] bytes.
    pub arguments: String,
    /// The result as JSON, at most [`MAX_LOGGED_RESULT`] bytes
    /// ([`CallRecord::result_for_log`]); `None` for a call that never had one.
    pub result: Option<String>,
}

/// The most bytes of arguments a call-log row keeps.
pub const MAX_LOGGED_ARGUMENTS: usize = 4096;

/// The most bytes of a result a call-log row keeps (16 KiB): enough for the console's
/// history to show what a call returned, small enough that 100,000 rows stay cheap.
pub const MAX_LOGGED_RESULT: usize = 16 * 1024;

impl CallRecord {
    /// `args` as a call-log row keeps them: each `sensitive` input replaced, and, beyond
    /// [`MAX_LOGGED_ARGUMENTS`] bytes, only the argument names and the size.
    pub fn arguments_for_log(args: &serde_json::Value, sensitive: &[String]) -> String {
        let mut args = args.clone();
        if let serde_json::Value::Object(map) = &mut args {
            for name in sensitive {
                if let Some(v) = map.get_mut(name) {
                    *v = serde_json::Value::String(toolhost_runtime::REDACTED.to_string());
                }
            }
        }
        let text = args.to_string();
        if text.len() <= MAX_LOGGED_ARGUMENTS {
            return text;
        }
        let names: Vec<&String> = args
            .as_object()
            .map(|m| m.keys().take(100).collect())
            .unwrap_or_default();
        serde_json::json!({ "truncated_from_bytes": text.len(), "names": names }).to_string()
    }

    /// `result` as a call-log row keeps it: `{content, isError, structuredContent}` as
    /// the surfaces send it. The runtime has already redacted it (every `sensitive`
    /// argument's value, in each of its spellings, is out of every result), so nothing is
    /// replaced here. Beyond [`MAX_LOGGED_RESULT`] bytes, its text only, cut to fit, with
    /// `truncated_from_bytes` saying how large it was (images and structured content are
    /// dropped then: a row is no place for a megabyte).
    pub fn result_for_log(result: &toolhost_runtime::ToolResult) -> String {
        let text = serde_json::to_string(result).unwrap_or_else(|_| "{}".to_string());
        if text.len() <= MAX_LOGGED_RESULT {
            return text;
        }
        let joined = result.joined_text();
        // Escaping can make a character up to six bytes: halve until it fits.
        let mut keep = MAX_LOGGED_RESULT;
        loop {
            let cut: String = joined.chars().take(keep).collect();
            let out = serde_json::json!({
                "truncated_from_bytes": text.len(),
                "isError": result.is_error,
                "content": [{"type": "text", "text": format!("{cut}…")}],
            })
            .to_string();
            if out.len() <= MAX_LOGGED_RESULT || keep == 0 {
                return out;
            }
            keep /= 2;
        }
    }
}

/// 2025-11-25 MCP sessions kept where every gateway of a fleet finds them, so a session
/// opened on one continues on another. `key` is the SHA-256 of the endpoint's path and
/// the session id (never the id itself); `initialize` is the client's `initialize`
/// parameters as JSON.
#[async_trait::async_trait]
pub trait SessionRecords: Send + Sync {
    /// The session's user and `initialize` parameters, if kept.
    async fn load(&self, key: &str) -> Result<Option<(String, String)>, StoreError>;
    /// Keeps a session of `user`.
    async fn save(&self, key: &str, user: &str, initialize: &str) -> Result<(), StoreError>;
    /// Forgets a session.
    async fn delete(&self, key: &str) -> Result<(), StoreError>;
}

/// Where finished calls are recorded.
pub trait CallLog: Send + Sync {
    /// Records one call. Called on the call's own path, as its result goes out: it must
    /// never wait (a store queues the row and writes it later, off the call path). A log
    /// that cannot keep a row says so in the server's logs, never to the caller.
    fn record(&self, call: CallRecord);

    /// Rows taken, written and lost so far (for metrics); zeros for a log that does not
    /// count them.
    fn counts(&self) -> LogCounts {
        LogCounts::default()
    }
}

/// What a call log did with the rows it was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogCounts {
    /// Rows taken.
    pub accepted: u64,
    /// Rows written.
    pub written: u64,
    /// Rows lost (the queue was full), each counted and warned about.
    pub lost: u64,
}

/// The call log of a host without a store: one `debug` line per call (`TOOLHOST_LOG=debug`
/// shows them).
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingCallLog;

impl CallLog for TracingCallLog {
    fn record(&self, call: CallRecord) {
        tracing::debug!(
            user = %call.user,
            agent = call.agent.as_deref().unwrap_or(""),
            tool = %call.tool,
            surface = call.surface,
            duration_ms = call.duration.as_millis() as u64,
            outcome = ?call.outcome,
            "call"
        );
    }
}
