//! The tool-set framework: plugins, tool sets, gating and per-turn resolution.
//!
//! Boot ([`Registry::boot`]) loads the plugins of a loader map ([`CorePlugins`]) that
//! gating enables, adds the tool roots' sets and the external sources it is handed, and
//! checks everything strictly. A turn ([`Registry::resolve`]) turns an agent's grants
//! into the tools the model sees, with warnings for whatever failed and every name
//! collision reported; [`Turn::end`] runs the closers factories registered.
//!
//! No plugin and no client lives here: Toolhost's core plugins are `toolhost-plugins`,
//! external MCP servers are `toolhost-mcp-client`, both on this crate's public API.
#![warn(missing_docs, unreachable_pub)]

mod config;
mod context;
mod doctor;
mod error;
mod external;
pub mod folder;
mod icons;
mod lucide;
mod names;
mod native;
mod owner;
mod platypus;
mod plugin;
mod registry;
mod resolve;
mod tool;
mod toolset;

pub use config::{
    AgentConfig, Grant, GrantSource, Layer, SetSettings, ToolsetsConfig, TurnSettings,
};
pub use context::{CloseError, CloseReport, TurnContext, TurnRequest};
pub use doctor::{Diagnosis, Step};
pub use error::BootError;
pub use external::{ExternalSource, Listing, SourceHealth};
pub use icons::{IconSource, WRENCH};
pub use lucide::is_lucide_icon;
pub use names::{TOOL_NAME_RULE, is_valid_tool_name};
pub use native::{typed_tool, undescribed_properties};
pub use owner::Owner;
pub use platypus::{
    PLATYPUS_API_WINDOW, PluginFuture, PluginRunner, ThirdParty, load as load_third_party,
    manifest_name,
};
pub use plugin::{
    CorePlugins, Gating, LoadError, Loader, MIN_PLUGIN_API_VERSION, PLUGIN_API_VERSION, Plugin,
    PluginSettings, SettingsError, settings,
};
pub use registry::{BootOptions, PluginInfo, Registry, SetEntry, ThirdPartyPlugin};
pub use resolve::{Claim, Collision, Excluded, ResolveError, ResolvedTool, Turn, Warning};
pub use tool::{Annotations, Tool, ToolMap, fingerprint};
pub use toolhost_runtime::ToolError;
pub use toolset::{FactoryError, FactoryFuture, ToolFactory, ToolSet, Tools};
