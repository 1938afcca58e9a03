//! Third-party Platypus plugins: JavaScript or TypeScript packages loaded unmodified, as
//! Platypus loads them, on the runtime's Node.js workers. Boot imports each one, checks its
//! manifest and parses its settings with its own schemas ([`load`]); its tool sets become
//! tool sets like any other, ids namespaced as Platypus does (`PLUGIN.SET`, tools
//! `PLUGIN__TOOL`). A static map's tools are described once; a factory is called per turn
//! on the turn's user's worker, and a closer that runs the plugin's closers is registered
//! with the turn.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_runtime::{
    ClosersRan, DescribedPlugin, DescribedTool, DescribedTools, PluginError, PluginModule,
    PluginOp, PluginTool, PluginTurn, ToolRef,
};

use crate::context::TurnContext;
use crate::error::BootError;
use crate::plugin::Plugin;
use crate::tool::{Tool, ToolMap, fingerprint};
use crate::toolset::{FactoryFuture, ToolFactory, ToolSet, Tools};

/// What [`PluginRunner::run`] returns.
pub type PluginFuture = Pin<Box<dyn Future<Output = Result<Value, PluginError>> + Send>>;

/// Runs plugin operations on the host's runtime: as `user` (a turn's), else as the host's
/// own default user.
pub trait PluginRunner: Send + Sync + 'static {
    /// Runs `op` of `module`, within `timeout`.
    fn run(
        &self,
        user: Option<&str>,
        module: &Arc<PluginModule>,
        op: PluginOp,
        timeout: Duration,
    ) -> PluginFuture;

    /// The plugin's code version as last loaded, if its files have not changed since
    /// (cheap: no directory walk); `None` when they changed.
    fn code_version(&self, module: &PluginModule) -> Option<String>;
}

/// The Platypus plugin API window Toolhost accepts for third-party plugins (the worker
/// checks it): Platypus's current version and the one before.
pub const PLATYPUS_API_WINDOW: (u32, u32) = (2, 3);

/// A third-party plugin, loaded and described.
pub struct ThirdParty {
    /// The package, under its manifest's name.
    pub module: Arc<PluginModule>,
    /// What its worker found.
    pub described: DescribedPlugin,
}

/// Imports the plugin of `module` and reads its manifest's name (its settings are
/// looked up by that name before [`load`]).
pub async fn manifest_name(
    runner: &dyn PluginRunner,
    module: &Arc<PluginModule>,
    timeout: Duration,
) -> Result<String, BootError> {
    let value = runner
        .run(None, module, PluginOp::Manifest, timeout)
        .await
        .map_err(|e| third_party(module, e))?;
    value
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| third_party(module, PluginError::Protocol(value.to_string())))
}

/// Loads the plugin of `module` (its settings set): manifest checks, settings parsed by
/// its own schemas, static tools described. Any failure names the plugin.
pub async fn load(
    runner: &dyn PluginRunner,
    module: Arc<PluginModule>,
    timeout: Duration,
) -> Result<ThirdParty, BootError> {
    let value = runner
        .run(None, &module, PluginOp::Load, timeout)
        .await
        .map_err(|e| third_party(&module, e))?;
    let described: DescribedPlugin = serde_json::from_value(value)
        .map_err(|e| third_party(&module, PluginError::Protocol(e.to_string())))?;
    Ok(ThirdParty { module, described })
}

fn third_party(module: &PluginModule, e: PluginError) -> BootError {
    let message = e.to_string();
    // Before its name is known, the loader names a plugin whose manifest has a valid
    // name but fails another check: `plugin "NAME": …`.
    let named = message
        .strip_prefix("plugin \"")
        .and_then(|rest| rest.split_once("\": "));
    let (plugin, message) = match (module.name.is_empty(), named) {
        (false, _) => (module.name.clone(), message),
        (true, Some((name, rest))) => (name.to_string(), rest.to_string()),
        (true, None) => (module.spec.clone(), message),
    };
    BootError::ThirdParty {
        plugin,
        entry: module.entry.clone(),
        message,
    }
}

impl ThirdParty {
    /// Its tool sets, as the registry takes plugins.
    pub fn plugin(&self, runner: &Arc<dyn PluginRunner>) -> Plugin {
        let name = &self.described.name;
        let tool_sets = self
            .described
            .tool_sets
            .iter()
            .map(|set| {
                let tools = if set.factory {
                    Tools::factory(PluginFactory {
                        runner: Arc::clone(runner),
                        module: Arc::clone(&self.module),
                        set: set.id.clone(),
                    })
                } else {
                    let map = set
                        .tools
                        .iter()
                        .map(|t| plugin_tool(&self.module, &set.id, t.clone(), None))
                        .collect::<ToolMap>();
                    Tools::factory(StaticSet {
                        runner: Arc::clone(runner),
                        module: Arc::clone(&self.module),
                        set: set.id.clone(),
                        now: Arc::new(Mutex::new(Described {
                            version: runner.code_version(&self.module),
                            map,
                        })),
                    })
                };
                ToolSet::new(
                    &format!("{name}.{}", set.id),
                    &set.name,
                    &set.category,
                    &set.description,
                    tools,
                )
            })
            .collect();
        Plugin {
            name: name.clone(),
            version: self.described.version.clone(),
            api_version: self.described.api_version,
            tool_sets,
        }
    }

    /// What boot reports about it besides its sets: tools left out and why,
    /// contributions that are not tool sets.
    pub fn notes(&self) -> Vec<String> {
        let name = &self.described.name;
        let mut notes = Vec::new();
        for set in &self.described.tool_sets {
            for s in &set.skipped {
                notes.push(format!(
                    "tool `{name}__{}` (tool set `{name}.{}`) left out: {}",
                    s.tool, set.id, s.reason
                ));
            }
        }
        for (kind, list) in [
            ("sandbox backend", &self.described.sandbox_backends),
            ("web backend", &self.described.web_backends),
        ] {
            for b in list {
                notes.push(format!(
                    "{kind} `{}` ({}) not used: Toolhost runs tool sets only; its sandbox and web fetching are its own",
                    b.id, b.name
                ));
            }
        }
        notes
    }
}

/// A plugin tool as tool sets hold it. The same tool of the same set is one tool, whichever
/// turn built it.
fn plugin_tool(
    module: &Arc<PluginModule>,
    set: &str,
    described: DescribedTool,
    turn: Option<Arc<PluginTurn>>,
) -> Tool {
    let identity = format!(
        "plugin:{}:{set}:{}:{}",
        module.name,
        described.key,
        fingerprint(&described.description, &described.input_schema)
    );
    let tool = PluginTool::new(Arc::clone(module), set, described, turn);
    Tool::with_ref(ToolRef::Plugin(Arc::new(tool)), identity)
}

/// A static map's tools, as last described: the same every turn until the plugin's files
/// change, then described again (by its fresh worker) on the next turn, so that a tool
/// added, removed or changed in the map is served as an edited folder tool is.
struct StaticSet {
    runner: Arc<dyn PluginRunner>,
    module: Arc<PluginModule>,
    set: String,
    now: Arc<Mutex<Described>>,
}

struct Described {
    /// The code version the map was described at (`None`: unknown, describe again).
    version: Option<String>,
    map: ToolMap,
}

impl StaticSet {
    fn now(&self) -> std::sync::MutexGuard<'_, Described> {
        self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ToolFactory for StaticSet {
    fn tools(&self, ctx: TurnContext) -> FactoryFuture {
        let version = self.runner.code_version(&self.module);
        {
            let now = self.now();
            if version.is_some() && version == now.version {
                let map = now.map.clone();
                return Box::pin(async move { Ok(map) });
            }
        }
        let (runner, module, set, now) = (
            Arc::clone(&self.runner),
            Arc::clone(&self.module),
            self.set.clone(),
            Arc::clone(&self.now),
        );
        let user = ctx.user_id.clone();
        Box::pin(async move {
            let value = runner
                .run(user.as_deref(), &module, PluginOp::Load, UNBOUNDED)
                .await?;
            let described: DescribedPlugin = serde_json::from_value(value)?;
            let tools = described
                .tool_sets
                .into_iter()
                .find(|s| s.id == set && !s.factory)
                .map(|s| s.tools)
                .unwrap_or_else(|| {
                    tracing::warn!(plugin = %module.name, tool_set = %set, "the plugin no longer has this static tool set: it lists no tools until a restart");
                    Vec::new()
                });
            let map: ToolMap = tools
                .into_iter()
                .map(|t| plugin_tool(&module, &set, t, None))
                .collect();
            tracing::info!(plugin = %module.name, tool_set = %set, tools = map.len(), "described again after an edit");
            let mut now = now.lock().unwrap_or_else(|e| e.into_inner());
            now.version = runner.code_version(&module);
            now.map = map.clone();
            Ok(map)
        })
    }

    fn known_tools(&self) -> Vec<String> {
        self.now().map.keys().map(str::to_string).collect()
    }

    fn listed(&self) -> Option<ToolMap> {
        Some(self.now().map.clone())
    }
}

static TURNS: AtomicU64 = AtomicU64::new(1);

/// A tool set whose tools a plugin's factory builds per turn.
struct PluginFactory {
    runner: Arc<dyn PluginRunner>,
    module: Arc<PluginModule>,
    set: String,
}

/// The deadline of an operation whose caller sets its own (a factory runs under the
/// turn's resolve deadline, which drops it).
const UNBOUNDED: Duration = Duration::from_secs(24 * 3600);
/// How long the plugin's closers may take in all (each is abandoned after 5 s).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(8);

impl ToolFactory for PluginFactory {
    fn tools(&self, ctx: TurnContext) -> FactoryFuture {
        let turn = Arc::new(PluginTurn {
            id: TURNS.fetch_add(1, Ordering::Relaxed),
            ctx: json!({
                "workspaceId": ctx.workspace_id,
                "agentId": ctx.agent_id,
                "orgId": ctx.org_id,
                "frontendUrl": ctx.frontend_url,
                "userId": ctx.user_id,
            }),
        });
        let user = ctx.user_id.clone();
        // Registered first: a factory that hangs past its deadline may already have
        // registered closers, and the worker keeps the turn's tools until it is closed.
        {
            let runner = Arc::clone(&self.runner);
            let module = Arc::clone(&self.module);
            let user = user.clone();
            let id = turn.id;
            ctx.register_closer(async move {
                let value = runner
                    .run(
                        user.as_deref(),
                        &module,
                        PluginOp::Close { turn: id },
                        CLOSE_TIMEOUT,
                    )
                    .await?;
                let ran: ClosersRan = serde_json::from_value(value)?;
                let mut problems = ran.failed;
                if ran.timed_out > 0 {
                    problems.push(format!(
                        "{} closer(s) still running after 5 s were abandoned",
                        ran.timed_out
                    ));
                }
                if problems.is_empty() {
                    Ok(())
                } else {
                    Err(problems.join("; ").into())
                }
            });
        }
        let runner = Arc::clone(&self.runner);
        let module = Arc::clone(&self.module);
        let set = self.set.clone();
        Box::pin(async move {
            let op = PluginOp::Factory {
                set: set.clone(),
                turn: turn.id,
                ctx: turn.ctx.clone(),
            };
            let value = runner.run(user.as_deref(), &module, op, UNBOUNDED).await?;
            let described: DescribedTools = serde_json::from_value(value)?;
            for s in &described.skipped {
                tracing::warn!(plugin = %module.name, tool_set = %set, tool = %s.tool, "left out this turn: {}", s.reason);
            }
            Ok(described
                .tools
                .into_iter()
                .map(|t| plugin_tool(&module, &set, t, Some(Arc::clone(&turn))))
                .filter(|tool| {
                    let ok = crate::names::is_valid_tool_name(tool.own_name());
                    if !ok {
                        tracing::warn!(plugin = %module.name, tool = %tool.own_name(), "left out this turn: the name is longer than 64 characters");
                    }
                    ok
                })
                .collect())
        })
    }
}
