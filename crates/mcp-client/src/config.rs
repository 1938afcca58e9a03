//! `[mcp_servers.NAME]` of `toolhost.toml`: how to reach one external MCP server. The
//! client owns it (the host's configuration file embeds it): nothing else reads it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolhost_spec::seconds::opt_secs;

/// An external MCP server whose tools become the tool set `NAME`, named `NAME__TOOL`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// stdio: the program and its arguments, e.g. `["node", "server.mjs"]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Extra environment of the stdio server. Besides it, a sandboxed server gets `PATH`
    /// (the tools' own), `HOME` (its own) and `LANG`; an unsandboxed one the host's
    /// `PATH`, `HOME`, `LANG` and `TMPDIR`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The stdio server's working directory (shown read-only in the sandbox).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Whether the stdio server runs in the sandbox (default true): its own uid and home,
    /// only the host paths granted here, the network only when granted.
    #[serde(skip_serializing_if = "is_true")]
    pub sandbox: bool,
    /// Whether the sandboxed server may connect out (default false), through the network
    /// supervisor as networked tools do.
    #[serde(skip_serializing_if = "is_false")]
    pub network: bool,
    /// Host paths the sandboxed server may read, each shown at its own path. Its working
    /// directory and the absolute paths among its arguments (a file's folder) are added.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
    /// Host paths the sandboxed server may read and write, each shown at its own path.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_write: Vec<PathBuf>,
    /// Streamable HTTP: the endpoint URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Sent as `Authorization: Bearer …` to a Streamable HTTP server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<String>,
    /// Sent with every request to a Streamable HTTP server (`X-Api-Key`, …).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Like `bearer_token`, read from this environment variable at boot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    /// Connecting and listing, per turn (seconds, default 10).
    #[serde(with = "opt_secs", skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// How long the last good listing may be served while the server fails (default 300).
    #[serde(with = "opt_secs", skip_serializing_if = "Option::is_none")]
    pub stale_for: Option<Duration>,
    /// First back-off after a failure, doubled per failure up to 5 minutes (default 5).
    #[serde(with = "opt_secs", skip_serializing_if = "Option::is_none")]
    pub backoff: Option<Duration>,
    /// A Lucide icon name for the server's tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// What the server is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Default for McpServerConfig {
    fn default() -> McpServerConfig {
        McpServerConfig {
            command: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            sandbox: true,
            network: false,
            read_only: Vec::new(),
            read_write: Vec::new(),
            url: None,
            bearer_token: None,
            headers: BTreeMap::new(),
            bearer_token_env: None,
            timeout: None,
            stale_for: None,
            backoff: None,
            icon: None,
            description: None,
        }
    }
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl McpServerConfig {
    /// The sandbox settings given, by their keys (they apply to stdio servers only).
    pub(crate) fn sandbox_keys(&self) -> Vec<&'static str> {
        let mut keys = Vec::new();
        if !self.sandbox {
            keys.push("sandbox");
        }
        if self.network {
            keys.push("network");
        }
        if !self.read_only.is_empty() {
            keys.push("read_only");
        }
        if !self.read_write.is_empty() {
            keys.push("read_write");
        }
        keys
    }
}
