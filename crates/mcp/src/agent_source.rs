//! An agent's resolved tool sets as a [`ToolSource`]: what `toolhost mcp --agent ID` and
//! `/agents/ID/mcp` serve.
//!
//! Turns: a caller's `tools/list` begins a new turn for that caller (factories run, MCP
//! servers are listed); their calls run against their current turn. The previous turn
//! ends, and its closers run, when the next one begins or the source is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::ToolAnnotations;
use serde_json::Map;
use tokio::sync::broadcast::{self, error::RecvError};
use toolhost_catalog::Catalog;
use toolhost_catalog::watch::{self, CatalogWatcher};
use toolhost_toolsets::{Annotations, Registry, Turn, TurnRequest};

use crate::{Caller, Change, Target, ToolInfo, ToolSource};

pub struct AgentSource {
    registry: Arc<Registry>,
    agent: String,
    /// The current turn of each caller (by user).
    turns: Mutex<HashMap<String, Arc<Turn>>>,
    changes: broadcast::Sender<Change>,
    _watcher: Option<CatalogWatcher>,
}

impl AgentSource {
    /// Serves `agent`'s tools. `catalog` is the one the registry's folder tool sets read;
    /// its edits are announced as changes. Must be created inside a Tokio runtime.
    pub fn new(registry: Arc<Registry>, agent: &str, catalog: Arc<RwLock<Catalog>>) -> AgentSource {
        let (changes, _) = broadcast::channel(64);
        let watcher = match watch::watch(catalog) {
            Ok(w) => {
                let (mut events, tx) = (w.subscribe(), changes.clone());
                tokio::spawn(async move {
                    while let Ok(_) | Err(RecvError::Lagged(_)) = events.recv().await {
                        let _ = tx.send(Change { user: None });
                    }
                });
                Some(w)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch the tool roots; edits need a restart");
                None
            }
        };
        AgentSource {
            registry,
            agent: agent.to_string(),
            turns: Mutex::new(HashMap::new()),
            changes,
            _watcher: watcher,
        }
    }

    /// Resolves a new turn for `caller`, making it their current one. The trait is
    /// synchronous (it is called from the protocol handlers' tasks), so resolution runs on
    /// this worker thread with the runtime's other threads carrying on meanwhile.
    fn begin_turn(&self, caller: &Caller) -> Option<Arc<Turn>> {
        let request = TurnRequest {
            user_id: Some(caller.user().to_string()),
            ..TurnRequest::default()
        };
        let handle = tokio::runtime::Handle::try_current().ok()?;
        let resolved = tokio::task::block_in_place(|| {
            handle.block_on(self.registry.resolve(&self.agent, &request))
        });
        let turn = match resolved {
            Ok(turn) => Arc::new(turn),
            Err(e) => {
                tracing::warn!(agent = %self.agent, "cannot resolve a turn: {e}");
                return None;
            }
        };
        for w in &turn.warnings {
            tracing::warn!(agent = %self.agent, user = caller.user(), "turn: {w:?}");
        }
        let previous = self
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(caller.user().to_string(), Arc::clone(&turn));
        // Dropping the last handle of a turn runs its closers.
        drop(previous);
        Some(turn)
    }

    fn current_turn(&self, caller: &Caller) -> Option<Arc<Turn>> {
        let current = self
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(caller.user())
            .cloned();
        current.or_else(|| self.begin_turn(caller))
    }
}

impl ToolSource for AgentSource {
    fn tools(&self, caller: &Caller) -> Vec<ToolInfo> {
        let Some(turn) = self.begin_turn(caller) else {
            return Vec::new();
        };
        turn.tools
            .iter()
            .map(|t| ToolInfo {
                name: t.name.clone(),
                title: t.name.clone(),
                description: t.description(),
                input_schema: Arc::new(match t.input_schema() {
                    serde_json::Value::Object(m) => m,
                    _ => Map::new(),
                }),
                annotations: hints(t.annotations()),
            })
            .collect()
    }

    fn resolve(&self, caller: &Caller, name: &str) -> Option<Target> {
        let turn = self.current_turn(caller)?;
        turn.tool(name).map(|t| Target {
            tool: t.tool().target().clone(),
            timeout: t.annotations().timeout,
        })
    }

    fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }
}

/// A tool set's annotations as MCP's hints; `None` when it gives none (the deadline is
/// ours, not a hint: it is applied to the call, see [`ToolSource::resolve`]).
fn hints(a: &Annotations) -> Option<ToolAnnotations> {
    let Annotations {
        read_only,
        destructive,
        idempotent,
        open_world,
        timeout: _,
    } = a.clone();
    if [read_only, destructive, idempotent, open_world]
        .iter()
        .all(Option::is_none)
    {
        return None;
    }
    Some(ToolAnnotations::from_raw(
        None,
        read_only,
        destructive,
        idempotent,
        open_world,
    ))
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
                name: None,
                grants: vec![Grant::tool_set("s")],
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
            },
        )
        .unwrap();
        let catalog = Arc::new(RwLock::new(Catalog::scan(Vec::new())));
        let source = AgentSource::new(Arc::new(registry), "a", catalog);
        let caller = Caller {
            space: UserSpace {
                user: "tester".into(),
                home: "/nonexistent".into(),
            },
        };
        // The hints are listed; the deadline is not a hint but goes with the call.
        let listed: HashMap<String, Option<ToolAnnotations>> = source
            .tools(&caller)
            .into_iter()
            .map(|t| (t.name, t.annotations))
            .collect();
        assert_eq!(listed["quick"], None);
        assert_eq!(listed["plain"], None);
        assert_eq!(
            listed["reader"],
            Some(ToolAnnotations::from_raw(
                None,
                Some(true),
                Some(false),
                Some(true),
                Some(false)
            ))
        );
        let quick = source.resolve(&caller, "quick").unwrap();
        assert_eq!(quick.timeout, Some(Duration::from_millis(200)));
        assert_eq!(source.resolve(&caller, "plain").unwrap().timeout, None);
        assert!(source.resolve(&caller, "nope").is_none());
    }
}
