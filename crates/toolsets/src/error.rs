//! Why boot failed.

use std::path::PathBuf;

use crate::owner::Owner;
use crate::plugin::LoadError;

/// Why boot failed. Boot is strict: each names the plugin (or root, or server) at fault.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    /// An always-on plugin is listed in `TOOLHOST_PLUGINS`.
    #[error(
        "plugin `{plugin}` is always on: remove it from TOOLHOST_PLUGINS (listing an always-on plugin as an enable switch is a misconfiguration)"
    )]
    AlwaysOnAndListed {
        /// The plugin.
        plugin: String,
    },
    /// `TOOLHOST_PLUGINS` names a plugin the loader map does not hold.
    #[error(
        "TOOLHOST_PLUGINS names `{plugin}`, which is not a core plugin (core plugins: {known})"
    )]
    UnknownPlugin {
        /// The name given.
        plugin: String,
        /// The core plugins, comma-separated.
        known: String,
    },
    /// A plugin targets a plugin API version outside the supported window.
    #[error(
        "plugin `{plugin}` {version} targets plugin API v{found}, outside the supported window v{min}–v{max}"
    )]
    ApiVersion {
        /// The plugin.
        plugin: String,
        /// The plugin's own version.
        version: String,
        /// The API version it targets.
        found: u32,
        /// The oldest supported.
        min: u32,
        /// The newest supported.
        max: u32,
    },
    /// A third-party (Platypus) plugin failed to load: its code, manifest or settings.
    #[error("plugin `{plugin}` ({}): {message}", entry.display())]
    ThirdParty {
        /// Its manifest's name, or how `TOOLHOST_PLUGINS` named it.
        plugin: String,
        /// Its entry file.
        entry: PathBuf,
        /// What went wrong, in the loader's words.
        message: String,
    },
    /// Two plugins have one name.
    #[error("two plugins are named `{plugin}`: {first} and {second}")]
    DuplicatePlugin {
        /// The name.
        plugin: String,
        /// Where the first comes from.
        first: String,
        /// Where the second comes from.
        second: String,
    },
    /// Two contributions use one tool-set id.
    #[error("tool set id `{id}` is contributed twice: by {first} and by {second}")]
    DuplicateSetId {
        /// The id.
        id: String,
        /// The first contributor.
        first: Owner,
        /// The second contributor.
        second: Owner,
    },
    /// A tool-set id is not kebab-case.
    #[error(
        "{owner}: tool set id `{id}` is not kebab-case (lowercase letters, digits and single hyphens, at most 64 characters)"
    )]
    InvalidSetId {
        /// Who contributed the set.
        owner: Owner,
        /// The id.
        id: String,
    },
    /// A plugin's tool name does not match the tool-name rule.
    #[error("{owner}, tool set `{set}`: tool name `{name}` does not match ^[a-zA-Z0-9_-]{{1,64}}$")]
    InvalidToolName {
        /// Who contributed the set.
        owner: Owner,
        /// The set's id.
        set: String,
        /// The tool name.
        name: String,
    },
    /// A plugin's loader failed.
    #[error("plugin `{plugin}` failed to load: {source}")]
    Load {
        /// The plugin.
        plugin: String,
        /// The loader's error.
        #[source]
        source: LoadError,
    },
    /// A loader returned a plugin under another name than its loader-map entry.
    #[error("the loader map entry `{entry}` returned a plugin named `{manifest}`")]
    NameMismatch {
        /// The loader-map entry.
        entry: String,
        /// The name in the plugin's manifest.
        manifest: String,
    },
    /// `[plugins.NAME]` configures a plugin that is not core.
    #[error(
        "[plugins.{plugin}] in toolhost.toml configures `{plugin}`, which is not a core plugin"
    )]
    UnknownSettings {
        /// The plugin named.
        plugin: String,
    },
    /// A tool root's `toolset.toml` cannot be read.
    #[error("{owner}: cannot read {}: {source}", path.display())]
    ReadManifest {
        /// The root.
        owner: Owner,
        /// The manifest file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A tool root's `toolset.toml` is not what it should be.
    #[error("{owner}: {}: {message}", path.display())]
    Manifest {
        /// The root.
        owner: Owner,
        /// The manifest file.
        path: PathBuf,
        /// The TOML parser's message (it says which key and what is wrong).
        message: String,
    },
    /// Two external sources have one name.
    #[error("{owner} is configured twice")]
    DuplicateSource {
        /// The source.
        owner: Owner,
    },
}
