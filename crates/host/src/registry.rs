//! Booting the tool-set registry the way every surface does: core plugins gated by
//! `TOOLHOST_PLUGINS`, the catalog's roots as tool sets, `toolhost.toml`'s sections.

use std::sync::{Arc, RwLock};

use toolhost_catalog::Catalog;
use toolhost_toolsets::{BootError, BootOptions, CorePlugins, Registry, folder};

use crate::ConfigFile;

/// Boots strictly: any error names the plugin, root or server at fault. The registry's
/// folder tool sets read `catalog`.
pub fn boot_registry(
    config: &ConfigFile,
    catalog: &Arc<RwLock<Catalog>>,
) -> Result<Registry, BootError> {
    let extra_sets = folder::root_sets(catalog)?;
    Registry::boot(
        CorePlugins::builtin(),
        BootOptions {
            enabled: std::env::var("TOOLHOST_PLUGINS").ok(),
            config: config.toolsets(),
            extra_sets,
        },
    )
}
