//! `[mcp_servers.NAME]` of `toolhost.toml`: how to reach one external MCP server. The
//! client owns it (the host's configuration file embeds it): nothing else reads it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use toolhost_spec::seconds::opt_secs;

/// An external MCP server whose tools become the tool set `NAME`, named `NAME__TOOL`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// stdio: the program and its arguments, e.g. `["node", "server.mjs"]`.
    pub command: Vec<String>,
    /// Extra environment of the stdio server (it gets nothing else of the host's but PATH
    /// and HOME).
    pub env: BTreeMap<String, String>,
    /// The stdio server's working directory.
    pub cwd: Option<PathBuf>,
    /// Streamable HTTP: the endpoint URL.
    pub url: Option<String>,
    /// Sent as `Authorization: Bearer …` to a Streamable HTTP server.
    pub bearer_token: Option<String>,
    /// Like `bearer_token`, read from this environment variable at boot.
    pub bearer_token_env: Option<String>,
    /// Connecting and listing, per turn (seconds, default 10).
    #[serde(with = "opt_secs")]
    pub timeout: Option<Duration>,
    /// How long the last good listing may be served while the server fails (default 300).
    #[serde(with = "opt_secs")]
    pub stale_for: Option<Duration>,
    /// First back-off after a failure, doubled per failure up to 5 minutes (default 5).
    #[serde(with = "opt_secs")]
    pub backoff: Option<Duration>,
    /// A Lucide icon name for the server's tools.
    pub icon: Option<String>,
    /// What the server is for.
    pub description: Option<String>,
}
