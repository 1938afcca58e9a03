//! Turn resolution: an agent's grants → the tools the model sees this turn.
//!
//! Strict at boot, forgiving here: an unknown id, a factory that fails or overruns its
//! deadline, a dead MCP server each cost only their own tools and add a warning.
//! Name claims: the same tool under one name in several sets is one tool; two different
//! tools under one name: the later claim wins (layers session → search → sub-agent, then
//! grant order) and the collision is reported with both owners.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::task::JoinHandle;
use toolhost_runtime::{Call, Runtime, Target, ToolRef, UserSpace};

use crate::config::{Grant, GrantSource, Layer};
use crate::context::{CloseReport, Closers, TurnContext, TurnRequest};
use crate::external::Listing;
use crate::icons::IconSource;
use crate::names::{TOOL_NAME_RULE, is_valid_tool_name};
use crate::owner::Owner;
use crate::registry::{Registry, SetEntry};
use crate::tool::{Annotations, Tool, ToolMap};
use crate::toolset::{FactoryError, Tools};

/// Something that cost tools this turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    /// The grant's source: `tool set `x`` or `MCP server `y``.
    pub source: String,
    /// What happened.
    pub message: String,
}

/// Who claimed a name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// The tool set (an MCP server's set is named after the server).
    pub set: String,
    /// Who contributed the set.
    pub owner: Owner,
    /// The grant's layer.
    pub layer: Layer,
    /// Position of the grant in the agent's list.
    pub grant: usize,
}

/// Two different tools claimed one name; the winner is what the model sees.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Collision {
    /// The name.
    pub name: String,
    /// The claim the model sees.
    pub winner: Claim,
    /// The claim it replaced.
    pub shadowed: Claim,
}

/// A tool a grant's allow or deny list kept out (for `doctor`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excluded {
    /// The tool's name.
    pub name: String,
    /// The set it came from.
    pub set: String,
    /// Which list kept it out.
    pub reason: String,
}

/// One tool of the turn, callable through the runtime's one call path.
#[derive(Clone, Serialize)]
pub struct ResolvedTool {
    /// The name the model sees.
    pub name: String,
    /// Who claimed the name.
    #[serde(flatten)]
    pub claim: Claim,
    /// Other sets that supplied this same tool under this name (de-duplicated).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_in: Vec<String>,
    /// Its Lucide icon.
    pub icon: String,
    /// Which rung of the icon chain gave it.
    pub icon_source: IconSource,
    #[serde(skip)]
    tool: Tool,
}

impl ResolvedTool {
    /// The tool itself.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// A human-readable name: a folder tool's TOOL.md `label`, else the name it is
    /// resolved under.
    pub fn title(&self) -> String {
        match self.tool.target() {
            ToolRef::Folder(t) => t.manifest.label.clone(),
            ToolRef::Native(_) | ToolRef::Plugin(_) => self.name.clone(),
        }
    }

    /// What the model reads about it.
    pub fn description(&self) -> String {
        self.tool.description()
    }

    /// The JSON Schema of its arguments.
    pub fn input_schema(&self) -> Value {
        self.tool.input_schema()
    }

    /// Its hints and deadline.
    pub fn annotations(&self) -> &Annotations {
        self.tool.annotations()
    }

    /// What to call: the tool, with its annotated deadline (which applies unless the
    /// caller sets another).
    pub fn target(&self) -> Target {
        Target {
            tool: self.tool.target().clone(),
            timeout: self.tool.annotations().timeout,
            set: Some(self.claim.set.clone()),
        }
    }

    /// Calls the tool (validation, deadlines, progress, cancellation: the runtime's).
    pub fn call(&self, runtime: &Runtime, args: Value, user: UserSpace) -> Call {
        runtime.call(self.target().request(args, user))
    }
}

/// A resolved turn. End it with [`Turn::end`] to run the closers; dropping it runs them
/// in the background.
#[derive(Serialize)]
pub struct Turn {
    /// The agent it was resolved for.
    pub agent: String,
    /// Sorted by name.
    pub tools: Vec<ResolvedTool>,
    /// What cost tools this turn.
    pub warnings: Vec<Warning>,
    /// Names two different tools claimed.
    pub collisions: Vec<Collision>,
    /// Tools the grants' allow and deny lists kept out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Excluded>,
    #[serde(skip)]
    closers: Closers,
}

impl Turn {
    /// The tool the model sees as `name`.
    pub fn tool(&self, name: &str) -> Option<&ResolvedTool> {
        self.tools
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.tools[i])
    }

    /// Ends the turn: runs every closer concurrently under the closing deadline.
    pub async fn end(self) -> CloseReport {
        self.close().await
    }

    /// Like [`end`](Self::end), for a turn shared between tasks (say, behind an `Arc` in
    /// a protocol session). Only the first call runs the closers.
    pub async fn close(&self) -> CloseReport {
        self.closers.close().await
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.closers.is_closed() {
            return;
        }
        let closers = self.closers.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                closers.close().await;
            });
        }
    }
}

/// Why a turn could not be resolved at all.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The agent is not in `[agents]`.
    #[error("no agent `{0}` in toolhost.toml ([agents.ID])")]
    UnknownAgent(String),
}

/// A grant's tools as they arrive.
enum Source {
    Static(Arc<SetEntry>),
    Factory {
        set: Arc<SetEntry>,
        task: JoinHandle<Result<Result<ToolMap, FactoryError>, tokio::time::error::Elapsed>>,
        deadline: Duration,
    },
    External {
        server: String,
        task: JoinHandle<Listing>,
    },
}

impl Registry {
    /// Resolves a turn for an agent declared in `toolhost.toml`.
    pub async fn resolve(&self, agent: &str, req: &TurnRequest) -> Result<Turn, ResolveError> {
        let config = self
            .config
            .agents
            .get(agent)
            .ok_or_else(|| ResolveError::UnknownAgent(agent.into()))?;
        Ok(self.resolve_grants(agent, &config.grants, req).await)
    }

    /// Resolves a turn for any list of grants (agents stored elsewhere).
    pub async fn resolve_grants(&self, agent: &str, grants: &[Grant], req: &TurnRequest) -> Turn {
        let closers = Closers::new(self.config.turns.close_timeout);
        let mut warnings = Vec::new();
        // Stable: within a layer, grant order stays.
        let mut order: Vec<usize> = (0..grants.len()).collect();
        order.sort_by_key(|&i| grants[i].layer);

        // Start everything first, so factories and servers run concurrently.
        let mut started: Vec<(usize, Source)> = Vec::with_capacity(order.len());
        for &i in &order {
            match &grants[i].source {
                GrantSource::ToolSet(id) => {
                    let Some(entry) = self.sets.get(id) else {
                        warnings.push(Warning {
                            source: grants[i].source.to_string(),
                            message:
                                "no such tool set (is its plugin enabled? see `toolhost doctor`)"
                                    .into(),
                        });
                        continue;
                    };
                    match &entry.set.tools {
                        Tools::Static(_) => started.push((i, Source::Static(Arc::clone(entry)))),
                        Tools::Factory(factory) => {
                            let mut ctx = TurnContext::new(agent, req);
                            ctx.tool_set = id.clone();
                            ctx.closers = closers.clone();
                            let deadline = entry
                                .set
                                .resolve_timeout
                                .unwrap_or(self.config.turns.resolve_timeout);
                            let run = factory.tools(ctx);
                            let task = tokio::spawn(tokio::time::timeout(deadline, run));
                            started.push((
                                i,
                                Source::Factory {
                                    set: Arc::clone(entry),
                                    task,
                                    deadline,
                                },
                            ));
                        }
                    }
                }
                GrantSource::McpServer(name) => {
                    let Some(source) = self.external_source(name) else {
                        warnings.push(Warning {
                            source: grants[i].source.to_string(),
                            message: "no such MCP server in toolhost.toml ([mcp_servers.NAME])"
                                .into(),
                        });
                        continue;
                    };
                    started.push((
                        i,
                        Source::External {
                            server: name.clone(),
                            task: tokio::spawn(async move { source.list().await }),
                        },
                    ));
                }
            }
        }

        let mut claims = Claims::default();
        for (i, source) in started {
            let grant = &grants[i];
            match source {
                Source::Static(entry) => {
                    if let Tools::Static(map) = &entry.set.tools {
                        claims.add(grant, i, &entry.set.id, &entry.owner, map, &mut warnings);
                    }
                }
                Source::Factory {
                    set,
                    task,
                    deadline,
                } => {
                    let failure = match task.await {
                        Ok(Ok(Ok(map))) => {
                            claims.add(grant, i, &set.set.id, &set.owner, &map, &mut warnings);
                            continue;
                        }
                        Ok(Ok(Err(e))) => format!("the tool factory failed: {e}"),
                        Ok(Err(_)) => format!(
                            "the tool factory did not finish within {} s",
                            deadline.as_secs_f64()
                        ),
                        Err(e) => format!("the tool factory panicked: {e}"),
                    };
                    warnings.push(Warning {
                        source: grant.source.to_string(),
                        message: format!("{failure}; its tools are left out of this turn"),
                    });
                }
                Source::External { server, task } => {
                    let listing = match task.await {
                        Ok(l) => l,
                        Err(e) => Listing::failed(format!("listing panicked: {e}")),
                    };
                    if let Some(w) = listing.warning {
                        warnings.push(Warning {
                            source: grant.source.to_string(),
                            message: w,
                        });
                    }
                    let owner = Owner::McpServer {
                        name: server.clone(),
                    };
                    claims.add(grant, i, &server, &owner, &listing.tools, &mut warnings);
                }
            }
        }

        for w in &warnings {
            tracing::warn!(agent, source = %w.source, "turn resolution: {}", w.message);
        }
        for c in &claims.collisions {
            tracing::warn!(
                agent,
                tool = %c.name,
                winner = %format!("{} ({})", c.winner.set, c.winner.owner),
                shadowed = %format!("{} ({})", c.shadowed.set, c.shadowed.owner),
                "two different tools claim one name: the later claim wins"
            );
        }
        let mut tools = claims.tools;
        for t in &mut tools {
            let (icon, via) = self.icons.resolve(&t.name, t.tool.icon(), &t.claim.set);
            t.icon = icon.to_string();
            t.icon_source = via;
        }
        tools.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        Turn {
            agent: agent.to_string(),
            tools,
            warnings,
            collisions: claims.collisions,
            excluded: claims.excluded,
            closers,
        }
    }
}

#[derive(Default)]
struct Claims {
    tools: Vec<ResolvedTool>,
    by_name: HashMap<String, usize>,
    collisions: Vec<Collision>,
    excluded: Vec<Excluded>,
}

impl Claims {
    fn add(
        &mut self,
        grant: &Grant,
        index: usize,
        set: &str,
        owner: &Owner,
        map: &ToolMap,
        warnings: &mut Vec<Warning>,
    ) {
        self.tools.reserve(map.len());
        for (name, tool) in map.iter() {
            if !grant.admits(name) {
                let reason = if grant.deny.iter().any(|d| d == name) {
                    "on the grant's deny list"
                } else {
                    "not on the grant's allow list"
                };
                self.excluded.push(Excluded {
                    name: name.into(),
                    set: set.into(),
                    reason: reason.into(),
                });
                continue;
            }
            if !is_valid_tool_name(name) {
                warnings.push(Warning {
                    source: grant.source.to_string(),
                    message: format!(
                        "tool `{name}` left out: a tool name must match {TOOL_NAME_RULE} (names are never truncated)"
                    ),
                });
                continue;
            }
            let claim = Claim {
                set: set.to_string(),
                owner: owner.clone(),
                layer: grant.layer,
                grant: index,
            };
            match self.by_name.get(name) {
                None => {
                    self.by_name.insert(name.to_string(), self.tools.len());
                    self.tools.push(ResolvedTool {
                        name: name.to_string(),
                        claim,
                        also_in: Vec::new(),
                        icon: String::new(),
                        icon_source: IconSource::Wrench,
                        tool: tool.clone(),
                    });
                }
                Some(&at) => {
                    let current = &mut self.tools[at];
                    if current.tool.same_as(tool) {
                        if current.claim.set != set {
                            current.also_in.push(set.to_string());
                        }
                        continue;
                    }
                    let shadowed = std::mem::replace(&mut current.claim, claim.clone());
                    current.tool = tool.clone();
                    current.also_in.clear();
                    self.collisions.push(Collision {
                        name: name.to_string(),
                        winner: claim,
                        shadowed,
                    });
                }
            }
        }
    }
}
