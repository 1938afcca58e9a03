//! Plugins, tool sets, gating and per-turn resolution.
//!
//! Boot ([`Registry::boot`]) loads the core plugins the loader map allows and gating
//! enables, adds the tool roots' sets, and checks everything strictly. A turn
//! ([`Registry::resolve`]) turns an agent's grants into the tools the model sees, with
//! warnings for whatever failed and every name collision reported; [`Turn::end`] runs
//! the closers factories registered.

mod config;
mod context;
mod doctor;
mod error;
pub mod folder;
mod icons;
pub mod mcp;
mod names;
mod native;
mod plugin;
pub mod plugins;
mod registry;
mod resolve;
mod tool;
mod toolset;

pub use config::{
    AgentConfig, Grant, GrantSource, Layer, McpServerConfig, SetSettings, ToolsetsConfig,
    TurnSettings,
};
pub use context::{CloseReport, TurnContext, TurnRequest};
pub use doctor::{Diagnosis, Step};
pub use error::BootError;
pub use icons::{IconMaps, IconSource, WRENCH};
pub use names::{TOOL_NAME_RULE, is_valid_set_id, is_valid_tool_name, to_kebab_case};
pub use native::{ToolError, TypedTool, schema_for, typed_tool, undescribed_properties};
pub use plugin::{
    CorePlugins, Gating, Loader, MIN_PLUGIN_API_VERSION, PLUGIN_API_VERSION, Plugin, PluginSettings,
};
pub use registry::{BootOptions, Owner, PluginInfo, Registry, SetEntry};
pub use resolve::{Claim, Collision, Excluded, ResolveError, ResolvedTool, Turn, Warning};
pub use tool::{Annotations, Tool, ToolMap};
pub use toolset::{FactoryFuture, ToolFactory, ToolSet, Tools};
