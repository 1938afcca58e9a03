//! Booting the tool-set registry the way every surface does: Toolhost's core plugins
//! gated by `TOOLHOST_PLUGINS`, the catalog's roots as tool sets, `[mcp_servers]` as
//! external sources (through the MCP client), `toolhost.toml`'s tool-set sections.

use std::sync::{Arc, RwLock};

use toolhost_catalog::Catalog;
use toolhost_runtime::ServerLauncher;
use toolhost_toolsets::{BootOptions, Registry, folder};

use crate::{ConfigFile, HostError};

/// Boots strictly: any error names the plugin, root or server at fault. The registry's
/// folder tool sets read `catalog`; stdio MCP servers start through `servers` (the
/// runtime's, [`toolhost_runtime::Runtime::servers`], so they share its sandbox).
pub fn boot_registry(
    config: &ConfigFile,
    catalog: &Arc<RwLock<Catalog>>,
    servers: &ServerLauncher,
) -> Result<Registry, HostError> {
    let extra_sets = folder::root_sets(catalog)?;
    let external = toolhost_mcp_client::sources(&config.mcp_servers, servers)?;
    Ok(Registry::boot(
        toolhost_plugins::builtin(),
        BootOptions {
            enabled: std::env::var("TOOLHOST_PLUGINS").ok(),
            config: config.toolsets(),
            extra_sets,
            external,
        },
    )?)
}
