//! The host every surface shares: the MCP server, the HTTP API, the console and the CLI
//! boot the same [`Host`] and serve tools through the same [`ToolSource`] interface.
//!
//! - [`ConfigFile`]: `toolhost.toml`, loaded and checked (every error names the file,
//!   section and key).
//! - [`Host::boot`]: callers checked, the catalog scanned and watched, the runtime
//!   started, the tool-set registry booted when agents are served; [`Host::shutdown`]
//!   stops them in order.
//! - [`Caller`] and [`Tokens`]: who is calling, and which bearer token names whom.
//! - [`ToolSource`], with [`CatalogSource`] and [`AgentSource`]: the tools one caller
//!   sees, as protocol-free [`ToolInfo`]s, and a [`Change`] whenever they may differ.
//! - [`store`]: the interfaces a store implements (agents, tokens, the call log).
//! - [`oauth`]: access tokens (JWTs) of the OAuth issuers `serve` trusts, beside its own
//!   tokens.
#![warn(missing_docs, unreachable_pub)]

mod access;
mod agent_source;
mod allowed;
mod call_trace;
mod caller;
mod catalog_source;
mod cluster;
mod config;
mod error;
mod host;
mod mcp_servers;
mod metrics;
pub mod oauth;
mod plugin_watch;
pub mod plugins;
mod registry;
mod routed_source;
mod source;
pub mod store;
mod tokens;
mod users;
mod watched;

pub use access::{Role, Scope};
pub use agent_source::AgentSource;
pub use allowed::Allowed;
pub use call_trace::{CallTrace, json_size};
pub use caller::Caller;
pub use catalog_source::CatalogSource;
pub use cluster::{ClusterConfig, Fleet, FleetStatus, NATS_PASSWORD_VARIABLE, NodeStatus};
pub use config::{ConfigError, ConfigFile, ConsoleConfig, ServeConfig, StoreConfig, TokenConfig};
pub use error::HostError;
pub use host::{CatalogView, Host, HostOptions, Persistence, check_exposure, tool_env};
pub use mcp_servers::McpServerError;
pub use metrics::{CallMetrics, escape as prometheus_label};
pub use oauth::{IssuerConfig, OAuthConfig};
pub use registry::{PluginHost, boot_registry};
pub use routed_source::RoutedSource;
pub use source::{Change, Hints, ToolInfo, ToolSource};
pub use tokens::{Tokens, hash_token, is_token_hash};
pub use users::{absolute_path, data_home, homes_dir, user_space};
pub use watched::WatchedCatalog;
