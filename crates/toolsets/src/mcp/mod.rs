//! External MCP servers as tool sources.

use crate::config::McpServerConfig;
use crate::tool::ToolMap;

/// What one listing of a server gave this turn.
pub struct Listing {
    pub tools: ToolMap,
    /// Set when the server cost tools (or served a stale listing).
    pub warning: Option<String>,
}

impl Listing {
    pub fn failed(message: String) -> Listing {
        Listing {
            tools: ToolMap::new(),
            warning: Some(message),
        }
    }
}

/// One configured MCP server.
pub struct McpSource {
    name: String,
    config: McpServerConfig,
}

impl McpSource {
    pub fn new(name: &str, config: McpServerConfig) -> Result<McpSource, String> {
        Ok(McpSource {
            name: name.into(),
            config,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn config(&self) -> &McpServerConfig {
        &self.config
    }

    pub async fn list(&self) -> Listing {
        Listing::failed("MCP servers are not supported yet".into())
    }
}

impl McpSource {
    /// `stdio: node server.mjs` or `http: URL`, for listings.
    pub fn transport_description(&self) -> String {
        match &self.config.url {
            Some(url) => format!("streamable HTTP {url}"),
            None => format!("stdio `{}`", self.config.command.join(" ")),
        }
    }
}
