//! Node.js workers: warm processes that load tool entry files and run `execute`.

mod flags;
mod frame;
mod outbox;
mod pool;
mod protocol;
mod worker;

use std::path::{Path, PathBuf};

pub(crate) use flags::node_flags;
pub(crate) use pool::{Limits, NodePool, PluginKey, WorkerKey};
pub(crate) use protocol::CallMessage;
pub(crate) use worker::{Worker, WorkerSpawn, describe_exit, signal_group};

const HARNESS: &str = include_str!("harness.mjs");
const HOOKS: &str = include_str!("hooks.mjs");
const PLUGINS: &str = include_str!("plugins.mjs");
const PLUGIN_SDK: &str = include_str!("plugin-sdk.mjs");
include!(concat!(env!("OUT_DIR"), "/node_vendor.rs"));

/// The harness's files: its path in the harness folder, and its bytes.
fn harness_files() -> impl Iterator<Item = (std::borrow::Cow<'static, str>, &'static [u8])> {
    [
        ("harness.mjs", HARNESS.as_bytes()),
        ("hooks.mjs", HOOKS.as_bytes()),
        ("plugins.mjs", PLUGINS.as_bytes()),
        ("plugin-sdk.mjs", PLUGIN_SDK.as_bytes()),
    ]
    .into_iter()
    .map(|(p, b)| (std::borrow::Cow::Borrowed(p), b))
    .chain(
        VENDOR
            .iter()
            .map(|(p, b)| (std::borrow::Cow::Owned(format!("vendor/{p}")), *b)),
    )
}

/// Writes the embedded harness into `cache_dir/harness-<digest>/` (once per version) and
/// returns the path of `harness.mjs`.
pub(crate) fn install_harness(cache_dir: &Path) -> std::io::Result<PathBuf> {
    let mut h = blake3::Hasher::new();
    for (path, bytes) in harness_files() {
        h.update(path.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    let dir = cache_dir.join(format!("harness-{}", &h.finalize().to_hex()[..16]));
    let harness = dir.join("harness.mjs");
    if harness.is_file() {
        return Ok(harness);
    }
    std::fs::create_dir_all(cache_dir)?;
    let staging = cache_dir.join(format!(".harness-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging)?;
    for (path, bytes) in harness_files() {
        let file = staging.join(&*path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(file, bytes)?;
    }
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
