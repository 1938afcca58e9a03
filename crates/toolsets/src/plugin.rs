//! Plugins: a manifest and its contributions, and the core loader map (the allowlist).

use serde::Serialize;
use serde_json::Value;

use crate::toolset::ToolSet;

/// The plugin API this Toolhost implements. v2 made `register_closer` part of the
/// context; every version in the window gets it.
pub const PLUGIN_API_VERSION: u32 = 2;
/// The oldest plugin API still accepted.
pub const MIN_PLUGIN_API_VERSION: u32 = 1;

/// A plugin: a manifest and its contributions.
pub struct Plugin {
    pub name: String,
    pub version: String,
    pub api_version: u32,
    pub tool_sets: Vec<ToolSet>,
}

/// Settings of one plugin: its `[plugins.NAME]` table of `toolhost.toml` as JSON
/// (`null` when absent).
pub type PluginSettings = Value;

/// Builds a plugin from its settings. An error fails boot, naming the plugin.
pub type Loader = fn(&PluginSettings) -> Result<Plugin, String>;

/// How a plugin came to be loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gating {
    /// On the always-on list.
    AlwaysOn,
    /// Named in `TOOLHOST_PLUGINS`.
    Enabled,
    /// In the loader map, but neither always on nor named: not loaded.
    Disabled,
}

impl Gating {
    pub fn describe(self) -> &'static str {
        match self {
            Gating::AlwaysOn => "always on",
            Gating::Enabled => "enabled by TOOLHOST_PLUGINS",
            Gating::Disabled => "off: name it in TOOLHOST_PLUGINS to enable",
        }
    }
}

/// The built-in loader map, which is the allowlist: being in it is what makes a plugin
/// core. Plugins on the always-on list load unconditionally; the others only when
/// named in `TOOLHOST_PLUGINS`.
#[derive(Clone, Default)]
pub struct CorePlugins {
    pub(crate) loaders: Vec<(&'static str, Loader)>,
    pub(crate) always_on: Vec<&'static str>,
}

impl CorePlugins {
    /// An empty map (tests and embedders build their own).
    pub fn new() -> CorePlugins {
        CorePlugins::default()
    }

    /// Toolhost's own plugins.
    pub fn builtin() -> CorePlugins {
        crate::plugins::builtin()
    }

    pub fn gated(mut self, name: &'static str, load: Loader) -> CorePlugins {
        self.loaders.push((name, load));
        self
    }

    pub fn always_on(mut self, name: &'static str, load: Loader) -> CorePlugins {
        self.loaders.push((name, load));
        self.always_on.push(name);
        self
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.loaders.iter().map(|(n, _)| *n)
    }

    pub fn is_always_on(&self, name: &str) -> bool {
        self.always_on.contains(&name)
    }

    pub(crate) fn loader(&self, name: &str) -> Option<Loader> {
        self.loaders
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| *l)
    }
}
