//! Why a host could not boot or serve.

use toolhost_catalog::CatalogError;
use toolhost_mcp_client::ServerConfigError;
use toolhost_runtime::RuntimeError;
use toolhost_toolsets::BootError;

use crate::ConfigError;

/// What went wrong, by layer: each names the file, tool root, plugin or user at fault.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// `toolhost.toml` is unreadable or wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A tool root or a user name is wrong.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The runtime could not start (its configuration, the sandbox, the cache).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A plugin or tool set of the configuration failed to boot.
    #[error(transparent)]
    ToolSets(#[from] BootError),
    /// A third-party plugin of `TOOLHOST_PLUGINS` cannot be found or configured.
    #[error(transparent)]
    Plugin(crate::plugins::PluginSetupError),
    /// An MCP server of `[mcp_servers]` is configured wrong.
    #[error(transparent)]
    McpServer(#[from] ServerConfigError),
    /// An agent neither the configuration nor the store defines.
    #[error("no agent `{0}`: toolhost.toml has no [agents.{0}], and no stored agent has that id")]
    UnknownAgent(String),
    /// The store did not answer.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The HTTP surfaces would be open to the network without authentication.
    #[error(
        "refusing to listen on {0} without authentication: add [[serve.tokens]] (or [[serve.oauth.issuers]]) to toolhost.toml, or listen on 127.0.0.1"
    )]
    Unauthenticated(std::net::SocketAddr),
    /// The OAuth issuers cannot be served (their HTTP client would not build).
    #[error(transparent)]
    OAuth(#[from] crate::oauth::OAuthError),
    /// Access tokens would be checked against the audience of an address no client uses.
    #[error(
        "[[serve.oauth.issuers]] with listen address {0}: set [serve] public_url to the URL clients reach the server at (access tokens are issued for it)"
    )]
    NoPublicUrl(std::net::SocketAddr),
    /// A default user was named while tokens name the users.
    #[error(
        "--user names the one user served without tokens; with [[serve.tokens]] (or OAuth issuers) each token names its user"
    )]
    UserWithTokens,
}
