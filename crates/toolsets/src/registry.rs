//! Boot: load the gated core plugins, collect every tool set (plugins, folder roots) and
//! the external sources under one id space, and check it all strictly. A [`Registry`] is
//! what turns resolve against.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde::Serialize;
use serde_json::Value;

use crate::config::ToolsetsConfig;
use crate::error::BootError;
use crate::external::ExternalSource;
use crate::icons::IconMaps;
use crate::names::{is_valid_set_id, is_valid_tool_name};
use crate::owner::Owner;
use crate::plugin::{CorePlugins, Gating, MIN_PLUGIN_API_VERSION, PLUGIN_API_VERSION, Plugin};
use crate::toolset::{ToolSet, Tools};

/// A registered tool set and who contributed it.
pub struct SetEntry {
    /// The set.
    pub set: ToolSet,
    /// Who contributed it.
    pub owner: Owner,
}

/// A plugin as `toolhost plugins` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PluginInfo {
    /// The plugin's name.
    pub name: String,
    /// Its version (unknown when it was not loaded).
    pub version: Option<String>,
    /// The plugin API version it targets (unknown when it was not loaded).
    pub api_version: Option<u32>,
    /// Where it comes from: `core` (Toolhost's own) or `third-party` (a Platypus plugin
    /// package named in `TOOLHOST_PLUGINS`).
    pub origin: &'static str,
    /// A third-party plugin's entry file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<std::path::PathBuf>,
    /// What boot noticed: tools left out and why, contributions that are not tool sets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How it came to be loaded, or not.
    pub gating: Gating,
    /// The ids of the sets it contributes.
    pub tool_sets: Vec<String>,
}

/// What boot reads besides the loader map.
#[derive(Default)]
pub struct BootOptions {
    /// The value of `TOOLHOST_PLUGINS` (comma-separated plugin names).
    pub enabled: Option<String>,
    /// `[agents]`, `[plugins.NAME]`, `[turns]`, `[tool_sets]`.
    pub config: ToolsetsConfig,
    /// Tool sets that are not plugin contributions: the tool roots'.
    pub extra_sets: Vec<(ToolSet, Owner)>,
    /// External sources, already built and checked by their own crate (the MCP servers
    /// of `[mcp_servers]`): granted by name, listed per turn.
    pub external: Vec<Arc<dyn ExternalSource>>,
    /// Third-party plugins, loaded (see [`crate::load_third_party`]), each with how
    /// `TOOLHOST_PLUGINS` named it, its entry file and boot's notes.
    pub third_party: Vec<ThirdPartyPlugin>,
}

/// A third-party plugin as boot takes it.
pub struct ThirdPartyPlugin {
    /// Its manifest and tool sets.
    pub plugin: Plugin,
    /// How `TOOLHOST_PLUGINS` named it.
    pub spec: String,
    /// Its entry file.
    pub entry: std::path::PathBuf,
    /// What loading it noticed.
    pub notes: Vec<String>,
}

/// Every tool set known after boot, the loaded plugins, icons and external sources.
pub struct Registry {
    pub(crate) plugins: Vec<PluginInfo>,
    pub(crate) sets: BTreeMap<String, Arc<SetEntry>>,
    /// Changes while serving: MCP servers managed through the API come and go.
    pub(crate) external: RwLock<BTreeMap<String, Arc<dyn ExternalSource>>>,
    /// Bumped by every change of `external`: a turn resolved before it is stale.
    generation: std::sync::atomic::AtomicU64,
    pub(crate) icons: IconMaps,
    pub(crate) config: ToolsetsConfig,
    pub(crate) core: CorePlugins,
}

impl Registry {
    /// Loads and checks everything. Boot is strict: any problem is an error naming the
    /// plugin, root or server at fault.
    pub fn boot(core: CorePlugins, options: BootOptions) -> Result<Registry, BootError> {
        let third_party_specs: Vec<&str> = options
            .third_party
            .iter()
            .map(|t| t.spec.as_str())
            .collect();
        let listed: Vec<String> = parse_enabled(options.enabled.as_deref())
            .into_iter()
            .filter(|n| !third_party_specs.contains(&n.as_str()))
            .collect();
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
        for t in &options.third_party {
            let name = &t.plugin.name;
            if core.loader(name).is_some() {
                return Err(BootError::DuplicatePlugin {
                    plugin: name.clone(),
                    first: "a core plugin".into(),
                    second: t.entry.display().to_string(),
                });
            }
            if let Some(other) = options
                .third_party
                .iter()
                .find(|o| o.plugin.name == *name && o.spec != t.spec)
            {
                return Err(BootError::DuplicatePlugin {
                    plugin: name.clone(),
                    first: other.entry.display().to_string(),
                    second: t.entry.display().to_string(),
                });
            }
        }
        for name in options.config.plugins.keys() {
            if core.loader(name).is_none()
                && !options.third_party.iter().any(|t| t.plugin.name == *name)
            {
                return Err(BootError::UnknownSettings {
                    plugin: name.clone(),
                });
            }
        }

        let mut plugins = Vec::new();
        let mut sets: BTreeMap<String, Arc<SetEntry>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for (name, load) in core.loaders() {
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
                    entry: None,
                    notes: Vec::new(),
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
            let plugin = load(&settings).map_err(|source| BootError::Load {
                plugin: name.into(),
                source,
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
                entry: None,
                notes: Vec::new(),
                gating,
                tool_sets: plugin.tool_sets.iter().map(|s| s.id.clone()).collect(),
            });
            for set in plugin.tool_sets {
                add_set(&mut sets, &mut order, set, owner.clone())?;
            }
        }
        for t in options.third_party {
            let owner = Owner::Plugin {
                name: t.plugin.name.clone(),
            };
            for note in &t.notes {
                tracing::warn!(plugin = %t.plugin.name, "{note}");
            }
            plugins.push(PluginInfo {
                name: t.plugin.name.clone(),
                version: Some(t.plugin.version.clone()),
                api_version: Some(t.plugin.api_version),
                origin: "third-party",
                entry: Some(t.entry),
                notes: t.notes,
                gating: Gating::Enabled,
                tool_sets: t.plugin.tool_sets.iter().map(|s| s.id.clone()).collect(),
            });
            for set in t.plugin.tool_sets {
                add_set(&mut sets, &mut order, set, owner.clone())?;
            }
        }
        for (set, owner) in options.extra_sets {
            add_set(&mut sets, &mut order, set, owner)?;
        }
        for (id, settings) in &options.config.tool_sets {
            if let Some(entry) = sets.get_mut(id)
                && let Some(entry) = Arc::get_mut(entry)
            {
                if let Some(t) = settings.resolve_timeout {
                    entry.set.resolve_timeout = Some(t);
                }
                if let Some(icon) = &settings.icon {
                    entry.set.icon = Some(icon.clone());
                }
            }
        }
        let mut external: BTreeMap<String, Arc<dyn ExternalSource>> = BTreeMap::new();
        for source in options.external {
            let name = source.name().to_string();
            if external.contains_key(&name) {
                return Err(BootError::DuplicateSource {
                    owner: Owner::McpServer { name },
                });
            }
            external.insert(name, source);
        }
        let mut icons = IconMaps::build(
            order
                .iter()
                .filter_map(|id| sets.get(id))
                .map(|entry| &entry.set),
        );
        for (name, source) in &external {
            if let Some(icon) = source.icon() {
                icons.set_icon(name, icon);
            }
        }
        Ok(Registry {
            plugins,
            sets,
            external: RwLock::new(external),
            generation: std::sync::atomic::AtomicU64::new(0),
            icons,
            config: options.config,
            core,
        })
    }

    /// Every plugin of the loader map, loaded or not, in map order.
    pub fn plugins(&self) -> &[PluginInfo] {
        &self.plugins
    }

    /// Every registered tool set, by id.
    pub fn tool_sets(&self) -> impl Iterator<Item = &SetEntry> {
        self.sets.values().map(|e| &**e)
    }

    /// The tool set `id`.
    pub fn tool_set(&self, id: &str) -> Option<&SetEntry> {
        self.sets.get(id).map(|e| &**e)
    }

    /// The external sources (MCP servers), by name.
    pub fn external_sources(&self) -> Vec<Arc<dyn ExternalSource>> {
        self.external_map().values().cloned().collect()
    }

    /// The external source `name`.
    pub fn external_source(&self, name: &str) -> Option<Arc<dyn ExternalSource>> {
        self.external_map().get(name).cloned()
    }

    /// Adds `source`, or replaces the one of its name (returned: shut it down). Its name
    /// may not be a tool set's. The next turn that grants it lists it.
    pub fn put_external(
        &self,
        source: Arc<dyn ExternalSource>,
    ) -> Result<Option<Arc<dyn ExternalSource>>, BootError> {
        let name = source.name().to_string();
        if self.sets.contains_key(&name) {
            return Err(BootError::DuplicateSource {
                owner: Owner::McpServer { name },
            });
        }
        let mut external = self.external.write().unwrap_or_else(|e| e.into_inner());
        let old = external.insert(name, source);
        self.bump();
        Ok(old)
    }

    /// Counts changes of the external sources: a turn resolved at an older count may hold
    /// tools of a server since replaced or removed.
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    fn bump(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Removes the external source `name` (returned: shut it down).
    pub fn remove_external(&self, name: &str) -> Option<Arc<dyn ExternalSource>> {
        let old = self
            .external
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        self.bump();
        old
    }

    pub(crate) fn external_map(
        &self,
    ) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<dyn ExternalSource>>> {
        self.external.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Shuts every external source down (an MCP server's connection is closed, a stdio
    /// server's process group killed). Call it before the Tokio runtime goes away.
    pub async fn shutdown(&self) {
        let sources = self.external_sources();
        futures::future::join_all(sources.iter().map(|s| s.shutdown())).await;
    }

    /// The tool-set sections of `toolhost.toml` it was booted with.
    pub fn config(&self) -> &ToolsetsConfig {
        &self.config
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
    // A third-party plugin's sets are namespaced as Platypus does: `PLUGIN.SET`.
    let namespaced = matches!(owner, Owner::Plugin { .. })
        && set
            .id
            .split_once('.')
            .is_some_and(|(p, s)| is_valid_set_id(p) && is_valid_set_id(s));
    if !is_valid_set_id(&set.id) && !namespaced {
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
