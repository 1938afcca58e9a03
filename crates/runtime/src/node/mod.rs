//! Node.js workers: warm processes that load tool entry files and run `execute`.

mod flags;
mod frame;
mod outbox;
mod pool;
mod protocol;
mod worker;

use std::path::{Path, PathBuf};

pub(crate) use flags::node_flags;
pub(crate) use pool::{Limits, NodePool, WorkerKey};
pub(crate) use worker::{Worker, WorkerSpawn, describe_exit, signal_group};

const HARNESS: &str = include_str!("harness.mjs");
const HOOKS: &str = include_str!("hooks.mjs");

/// Writes the embedded harness into `cache_dir/harness-<digest>/` (once per version) and
/// returns the path of `harness.mjs`.
pub(crate) fn install_harness(cache_dir: &Path) -> std::io::Result<PathBuf> {
    let mut h = blake3::Hasher::new();
    h.update(HARNESS.as_bytes());
    h.update(HOOKS.as_bytes());
    let dir = cache_dir.join(format!("harness-{}", &h.finalize().to_hex()[..16]));
    let harness = dir.join("harness.mjs");
    if harness.is_file() {
        return Ok(harness);
    }
    std::fs::create_dir_all(cache_dir)?;
    let staging = cache_dir.join(format!(".harness-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging)?;
    std::fs::write(staging.join("harness.mjs"), HARNESS)?;
    std::fs::write(staging.join("hooks.mjs"), HOOKS)?;
    match std::fs::rename(&staging, &dir) {
        Ok(()) => {}
        // Another process installed the same version first.
        Err(_) if harness.is_file() => {
            let _ = std::fs::remove_dir_all(&staging);
        }
        Err(e) => return Err(e),
    }
    Ok(harness)
}
