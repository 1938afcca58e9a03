//! Booting the tool-set registry the way every command that needs one does: core plugins
//! gated by `TOOLHOST_PLUGINS`, the catalog's roots as tool sets, `toolhost.toml`.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use anyhow::Result;
use toolhost_catalog::{Catalog, Root};
use toolhost_toolsets::{BootOptions, CorePlugins, Registry, folder};

use crate::catalog_args::CatalogArgs;
use crate::config::ConfigFile;

/// The flags of every command that boots the registry.
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
        Ok(boot(&config, self.catalog.roots_if_any()?)?.0)
    }
}

/// Boots strictly: any error names the plugin, root or server at fault.
pub fn boot(config: &ConfigFile, roots: Vec<Root>) -> Result<(Registry, Arc<RwLock<Catalog>>)> {
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots)));
    let extra_sets = folder::root_sets(&catalog)?;
    let registry = Registry::boot(
        CorePlugins::builtin(),
        BootOptions {
            enabled: std::env::var("TOOLHOST_PLUGINS").ok(),
            config: config.toolsets(),
            extra_sets,
        },
    )?;
    Ok((registry, catalog))
}
