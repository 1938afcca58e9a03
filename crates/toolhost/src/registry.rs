//! The flags of every command that boots the tool-set registry alone.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use anyhow::Result;
use toolhost_catalog::{Catalog, Root};
use toolhost_host::ConfigFile;
use toolhost_runtime::ServerLauncher;
use toolhost_toolsets::Registry;

use crate::catalog_args::CatalogArgs;

#[derive(clap::Args)]
pub struct RegistryArgs {
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

impl RegistryArgs {
    /// Boots with the configuration file and the tool roots (none is fine).
    pub fn boot(&self) -> Result<Registry> {
        let config = ConfigFile::load(self.config.as_deref())?;
        boot(&config, self.catalog.roots_if_any()?)
    }
}

/// Boots strictly over a catalog of `roots`: any error names the plugin, root or server
/// at fault. Stdio MCP servers start in a sandbox of their own (no runtime runs here).
pub fn boot(config: &ConfigFile, roots: Vec<Root>) -> Result<Registry> {
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots)));
    let servers = ServerLauncher::new(&config.runtime);
    Ok(toolhost_host::boot_registry(config, &catalog, &servers)?)
}
