//! Booting the tool-set registry the way every surface does: Toolhost's core plugins
//! gated by `TOOLHOST_PLUGINS`, the catalog's roots as tool sets, `[mcp_servers]` as
//! external sources (through the MCP client), `toolhost.toml`'s tool-set sections.

use std::sync::{Arc, RwLock};

use toolhost_catalog::Catalog;
use toolhost_runtime::ServerLauncher;
use toolhost_toolsets::{BootOptions, PluginRunner, Registry, folder};

use crate::plugins::{SecretLookup, load_all, plugin_dir, third_party_specs};
use crate::{ConfigFile, HostError};

/// Where third-party plugins run: the runner of the host's runtime, and the store's
/// secrets for their credentials.
pub struct PluginHost<'a> {
    /// Runs their operations.
    pub runner: Arc<dyn PluginRunner>,
    /// Finds `{ secret = "NAME" }` credentials.
    pub secrets: SecretLookup<'a>,
}

/// Boots strictly: any error names the plugin, root or server at fault. The registry's
/// folder tool sets read `catalog`; stdio MCP servers start through `servers` (the
/// runtime's, [`toolhost_runtime::Runtime::servers`], so they share its sandbox); the
/// third-party plugins `TOOLHOST_PLUGINS` names load on `plugins`' runner.
pub async fn boot_registry(
    config: &ConfigFile,
    catalog: &Arc<RwLock<Catalog>>,
    servers: &ServerLauncher,
    plugins: Option<PluginHost<'_>>,
) -> Result<Registry, HostError> {
    let extra_sets = folder::root_sets(catalog)?;
    let external = toolhost_mcp_client::sources(&config.mcp_servers, servers)?;
    let core = toolhost_plugins::builtin();
    let enabled = std::env::var("TOOLHOST_PLUGINS").ok();
    let specs = third_party_specs(enabled.as_deref(), &core);
    let toolsets = config.toolsets();
    let third_party = match (specs.is_empty(), plugins) {
        (true, _) => Vec::new(),
        (false, Some(host)) => {
            load_all(
                &specs,
                &plugin_dir(),
                &toolsets.plugins,
                &host.runner,
                host.secrets,
            )
            .await?
        }
        (false, None) => {
            return Err(HostError::Plugin(
                crate::plugins::PluginSetupError::NotFound {
                    spec: specs.join(","),
                    why:
                        "third-party plugins need a runtime to run on, and this command starts none"
                            .into(),
                },
            ));
        }
    };
    Ok(Registry::boot(
        core,
        BootOptions {
            enabled,
            config: toolsets,
            extra_sets,
            external,
            third_party,
        },
    )?)
}
