//! Plugins: a manifest and its contributions, typed settings, and the loader map (the
//! allowlist). The core plugins themselves live in `toolhost-plugins`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::toolset::ToolSet;

/// The plugin API this Toolhost implements. v2 made `register_closer` part of the
/// context; every version in the window gets it.
pub const PLUGIN_API_VERSION: u32 = 2;
/// The oldest plugin API still accepted.
pub const MIN_PLUGIN_API_VERSION: u32 = 1;

/// A plugin: a manifest and its contributions.
pub struct Plugin {
    /// Its name: the loader map's key, and `[plugins.NAME]` in `toolhost.toml`.
    pub name: String,
    /// Its own version, for listings.
    pub version: String,
    /// The plugin API version it targets (checked against the supported window).
    pub api_version: u32,
    /// What it contributes.
    pub tool_sets: Vec<ToolSet>,
}

/// Settings of one plugin: its `[plugins.NAME]` table of `toolhost.toml` as JSON
/// (`null` when absent). [`settings`] reads it into the plugin's own type.
pub type PluginSettings = Value;

/// Why a loader failed: any error, so a loader can use `?` on its own typed errors.
pub type LoadError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Builds a plugin from its settings. An error fails boot, naming the plugin.
pub type Loader = fn(&PluginSettings) -> Result<Plugin, LoadError>;

/// `[plugins.NAME]` does not fit the plugin's settings type.
#[derive(Debug, thiserror::Error)]
#[error("[plugins.{plugin}]: {source}")]
pub struct SettingsError {
    /// The plugin.
    pub plugin: String,
    /// What serde found wrong (which key, what was expected).
    #[source]
    pub source: serde_json::Error,
}

/// Reads plugin `plugin`'s settings into `T`: absent settings are `T::default()`.
pub fn settings<T: DeserializeOwned + Default>(
    plugin: &str,
    settings: &PluginSettings,
) -> Result<T, SettingsError> {
    if settings.is_null() {
        return Ok(T::default());
    }
    T::deserialize(settings).map_err(|source| SettingsError {
        plugin: plugin.into(),
        source,
    })
}

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
    /// For listings: "always on", "enabled by TOOLHOST_PLUGINS", or how to enable it.
    pub fn describe(self) -> &'static str {
        match self {
            Gating::AlwaysOn => "always on",
            Gating::Enabled => "enabled by TOOLHOST_PLUGINS",
            Gating::Disabled => "off: name it in TOOLHOST_PLUGINS to enable",
        }
    }
}

/// The loader map, which is the allowlist: being in it is what makes a plugin core.
/// Plugins on the always-on list load unconditionally; the others only when named in
/// `TOOLHOST_PLUGINS`. Toolhost's own map is `toolhost_plugins::builtin()`.
#[derive(Clone, Default)]
pub struct CorePlugins {
    loaders: Vec<(&'static str, Loader)>,
    always_on: Vec<&'static str>,
}

impl CorePlugins {
    /// An empty map.
    pub fn new() -> CorePlugins {
        CorePlugins::default()
    }

    /// Adds a plugin that loads only when `TOOLHOST_PLUGINS` names it.
    pub fn gated(mut self, name: &'static str, load: Loader) -> CorePlugins {
        self.loaders.push((name, load));
        self
    }

    /// Adds a plugin that always loads.
    pub fn always_on(mut self, name: &'static str, load: Loader) -> CorePlugins {
        self.loaders.push((name, load));
        self.always_on.push(name);
        self
    }

    /// The plugins' names, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.loaders.iter().map(|(n, _)| *n)
    }

    /// True when `name` is on the always-on list.
    pub fn is_always_on(&self, name: &str) -> bool {
        self.always_on.contains(&name)
    }

    pub(crate) fn loaders(&self) -> impl Iterator<Item = (&'static str, Loader)> + '_ {
        self.loaders.iter().copied()
    }

    pub(crate) fn loader(&self, name: &str) -> Option<Loader> {
        self.loaders
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| *l)
    }
}
