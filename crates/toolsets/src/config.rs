//! The tool-set sections of `toolhost.toml`: `[agents.ID]`, `[mcp_servers.NAME]`,
//! `[plugins.NAME]`, `[turns]` and `[tool_sets.ID]`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything about tool sets the operator configures.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsetsConfig {
    pub agents: BTreeMap<String, AgentConfig>,
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `[plugins.NAME]`: each plugin's own settings.
    pub plugins: BTreeMap<String, Value>,
    pub turns: TurnSettings,
    pub tool_sets: BTreeMap<String, SetSettings>,
}

/// Deadlines of turn resolution.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TurnSettings {
    /// How long a tool-set factory may take, unless the set says otherwise (seconds).
    #[serde(with = "secs")]
    pub resolve_timeout: Duration,
    /// One deadline for all closers of a turn (seconds).
    #[serde(with = "secs")]
    pub close_timeout: Duration,
}

impl Default for TurnSettings {
    fn default() -> Self {
        TurnSettings {
            resolve_timeout: Duration::from_secs(20),
            close_timeout: Duration::from_secs(10),
        }
    }
}

/// Operator overrides for one tool set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SetSettings {
    #[serde(with = "opt_secs")]
    pub resolve_timeout: Option<Duration>,
}

/// An agent: what it is granted.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    pub name: Option<String>,
    /// In precedence order: within a layer, a later grant's tool wins a name.
    pub grants: Vec<Grant>,
}

/// One grant: a tool set or an MCP server (typed, never an untyped id), its precedence
/// layer, and optional per-tool allow and deny lists.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "RawGrant", into = "RawGrant")]
pub struct Grant {
    pub source: GrantSource,
    pub layer: Layer,
    /// Only these tools of the source (by claimed name), when given.
    pub allow: Option<Vec<String>>,
    /// Never these tools of the source.
    pub deny: Vec<String>,
}

impl Grant {
    pub fn tool_set(id: &str) -> Grant {
        Grant {
            source: GrantSource::ToolSet(id.into()),
            layer: Layer::Session,
            allow: None,
            deny: Vec::new(),
        }
    }

    pub fn mcp_server(name: &str) -> Grant {
        Grant {
            source: GrantSource::McpServer(name.into()),
            ..Grant::tool_set("")
        }
    }

    pub fn in_layer(mut self, layer: Layer) -> Grant {
        self.layer = layer;
        self
    }

    /// True when the grant's allow and deny lists let `name` through.
    pub fn admits(&self, name: &str) -> bool {
        self.allow
            .as_ref()
            .is_none_or(|a| a.iter().any(|n| n == name))
            && !self.deny.iter().any(|n| n == name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "id", rename_all = "kebab-case")]
pub enum GrantSource {
    ToolSet(String),
    McpServer(String),
}

impl std::fmt::Display for GrantSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrantSource::ToolSet(id) => write!(f, "tool set `{id}`"),
            GrantSource::McpServer(n) => write!(f, "MCP server `{n}`"),
        }
    }
}

/// Precedence layers of a turn: each beats the one before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    #[default]
    Session,
    Search,
    SubAgent,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawGrant {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_set: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mcp_server: Option<String>,
    #[serde(default)]
    layer: Layer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    allow: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deny: Vec<String>,
}

impl TryFrom<RawGrant> for Grant {
    type Error = String;
    fn try_from(raw: RawGrant) -> Result<Grant, String> {
        let source = match (raw.tool_set, raw.mcp_server) {
            (Some(id), None) => GrantSource::ToolSet(id),
            (None, Some(name)) => GrantSource::McpServer(name),
            _ => {
                return Err(
                    "a grant names exactly one of `tool_set = \"ID\"` or `mcp_server = \"NAME\"`"
                        .into(),
                );
            }
        };
        Ok(Grant {
            source,
            layer: raw.layer,
            allow: raw.allow,
            deny: raw.deny,
        })
    }
}

impl From<Grant> for RawGrant {
    fn from(g: Grant) -> RawGrant {
        let (tool_set, mcp_server) = match g.source {
            GrantSource::ToolSet(id) => (Some(id), None),
            GrantSource::McpServer(n) => (None, Some(n)),
        };
        RawGrant {
            tool_set,
            mcp_server,
            layer: g.layer,
            allow: g.allow,
            deny: g.deny,
        }
    }
}

/// An external MCP server whose tools become the tool set `NAME`, named `NAME__TOOL`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// stdio: the program and its arguments, e.g. `["node", "server.mjs"]`.
    pub command: Vec<String>,
    /// Extra environment of the stdio server (it gets nothing else of the host's but PATH
    /// and HOME).
    pub env: BTreeMap<String, String>,
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
    pub icon: Option<String>,
    pub description: Option<String>,
}

pub(crate) mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, de::Error};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = f64::deserialize(d)?;
        Duration::try_from_secs_f64(s)
            .map_err(|_| D::Error::custom("expected a non-negative number of seconds"))
    }
}

pub(crate) mod opt_secs {
    use std::time::Duration;

    use serde::{Deserializer, de::Error};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let s: f64 = serde::Deserialize::deserialize(d)?;
        Duration::try_from_secs_f64(s)
            .map(Some)
            .map_err(|_| D::Error::custom("expected a non-negative number of seconds"))
    }
}
