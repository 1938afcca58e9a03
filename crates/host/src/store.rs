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
    /// The call ended in an error result (bad arguments, a thrown error, a deadline).
    Error,
    /// The caller went away or cancelled it before it ended.
    Abandoned,
}

/// One call, as the call log keeps it. Never its arguments or result: they may hold
/// secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// Who called.
    pub user: String,
    /// The tool's name as the caller called it.
    pub tool: String,
    /// Which surface it came through (`mcp`, `http`, `cli`).
    pub surface: &'static str,
    /// When it began.
    pub started: SystemTime,
    /// How long it took.
    pub duration: Duration,
    /// How it ended.
    pub outcome: CallOutcome,
}

/// Where finished calls are recorded.
pub trait CallLog: Send + Sync {
    /// Records one call. Called on the call's own path, as its result goes out: it must
    /// never wait (a store queues the row and writes it later, off the call path). A log
    /// that cannot keep a row says so in the server's logs, never to the caller.
    fn record(&self, call: CallRecord);
}

/// The call log of a host without a store: one `debug` line per call (`TOOLHOST_LOG=debug`
/// shows them).
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingCallLog;

impl CallLog for TracingCallLog {
    fn record(&self, call: CallRecord) {
        tracing::debug!(
            user = %call.user,
            tool = %call.tool,
            surface = call.surface,
            duration_ms = call.duration.as_millis() as u64,
            outcome = ?call.outcome,
            "call"
        );
    }
}
