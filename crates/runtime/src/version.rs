//! The version of a tool's code, so an edited tool reloads on its next call.

use std::io;
use std::path::Path;

/// A digest of every file's path, size and modification time under `dir` (skipping
/// `node_modules` and hidden entries). Costs one `stat` per file, no reads.
pub(crate) fn code_version(dir: &Path) -> io::Result<String> {
    let mut h = blake3::Hasher::new();
    walk(dir, dir, &mut h, 0)?;
    Ok(h.finalize().to_hex()[..16].to_string())
}

fn walk(root: &Path, dir: &Path, h: &mut blake3::Hasher, depth: usize) -> io::Result<()> {
    if depth > 16 {
        return Ok(());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if name_str.starts_with('.') || name_str == "node_modules" {
            continue;
        }
        let meta = entry.metadata()?;
        let path = entry.path();
        if let Ok(rel) = path.strip_prefix(root) {
            h.update(rel.as_os_str().as_encoded_bytes());
        }
        if meta.is_dir() {
            h.update(b"/");
            walk(root, &path, h, depth + 1)?;
        } else {
            use std::os::unix::fs::MetadataExt;
            h.update(&meta.len().to_le_bytes());
            h.update(&meta.mtime().to_le_bytes());
            h.update(&meta.mtime_nsec().to_le_bytes());
        }
    }
    Ok(())
}
