//! What a caller may do: the role of its user and the scopes of its credentials. Every
//! surface checks the same two things, so they live with the callers.

use serde::{Deserialize, Serialize};

/// What a user may manage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads everything.
    Viewer,
    /// Also manages agents and MCP servers.
    Operator,
    /// Also manages users and tokens.
    Admin,
}

impl Role {
    /// Its name in stores and APIs.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }

    /// The role named `text`.
    pub fn parse(text: &str) -> Option<Role> {
        Some(match text {
            "viewer" => Role::Viewer,
            "operator" => Role::Operator,
            "admin" => Role::Admin,
            _ => return None,
        })
    }
}

/// What a credential allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Scope {
    /// List tools and tool sets.
    #[serde(rename = "tools:read")]
    ToolsRead,
    /// Call tools.
    #[serde(rename = "tools:call")]
    ToolsCall,
    /// Manage what the user's role allows.
    #[serde(rename = "admin")]
    Admin,
}

impl Scope {
    /// Every scope.
    pub const ALL: [Scope; 3] = [Scope::ToolsRead, Scope::ToolsCall, Scope::Admin];

    /// Its name in stores, APIs and OAuth challenges.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ToolsRead => "tools:read",
            Scope::ToolsCall => "tools:call",
            Scope::Admin => "admin",
        }
    }

    /// The scope named `text`.
    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text)
    }
}
