//! The tool-set sections of `toolhost.toml`: `[agents.ID]`, `[plugins.NAME]`, `[turns]`
//! and `[tool_sets.ID]`. (`[mcp_servers.NAME]` belongs to the MCP client, which turns it
//! into the external sources boot receives.)

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything about tool sets the operator configures.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsetsConfig {
    /// `[agents.ID]`: what each agent is granted.
    pub agents: BTreeMap<String, AgentConfig>,
    /// `[plugins.NAME]`: each plugin's own settings.
    pub plugins: BTreeMap<String, Value>,
    /// `[turns]`: deadlines of turn resolution.
    pub turns: TurnSettings,
    /// `[tool_sets.ID]`: operator overrides per tool set.
    pub tool_sets: BTreeMap<String, SetSettings>,
}

/// Deadlines of turn resolution.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TurnSettings {
    /// How long a tool-set factory may take, unless the set says otherwise (seconds).
    #[serde(with = "toolhost_spec::seconds::secs")]
    pub resolve_timeout: Duration,
    /// One deadline for all closers of a turn (seconds).
    #[serde(with = "toolhost_spec::seconds::secs")]
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
    /// How long the set's factory may take per turn (seconds), overriding the set's own.
    #[serde(with = "toolhost_spec::seconds::opt_secs")]
    pub resolve_timeout: Option<Duration>,
    /// A Lucide icon for the set's tools, over the set's own (a plugin's sets have none).
    pub icon: Option<String>,
}

/// An agent: what it is granted.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it is for (shown in agent forms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A Lucide icon name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// The workspace its turns run in (tool-set factories read it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The organisation its turns run in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    /// In precedence order: within a layer, a later grant's tool wins a name.
    pub grants: Vec<Grant>,
}

/// One grant: a tool set or an MCP server (typed, never an untyped id), its precedence
/// layer, and optional per-tool allow and deny lists.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "RawGrant", into = "RawGrant")]
pub struct Grant {
    /// What is granted.
    pub source: GrantSource,
    /// Its precedence layer.
    pub layer: Layer,
    /// Only these tools of the source (by claimed name), when given.
    pub allow: Option<Vec<String>>,
    /// Never these tools of the source.
    pub deny: Vec<String>,
}

impl Grant {
    /// A grant of tool set `id`, in the session layer, with no allow or deny list.
    pub fn tool_set(id: &str) -> Grant {
        Grant {
            source: GrantSource::ToolSet(id.into()),
            layer: Layer::Session,
            allow: None,
            deny: Vec::new(),
        }
    }

    /// A grant of MCP server `name`, in the session layer, with no allow or deny list.
    pub fn mcp_server(name: &str) -> Grant {
        Grant {
            source: GrantSource::McpServer(name.into()),
            ..Grant::tool_set("")
        }
    }

    /// The same grant in `layer`.
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

/// What a grant names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "id", rename_all = "kebab-case")]
pub enum GrantSource {
    /// A tool set, by id.
    ToolSet(String),
    /// An external MCP server, by name (its tools are `NAME__TOOL`).
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
    /// The agent's own grants.
    #[default]
    Session,
    /// Tools found by a search.
    Search,
    /// A sub-agent's grants.
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

/// A grant that names neither or both of a tool set and an MCP server (serde reports it
/// with the grant's place in the file).
#[derive(Debug, thiserror::Error)]
#[error("a grant names exactly one of `tool_set = \"ID\"` or `mcp_server = \"NAME\"`")]
struct AmbiguousGrant;

impl TryFrom<RawGrant> for Grant {
    type Error = AmbiguousGrant;
    fn try_from(raw: RawGrant) -> Result<Grant, AmbiguousGrant> {
        let source = match (raw.tool_set, raw.mcp_server) {
            (Some(id), None) => GrantSource::ToolSet(id),
            (None, Some(name)) => GrantSource::McpServer(name),
            _ => return Err(AmbiguousGrant),
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
