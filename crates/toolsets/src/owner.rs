//! Who contributed a tool set: the one type boot errors, the registry and claims share.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// Where a tool set comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Owner {
    /// A plugin's contribution.
    Plugin {
        /// The plugin's name.
        name: String,
    },
    /// A tool root of the catalog.
    Folder {
        /// The root's path.
        root: PathBuf,
    },
    /// An external MCP server (its tools are listed per turn).
    McpServer {
        /// The server's name in `[mcp_servers.NAME]`.
        name: String,
    },
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Owner::Plugin { name } => write!(f, "plugin `{name}`"),
            Owner::Folder { root } => write!(f, "tool root {}", root.display()),
            Owner::McpServer { name } => write!(f, "MCP server `{name}`"),
        }
    }
}
