//! An agent's resolved tool sets as a [`ToolSource`]: what `toolhost mcp --agent ID` and
//! `/agents/ID/mcp` serve.
//!
//! Turns: a caller's `tools/list` begins a new turn for that caller (factories run, MCP
//! servers are listed); their calls run against their current turn. The previous turn
//! ends, and its closers run, when the next one begins or the source is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Map;
use tokio::sync::broadcast;
use toolhost_runtime::Target;
use toolhost_toolsets::{Annotations, Registry, Turn, TurnRequest};

use crate::store::AgentStore;
use crate::{Caller, Change, Hints, ToolInfo, ToolSource, WatchedCatalog};

/// Serves one agent's tools: a turn per caller, resolved through the tool-set registry
/// from the agent's grants as they are when the turn begins (an edited agent's next turn
/// has its new grants).
pub struct AgentSource {
    registry: Arc<Registry>,
    agents: Arc<dyn AgentStore>,
    agent: String,
    /// The current turn of each caller (by user), with the registry's generation it was
    /// resolved at.
    turns: Mutex<HashMap<String, (u64, Arc<Turn>)>>,
    changes: broadcast::Sender<Change>,
}

impl AgentSource {
    /// Serves `agent` of `agents`; `catalog` is the one the registry's folder tool sets
    /// read, and its edits are announced as changes. Must be created inside a Tokio
    /// runtime.
    pub fn new(
        registry: Arc<Registry>,
        agents: Arc<dyn AgentStore>,
        agent: &str,
        catalog: &WatchedCatalog,
    ) -> AgentSource {
        let (changes, _) = broadcast::channel(64);
        catalog.forward(None, &changes);
        AgentSource {
            registry,
            agents,
            agent: agent.to_string(),
            turns: Mutex::new(HashMap::new()),
            changes,
        }
    }

    /// Resolves a new turn for `caller`, making it their current one.
    async fn begin_turn(&self, caller: &Caller) -> Option<Arc<Turn>> {
        let agent = match self.agents.agent(&self.agent).await {
            Ok(Some(agent)) => agent,
            Ok(None) => {
                tracing::warn!(agent = %self.agent, "cannot resolve a turn: the agent is gone");
                return None;
            }
            Err(e) => {
                tracing::warn!(agent = %self.agent, "cannot resolve a turn: {e}");
                return None;
            }
        };
        // The agent's own workspace and organisation, as every surface's turns have them.
        let request = TurnRequest {
            user_id: Some(caller.user().to_string()),
            workspace_id: agent.workspace.clone(),
            org_id: agent.org.clone(),
            frontend_url: None,
        };
        let grants = agent.grants;
        let generation = self.registry.generation();
        let turn = Arc::new(
            self.registry
                .resolve_grants(&self.agent, &grants, &request)
                .await,
        );
        for w in &turn.warnings {
            tracing::warn!(agent = %self.agent, user = caller.user(), "turn: {w:?}");
        }
        let previous = self
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(caller.user().to_string(), (generation, Arc::clone(&turn)));
        // Dropping the last handle of a turn runs its closers.
        drop(previous);
        Some(turn)
    }

    async fn current_turn(&self, caller: &Caller) -> Option<Arc<Turn>> {
        let current = self
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(caller.user())
            .cloned();
        match current {
            // A turn resolved before an MCP server was replaced or removed may hold its
            // old connection's tools.
            Some((generation, turn)) if generation == self.registry.generation() => Some(turn),
            _ => self.begin_turn(caller).await,
        }
    }
}

#[async_trait::async_trait]
impl ToolSource for AgentSource {
    async fn tools(&self, caller: &Caller) -> Vec<ToolInfo> {
        let Some(turn) = self.begin_turn(caller).await else {
            return Vec::new();
        };
        turn.tools
            .iter()
            .map(|t| ToolInfo {
                name: t.name.clone(),
                title: t.title(),
                description: t.description(),
                input_schema: Arc::new(match t.input_schema() {
                    serde_json::Value::Object(m) => m,
                    _ => Map::new(),
                }),
                hints: hints(t.annotations()),
            })
            .collect()
    }

    async fn resolve(&self, caller: &Caller, name: &str) -> Option<Target> {
        let turn = self.current_turn(caller).await?;
        turn.tool(name).map(|t| t.target())
    }

    fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    async fn close_turns(&self) {
        let turns: Vec<Arc<Turn>> = self
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, (_, turn))| turn)
            .collect();
        for turn in turns {
            let report = turn.close().await;
            for (set, e) in &report.failed {
                tracing::warn!(agent = %self.agent, tool_set = %set, "closer failed: {e}");
            }
        }
    }

    fn agent(&self) -> Option<&str> {
        Some(&self.agent)
    }
}

/// A tool set's annotations as hints; `None` when it gives none (the deadline is not a
/// hint: it goes with the call, see [`ToolSource::resolve`]).
fn hints(a: &Annotations) -> Option<Hints> {
    let Annotations {
        read_only,
        destructive,
        idempotent,
        open_world,
        timeout: _,
    } = a.clone();
    let hints = Hints {
        read_only,
        destructive,
        idempotent,
        open_world,
    };
    (hints != Hints::default()).then_some(hints)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use toolhost_catalog::Catalog;
    use toolhost_runtime::UserSpace;
    use toolhost_toolsets::{
        AgentConfig, Annotations, BootOptions, CorePlugins, Grant, Owner, ToolMap, ToolSet, Tools,
        ToolsetsConfig, typed_tool,
    };

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tool_sets_annotations_travel_with_the_tool() {
        let annotated = |name: &str, annotations| {
            typed_tool(
                name,
                "Waits.",
                annotations,
                |_args: serde_json::Value, _ctx| async move { Ok(serde_json::json!({})) },
            )
        };
        let tools = ToolMap::new()
            .with(annotated(
                "quick",
                Annotations {
                    timeout: Some(Duration::from_millis(200)),
                    ..Annotations::default()
                },
            ))
            .with(annotated("plain", Annotations::default()))
            .with(annotated("reader", Annotations::read_only()));
        let set = ToolSet::new("s", "S", "Tests", "a test set", Tools::Static(tools));
        let mut config = ToolsetsConfig::default();
        config.agents.insert(
            "a".into(),
            AgentConfig {
                grants: vec![Grant::tool_set("s")],
                ..Default::default()
            },
        );
        let registry = Registry::boot(
            CorePlugins::new(),
            BootOptions {
                enabled: None,
                config,
                extra_sets: vec![(
                    set,
                    Owner::Plugin {
                        name: "extra".into(),
                    },
                )],
                external: Vec::new(),
                third_party: Vec::new(),
            },
        )
        .unwrap();
        let catalog = WatchedCatalog::unwatched(Catalog::scan(Vec::new()));
        let mut file = crate::ConfigFile::default();
        file.agents.insert(
            "a".into(),
            AgentConfig {
                grants: vec![Grant::tool_set("s")],
                ..Default::default()
            },
        );
        let source = AgentSource::new(Arc::new(registry), Arc::new(file), "a", &catalog);
        let caller = Caller::new(UserSpace {
            user: "tester".into(),
            home: "/nonexistent".into(),
        });
        // The hints are listed; the deadline is not a hint but goes with the call.
        let listed: HashMap<String, Option<Hints>> = source
            .tools(&caller)
            .await
            .into_iter()
            .map(|t| (t.name, t.hints))
            .collect();
        assert_eq!(listed["quick"], None);
        assert_eq!(listed["plain"], None);
        assert_eq!(
            listed["reader"],
            Some(Hints {
                read_only: Some(true),
                destructive: Some(false),
                idempotent: Some(true),
                open_world: Some(false),
            })
        );
        let quick = source.resolve(&caller, "quick").await.unwrap();
        assert_eq!(quick.timeout, Some(Duration::from_millis(200)));
        let plain = source.resolve(&caller, "plain").await.unwrap();
        assert_eq!(plain.timeout, None);
        assert!(source.resolve(&caller, "nope").await.is_none());
    }
}
