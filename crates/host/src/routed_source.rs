//! The tools of a surface's main endpoint: the catalog, or, for a caller whose credential
//! is bound to an agent, that agent's tools only (the credential *is* the agent).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;
use toolhost_runtime::Target;
use toolhost_toolsets::Registry;

use crate::store::AgentStore;
use crate::{AgentSource, Caller, Change, ToolInfo, ToolSource, WatchedCatalog};

/// The catalog for unbound callers, an agent's turn for bound ones.
pub struct RoutedSource {
    catalog: Arc<dyn ToolSource>,
    registry: Option<Arc<Registry>>,
    agents: Arc<dyn AgentStore>,
    watched: Arc<WatchedCatalog>,
    /// One source per agent in use, so each bound caller keeps its turn.
    by_agent: Mutex<HashMap<String, Arc<AgentSource>>>,
}

impl RoutedSource {
    pub(crate) fn new(
        catalog: Arc<dyn ToolSource>,
        registry: Option<Arc<Registry>>,
        agents: Arc<dyn AgentStore>,
        watched: Arc<WatchedCatalog>,
    ) -> RoutedSource {
        RoutedSource {
            catalog,
            registry,
            agents,
            watched,
            by_agent: Mutex::new(HashMap::new()),
        }
    }

    /// The source of the agent `caller` is bound to; `None` for an unbound caller, and an
    /// empty source's `Err` for an agent that no longer exists.
    async fn bound(&self, caller: &Caller) -> Option<Result<Arc<AgentSource>, ()>> {
        let agent = caller.agent.as_deref()?;
        let Some(registry) = &self.registry else {
            return Some(Err(()));
        };
        match self.agents.agent(agent).await {
            Ok(Some(_)) => {}
            Ok(None) => return Some(Err(())),
            Err(e) => {
                tracing::warn!(agent, "cannot read the agent: {e}");
                return Some(Err(()));
            }
        }
        let mut by_agent = self.by_agent.lock().unwrap_or_else(|e| e.into_inner());
        let source = by_agent.entry(agent.to_string()).or_insert_with(|| {
            Arc::new(AgentSource::new(
                Arc::clone(registry),
                Arc::clone(&self.agents),
                agent,
                &self.watched,
            ))
        });
        Some(Ok(Arc::clone(source)))
    }
}

#[async_trait::async_trait]
impl ToolSource for RoutedSource {
    async fn tools(&self, caller: &Caller) -> Vec<ToolInfo> {
        match self.bound(caller).await {
            None => self.catalog.tools(caller).await,
            Some(Ok(agent)) => agent.tools(caller).await,
            Some(Err(())) => Vec::new(),
        }
    }

    async fn resolve(&self, caller: &Caller, name: &str) -> Option<Target> {
        match self.bound(caller).await {
            None => self.catalog.resolve(caller, name).await,
            Some(Ok(agent)) => agent.resolve(caller, name).await,
            Some(Err(())) => None,
        }
    }

    fn changes(&self) -> broadcast::Receiver<Change> {
        // Agent sources announce the same catalog edits.
        self.catalog.changes()
    }
}
