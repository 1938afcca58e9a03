//! The store as the host's stores: agents, tokens and the call log, with the
//! configuration file's agents and tokens kept beside the stored ones (read-only, and
//! first: a stored entry never shadows one the operator wrote down).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use toolhost_host::store::{
    AgentStore, CallLog, CallOutcome, CallRecord, SessionRecords, StoreError as HostStoreError,
    TokenStore,
};
use toolhost_host::{Caller, Persistence, user_space};
use toolhost_toolsets::AgentConfig;

use crate::remembered::{Remember, Remembered};
use crate::{Bearer, CallQueue, CallRow, Outcome, Store, StoreError};

fn host_error(e: StoreError) -> HostStoreError {
    HostStoreError(Box::new(e))
}

/// The configuration file's agents, then the stored ones.
pub struct StoredAgents {
    store: Store,
    config: Arc<dyn AgentStore>,
    remembered: Remembered<Option<AgentConfig>>,
}

impl StoredAgents {
    /// `config`'s agents (read-only) beside `store`'s.
    pub fn new(store: Store, config: Arc<dyn AgentStore>) -> StoredAgents {
        StoredAgents::remembering(store, config, Remember::NEVER)
    }

    /// The same, remembering the store's answers to use while it fails, as `how` says
    /// (agents are always asked first: an edit reaches the next turn).
    pub fn remembering(store: Store, config: Arc<dyn AgentStore>, how: Remember) -> StoredAgents {
        StoredAgents {
            store,
            config,
            remembered: Remembered::new(Remember {
                fresh_for: std::time::Duration::ZERO,
                ..how
            }),
        }
    }
}

#[async_trait::async_trait]
impl AgentStore for StoredAgents {
    async fn agent_ids(&self) -> Result<Vec<String>, HostStoreError> {
        let mut ids = self.config.agent_ids().await?;
        let mut cursor: Option<String> = None;
        loop {
            let page = self
                .store
                .agents(cursor.as_deref(), 500)
                .await
                .map_err(host_error)?;
            ids.extend(page.items.into_iter().map(|a| a.id));
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    async fn agent(&self, id: &str) -> Result<Option<AgentConfig>, HostStoreError> {
        if let Some(agent) = self.config.agent(id).await? {
            return Ok(Some(agent));
        }
        // Asked each time (a turn begins with it, and an edit must reach the next turn);
        // remembered only to use while the store fails.
        match self.store.agent(id).await {
            Ok(stored) => {
                let agent = stored.map(|a| a.spec.to_config());
                self.remembered.put(id, agent.clone());
                Ok(agent)
            }
            Err(e) => match self.remembered.stale(id) {
                Some(known) => {
                    tracing::warn!("the store failed ({e}); using agent {id} as last known");
                    Ok(known)
                }
                None => Err(host_error(e)),
            },
        }
    }
}

/// Stored `th_` tokens, then the configuration file's.
pub struct StoredTokens {
    store: Store,
    config: Arc<dyn TokenStore>,
    /// Where homes are (`DATA_PATH`), for the callers tokens name.
    data: Option<PathBuf>,
    /// By the token's SHA-256.
    remembered: Remembered<Option<Bearer>>,
}

impl StoredTokens {
    /// `store`'s tokens beside `config`'s; callers' homes under `data`.
    pub fn new(store: Store, config: Arc<dyn TokenStore>, data: Option<PathBuf>) -> StoredTokens {
        StoredTokens::remembering(store, config, data, Remember::NEVER)
    }

    /// The same, remembering the store's answers as `how` says.
    pub fn remembering(
        store: Store,
        config: Arc<dyn TokenStore>,
        data: Option<PathBuf>,
        how: Remember,
    ) -> StoredTokens {
        StoredTokens {
            store,
            config,
            data,
            remembered: Remembered::new(how),
        }
    }

    /// The store's answer for `token`: remembered when fresh, else asked (and, while the
    /// store fails, remembered if not too old).
    async fn bearer(&self, token: &str) -> Result<Option<Bearer>, HostStoreError> {
        let key = toolhost_host::hash_token(token);
        if let Some(known) = self.remembered.fresh(&key) {
            return Ok(known);
        }
        match self.store.authenticate(token).await {
            Ok(bearer) => {
                self.remembered.put(&key, bearer.clone());
                Ok(bearer)
            }
            Err(e) => match self.remembered.stale(&key) {
                Some(known) => {
                    tracing::warn!("the store failed ({e}); using the token as last known");
                    Ok(known)
                }
                None => Err(host_error(e)),
            },
        }
    }
}

#[async_trait::async_trait]
impl TokenStore for StoredTokens {
    fn forget_remembered(&self) {
        self.remembered.clear();
        self.config.forget_remembered();
    }

    fn is_empty(&self) -> bool {
        // A store always has its first admin's token.
        false
    }

    async fn authenticate(&self, authorization: &str) -> Result<Option<Caller>, HostStoreError> {
        let Some((scheme, token)) = authorization.trim().split_once(' ') else {
            return Ok(None);
        };
        let token = token.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || !token.starts_with("th_") {
            return self.config.authenticate(authorization).await;
        }
        let Some(bearer) = self.bearer(token).await? else {
            return Ok(None);
        };
        // The store's user names passed the user-name rule when they were stored.
        let space = user_space(self.data.as_deref(), Some(&bearer.user))
            .map_err(|e| HostStoreError(Box::new(e)))?;
        Ok(Some(Caller {
            space,
            role: bearer.role,
            scopes: bearer.scopes,
            agent: bearer.agent,
            token: Some(bearer.token),
        }))
    }
}

impl CallLog for CallQueue {
    fn record(&self, call: CallRecord) {
        let started_at = call
            .started
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        self.push(CallRow {
            id: call.id.unwrap_or_else(crate::new_id),
            started_at,
            duration_ms: i64::try_from(call.duration.as_millis()).unwrap_or(i64::MAX),
            principal: call.user,
            token_id: call.token,
            agent_id: call.agent,
            transport: call.surface.to_string(),
            tool: call.tool,
            tool_set: call.tool_set,
            outcome: match call.outcome {
                CallOutcome::Ok => Outcome::Success,
                CallOutcome::Error => Outcome::Error,
                CallOutcome::Abandoned => Outcome::Cancelled,
                CallOutcome::TimedOut => Outcome::Timeout,
                CallOutcome::Denied => Outcome::Denied,
            },
            error: call.error,
            result_bytes: i64::try_from(call.result_bytes).unwrap_or(i64::MAX),
            arguments: call.arguments,
            result: call.result,
        });
    }

    fn counts(&self) -> toolhost_host::store::LogCounts {
        let c = CallQueue::counts(self);
        toolhost_host::store::LogCounts {
            accepted: c.accepted.load(std::sync::atomic::Ordering::Relaxed),
            written: c.written.load(std::sync::atomic::Ordering::Relaxed),
            lost: c.lost.load(std::sync::atomic::Ordering::Relaxed),
        }
    }
}

/// A store and its call queue, as the host's [`Persistence`].
#[derive(Clone, Debug)]
pub struct Persisted {
    store: Store,
    queue: CallQueue,
    remember: Remember,
    share_sessions: bool,
}

impl Persisted {
    /// `store`, with the writer of its call log (started here, inside a Tokio runtime).
    pub fn start(store: Store, options: crate::QueueOptions) -> Persisted {
        let queue = CallQueue::start(store.clone(), options);
        Persisted {
            store,
            queue,
            remember: Remember::NEVER,
            share_sessions: false,
        }
    }

    /// Keeps 2025-11-25 MCP sessions in the store, for every gateway of a fleet.
    pub fn sharing_sessions(mut self) -> Persisted {
        self.share_sessions = true;
        self
    }

    /// Remembers tokens and agents as `how` says (a fleet's gateways: [`Remember::FLEET`]).
    pub fn remembering(mut self, how: Remember) -> Persisted {
        self.remember = how;
        self
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The call log's queue.
    pub fn queue(&self) -> &CallQueue {
        &self.queue
    }
}

impl Persistence for Persisted {
    fn agents(&self, config: Arc<dyn AgentStore>) -> Arc<dyn AgentStore> {
        Arc::new(StoredAgents::remembering(
            self.store.clone(),
            config,
            self.remember,
        ))
    }

    fn tokens(&self, config: Arc<dyn TokenStore>, data: Option<&Path>) -> Arc<dyn TokenStore> {
        Arc::new(StoredTokens::remembering(
            self.store.clone(),
            config,
            data.map(Path::to_path_buf),
            self.remember,
        ))
    }

    fn call_log(&self) -> Arc<dyn CallLog> {
        Arc::new(self.queue.clone())
    }

    fn mcp_sessions(&self) -> Option<Arc<dyn SessionRecords>> {
        self.share_sessions
            .then(|| Arc::new(self.store.clone()) as Arc<dyn SessionRecords>)
    }

    fn secret(&self, owner: String, name: String) -> toolhost_host::plugins::SecretFuture {
        let store = self.store.clone();
        Box::pin(async move {
            match store.secret(&owner, &name).await {
                Ok(v) => v,
                Err(e) => {
                    tracing::warn!("reading secret `{name}` of `{owner}` from the store: {e}");
                    None
                }
            }
        })
    }
}

#[async_trait::async_trait]
impl SessionRecords for Store {
    async fn load(&self, key: &str) -> Result<Option<(String, String)>, HostStoreError> {
        self.mcp_session(key).await.map_err(host_error)
    }

    async fn save(&self, key: &str, user: &str, initialize: &str) -> Result<(), HostStoreError> {
        self.save_mcp_session(key, user, initialize)
            .await
            .map_err(host_error)
    }

    async fn delete(&self, key: &str) -> Result<(), HostStoreError> {
        self.delete_mcp_session(key).await.map_err(host_error)
    }
}
