//! Officer's standard tools (`seed/tools/`, embedded by `build.rs`), installed the way
//! Officer installs its seed: copied into `DATA_PATH/tools` by version, so a newer
//! Toolhost updates them and a user's own edits stay until a newer version ships.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use toolhost_catalog::sync::{SyncItem, SyncOptions, sync};

include!(concat!(env!("OUT_DIR"), "/seed_tools.rs"));

/// Syncs the standard tools into `data/tools` (created if missing).
pub fn install(data: &Path, dry_run: bool) -> Result<Vec<SyncItem>> {
    let staging = Staging::new()?;
    for (rel, bytes) in SEED_TOOLS {
        let path = staging.0.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let opts = SyncOptions {
        dry_run,
        ..Default::default()
    };
    let target = data.join("tools");
    let items = sync(&staging.0, &target, &opts).with_context(|| {
        format!(
            "cannot install the standard tools into {}",
            target.display()
        )
    })?;
    // The set's name and icons, unless the folder has its own already.
    let set = target.join(TOOLSET);
    if !dry_run && !set.exists() && staging.0.join(TOOLSET).is_file() {
        std::fs::copy(staging.0.join(TOOLSET), &set)
            .with_context(|| format!("cannot write {}", set.display()))?;
    }
    Ok(items)
}

/// The tool-set file of a root (`toolset.toml`).
const TOOLSET: &str = "toolset.toml";

/// A private folder for the embedded seed, removed when dropped.
struct Staging(PathBuf);

impl Staging {
    fn new() -> Result<Staging> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("toolhost-seed-{}-{nanos:08x}", std::process::id()));
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Staging(dir))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
