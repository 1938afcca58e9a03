//! Boot: load the gated core plugins, collect every tool set (plugins, folder roots) under
//! one id space, and check it all strictly. A [`Registry`] is what turns resolve against.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::config::ToolsetsConfig;
use crate::error::BootError;
use crate::icons::IconMaps;
use crate::mcp::McpSource;
use crate::names::{is_valid_set_id, is_valid_tool_name};
use crate::plugin::{CorePlugins, Gating, MIN_PLUGIN_API_VERSION, PLUGIN_API_VERSION, Plugin};
use crate::toolset::{ToolSet, Tools};

/// Where a tool set comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Owner {
    Plugin { name: String },
    Folder { root: PathBuf },
    McpServer { name: String },
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Owner::Plugin { name } => write!(f, "plugin `{name}`"),
            Owner::Folder { root } => write!(f, "tool root {}", root.display()),
            Owner::McpServer { name } => write!(f, "MCP server `{name}`"),
        }
    }
}

/// A registered tool set and who contributed it.
pub struct SetEntry {
    pub set: ToolSet,
    pub owner: Owner,
}

/// A plugin as `toolhost plugins` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PluginInfo {
    pub name: String,
    pub version: Option<String>,
    pub api_version: Option<u32>,
    pub origin: &'static str,
    pub gating: Gating,
    pub tool_sets: Vec<String>,
}

/// What boot reads besides the loader map.
#[derive(Default)]
pub struct BootOptions {
    /// The value of `TOOLHOST_PLUGINS` (comma-separated plugin names).
    pub enabled: Option<String>,
    /// `[agents]`, `[mcp_servers]`, `[plugins.NAME]`, `[turns]`, `[tool_sets]`.
    pub config: ToolsetsConfig,
    /// Tool sets that are not plugin contributions: the tool roots'.
    pub extra_sets: Vec<(ToolSet, Owner)>,
}

/// Every tool set known after boot, the loaded plugins, icons and MCP sources.
pub struct Registry {
    pub(crate) plugins: Vec<PluginInfo>,
    pub(crate) sets: BTreeMap<String, Arc<SetEntry>>,
    pub(crate) mcp: BTreeMap<String, Arc<McpSource>>,
    pub(crate) icons: IconMaps,
    pub(crate) config: ToolsetsConfig,
    pub(crate) core: CorePlugins,
}

impl Registry {
    /// Loads and checks everything. Boot is strict: any problem is an error naming the
    /// plugin, root or server at fault.
    pub fn boot(core: CorePlugins, options: BootOptions) -> Result<Registry, BootError> {
        let listed = parse_enabled(options.enabled.as_deref());
        let known = || core.names().collect::<Vec<_>>().join(", ");
        for name in &listed {
            if core.loader(name).is_none() {
                return Err(BootError::UnknownPlugin {
                    plugin: name.clone(),
                    known: known(),
                });
            }
            if core.is_always_on(name) {
                return Err(BootError::AlwaysOnAndListed {
                    plugin: name.clone(),
                });
            }
        }
        for name in options.config.plugins.keys() {
            if core.loader(name).is_none() {
                return Err(BootError::UnknownSettings {
                    plugin: name.clone(),
                });
            }
        }

        let mut plugins = Vec::new();
        let mut sets: BTreeMap<String, Arc<SetEntry>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for (name, load) in core.loaders.iter().copied() {
            let gating = if core.is_always_on(name) {
                Gating::AlwaysOn
            } else if listed.iter().any(|l| l == name) {
                Gating::Enabled
            } else {
                plugins.push(PluginInfo {
                    name: name.into(),
                    version: None,
                    api_version: None,
                    origin: "core",
                    gating: Gating::Disabled,
                    tool_sets: Vec::new(),
                });
                continue;
            };
            let settings = options
                .config
                .plugins
                .get(name)
                .cloned()
                .unwrap_or(Value::Null);
            let plugin = load(&settings).map_err(|message| BootError::Load {
                plugin: name.into(),
                message,
            })?;
            check_plugin(name, &plugin)?;
            let owner = Owner::Plugin {
                name: plugin.name.clone(),
            };
            plugins.push(PluginInfo {
                name: plugin.name.clone(),
                version: Some(plugin.version.clone()),
                api_version: Some(plugin.api_version),
                origin: "core",
                gating,
                tool_sets: plugin.tool_sets.iter().map(|s| s.id.clone()).collect(),
            });
            for set in plugin.tool_sets {
                add_set(&mut sets, &mut order, set, owner.clone())?;
            }
        }
        for (set, owner) in options.extra_sets {
            add_set(&mut sets, &mut order, set, owner)?;
        }
        for (id, settings) in &options.config.tool_sets {
            if let Some(entry) = sets.get_mut(id)
                && let Some(t) = settings.resolve_timeout
                && let Some(entry) = Arc::get_mut(entry)
            {
                entry.set.resolve_timeout = Some(t);
            }
        }
        let mut mcp = BTreeMap::new();
        for (name, server) in &options.config.mcp_servers {
            let source =
                McpSource::new(name, server.clone()).map_err(|message| BootError::Invalid {
                    owner: Owner::McpServer { name: name.clone() },
                    message,
                })?;
            mcp.insert(name.clone(), Arc::new(source));
        }
        let mut icons = IconMaps::build(order.iter().filter_map(|id| sets.get(id)));
        for (name, server) in &options.config.mcp_servers {
            if let Some(icon) = &server.icon {
                icons.set_icon(name, icon);
            }
        }
        Ok(Registry {
            plugins,
            sets,
            mcp,
            icons,
            config: options.config,
            core,
        })
    }

    pub fn plugins(&self) -> &[PluginInfo] {
        &self.plugins
    }

    pub fn tool_sets(&self) -> impl Iterator<Item = &SetEntry> {
        self.sets.values().map(|e| &**e)
    }

    pub fn tool_set(&self, id: &str) -> Option<&SetEntry> {
        self.sets.get(id).map(|e| &**e)
    }

    pub fn mcp_servers(&self) -> impl Iterator<Item = &McpSource> {
        self.mcp.values().map(|s| &**s)
    }

    /// Closes every MCP server connection (stdio servers are shut down and their process
    /// groups killed). Call it before the Tokio runtime goes away.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.mcp.values().map(|s| s.disconnect())).await;
    }

    pub fn config(&self) -> &ToolsetsConfig {
        &self.config
    }

    pub fn icons(&self) -> &IconMaps {
        &self.icons
    }

    /// Loads the plugins that gating left out and returns the first `(plugin, set id)`
    /// whose set matches (for `doctor`: a set may exist in a plugin nobody enabled).
    pub fn find_in_disabled(&self, matches: impl Fn(&ToolSet) -> bool) -> Option<(String, String)> {
        self.plugins
            .iter()
            .filter(|p| p.gating == Gating::Disabled)
            .find_map(|p| {
                let settings = self
                    .config
                    .plugins
                    .get(&p.name)
                    .cloned()
                    .unwrap_or(Value::Null);
                let plugin = self.core.loader(&p.name)?(&settings).ok()?;
                let set = plugin.tool_sets.iter().find(|s| matches(s))?;
                Some((p.name.clone(), set.id.clone()))
            })
    }
}

/// `TOOLHOST_PLUGINS`: comma-separated, blanks ignored.
fn parse_enabled(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn check_plugin(entry: &str, plugin: &Plugin) -> Result<(), BootError> {
    if plugin.name != entry {
        return Err(BootError::NameMismatch {
            entry: entry.into(),
            manifest: plugin.name.clone(),
        });
    }
    if !(MIN_PLUGIN_API_VERSION..=PLUGIN_API_VERSION).contains(&plugin.api_version) {
        return Err(BootError::ApiVersion {
            plugin: plugin.name.clone(),
            version: plugin.version.clone(),
            found: plugin.api_version,
            min: MIN_PLUGIN_API_VERSION,
            max: PLUGIN_API_VERSION,
        });
    }
    Ok(())
}

fn add_set(
    sets: &mut BTreeMap<String, Arc<SetEntry>>,
    order: &mut Vec<String>,
    set: ToolSet,
    owner: Owner,
) -> Result<(), BootError> {
    if !is_valid_set_id(&set.id) {
        return Err(BootError::InvalidSetId { owner, id: set.id });
    }
    if let Tools::Static(map) = &set.tools {
        // Folder roots are forgiving: one badly named folder must not stop the host; its
        // tool is left out with a warning at turn time. Plugins are strict.
        if let Some(bad) = map.keys().find(|k| !is_valid_tool_name(k))
            && !matches!(owner, Owner::Folder { .. })
        {
            return Err(BootError::InvalidToolName {
                owner,
                set: set.id.clone(),
                name: bad.to_string(),
            });
        }
    }
    if !matches!(owner, Owner::Folder { .. })
        && let Some(bad) = set
            .known_tools()
            .into_iter()
            .find(|k| !is_valid_tool_name(k))
    {
        return Err(BootError::InvalidToolName {
            owner,
            set: set.id.clone(),
            name: bad,
        });
    }
    if let Some(first) = sets.get(&set.id) {
        return Err(BootError::DuplicateSetId {
            id: set.id,
            first: first.owner.clone(),
            second: owner,
        });
    }
    order.push(set.id.clone());
    sets.insert(set.id.clone(), Arc::new(SetEntry { set, owner }));
    Ok(())
}
