//! Booting the tool-set registry the way every command that needs one does: core plugins
//! gated by `TOOLHOST_PLUGINS`, the catalog's roots as tool sets, `toolhost.toml`.

use std::sync::{Arc, RwLock};

use anyhow::Result;
use toolhost_catalog::{Catalog, Root};
use toolhost_toolsets::{BootOptions, CorePlugins, Registry, folder};

use crate::config::ConfigFile;

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
