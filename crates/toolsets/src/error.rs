use crate::registry::Owner;

/// Why boot failed. Boot is strict: each names the plugin (or root, or server) at fault.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    #[error(
        "plugin `{plugin}` is always on: remove it from TOOLHOST_PLUGINS (listing an always-on plugin as an enable switch is a misconfiguration)"
    )]
    AlwaysOnAndListed { plugin: String },
    #[error(
        "TOOLHOST_PLUGINS names `{plugin}`, which is not a core plugin (core plugins: {known})"
    )]
    UnknownPlugin { plugin: String, known: String },
    #[error(
        "plugin `{plugin}` {version} targets plugin API v{found}, outside the supported window v{min}–v{max}"
    )]
    ApiVersion {
        plugin: String,
        version: String,
        found: u32,
        min: u32,
        max: u32,
    },
    #[error("tool set id `{id}` is contributed twice: by {first} and by {second}")]
    DuplicateSetId {
        id: String,
        first: Owner,
        second: Owner,
    },
    #[error(
        "{owner}: tool set id `{id}` is not kebab-case (lowercase letters, digits and single hyphens, at most 64 characters)"
    )]
    InvalidSetId { owner: Owner, id: String },
    #[error("{owner}, tool set `{set}`: tool name `{name}` does not match ^[a-zA-Z0-9_-]{{1,64}}$")]
    InvalidToolName {
        owner: Owner,
        set: String,
        name: String,
    },
    #[error("plugin `{plugin}` failed to load: {message}")]
    Load { plugin: String, message: String },
    #[error("the loader map entry `{entry}` returned a plugin named `{manifest}`")]
    NameMismatch { entry: String, manifest: String },
    #[error(
        "[plugins.{plugin}] in toolhost.toml configures `{plugin}`, which is not a core plugin"
    )]
    UnknownSettings { plugin: String },
    #[error("{owner}: {message}")]
    Invalid { owner: Owner, message: String },
}
