//! MCP servers added, replaced and removed while the host serves (those a store keeps):
//! each becomes an external source of the tool-set registry, granted by name like the
//! configuration file's `[mcp_servers]`, which stay read-only.

use std::sync::Arc;

use toolhost_mcp_client::{McpServerConfig, ProbeError, ProbedTool};
use toolhost_toolsets::ExternalSource;

use crate::{Host, HostError};

/// Why a server cannot be managed.
#[derive(Debug, thiserror::Error)]
pub enum McpServerError {
    /// The host serves no tool sets, so no MCP servers either.
    #[error("this host serves no tool sets: MCP servers need agents or a store")]
    NoRegistry,
    /// `[mcp_servers.NAME]` of the configuration file defines it: change it there.
    #[error("MCP server `{0}` comes from toolhost.toml: change it there")]
    FromConfig(String),
    /// Its settings are wrong, or its name is taken by a tool set.
    #[error(transparent)]
    Invalid(#[from] HostError),
}

impl Host {
    /// Checks `config` as boot checks `[mcp_servers]`, and that `name` is free for it:
    /// neither the configuration file's server nor a tool set's id.
    pub fn check_mcp_server(
        &self,
        name: &str,
        config: &McpServerConfig,
    ) -> Result<(), McpServerError> {
        let registry = self.registry().ok_or(McpServerError::NoRegistry)?;
        if self.config().mcp_servers.contains_key(name) {
            return Err(McpServerError::FromConfig(name.to_string()));
        }
        if registry.tool_set(name).is_some() {
            return Err(McpServerError::Invalid(HostError::ToolSets(
                toolhost_toolsets::BootError::DuplicateSource {
                    owner: toolhost_toolsets::Owner::McpServer {
                        name: name.to_string(),
                    },
                },
            )));
        }
        let servers = std::iter::once((name.to_string(), config.clone())).collect();
        toolhost_mcp_client::sources(&servers, &self.runtime().servers())
            .map_err(HostError::from)?;
        Ok(())
    }

    /// Serves `config` as MCP server `name` from the next turn on, replacing the server
    /// of that name (whose connection or process is closed first). The settings are
    /// checked as boot checks `[mcp_servers]`; the server is not contacted.
    pub async fn put_mcp_server(
        &self,
        name: &str,
        config: McpServerConfig,
    ) -> Result<(), McpServerError> {
        let registry = self.registry().ok_or(McpServerError::NoRegistry)?;
        if self.config().mcp_servers.contains_key(name) {
            return Err(McpServerError::FromConfig(name.to_string()));
        }
        let servers = std::iter::once((name.to_string(), config)).collect();
        let launcher = self.runtime().servers();
        let source = toolhost_mcp_client::sources(&servers, &launcher)
            .map_err(HostError::from)?
            .pop();
        let Some(source) = source else {
            return Ok(());
        };
        let old = registry
            .put_external(Arc::clone(&source) as Arc<dyn ExternalSource>)
            .map_err(HostError::from)?;
        if let Some(old) = old {
            old.shutdown().await;
        }
        // Clients listening for `list_changed` list again.
        self.catalog().announce();
        Ok(())
    }

    /// Stops serving MCP server `name` (closing its connection or process); whether it
    /// was served. The configuration file's servers stay.
    pub async fn remove_mcp_server(&self, name: &str) -> Result<bool, McpServerError> {
        let registry = self.registry().ok_or(McpServerError::NoRegistry)?;
        if self.config().mcp_servers.contains_key(name) {
            return Err(McpServerError::FromConfig(name.to_string()));
        }
        match registry.remove_external(name) {
            Some(old) => {
                old.shutdown().await;
                self.catalog().announce();
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Connects to a server configured as `config`, lists its tools and disconnects,
    /// calling none (a stdio server starts in the sandbox like any other).
    pub async fn probe_mcp_server(
        &self,
        name: &str,
        config: McpServerConfig,
    ) -> Result<Vec<ProbedTool>, ProbeError> {
        toolhost_mcp_client::probe(name, config, &self.runtime().servers()).await
    }
}
