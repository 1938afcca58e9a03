//! The version of a tool's code, so an edited tool reloads on its next call.
//!
//! The version digests the path, size and modification time of every module file of the
//! folder (skipping `node_modules` and hidden entries). Finding the files takes a walk;
//! checking them again takes one `stat` each, no directory reads: a new file matters only
//! once an existing module imports it, and that edit changes the existing module.

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Files whose change changes what `import` loads.
const MODULE_EXTENSIONS: &[&str] = &["ts", "mts", "cts", "tsx", "js", "mjs", "cjs", "json"];

#[derive(Clone, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            size: meta.len(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
        }
    }
}

struct Snapshot {
    files: Vec<(PathBuf, Stamp)>,
    version: String,
}

/// Remembers each tool folder's module files, to re-check them cheaply.
#[derive(Default)]
pub(crate) struct CodeVersions {
    known: Mutex<HashMap<PathBuf, Snapshot>>,
}

impl CodeVersions {
    pub fn version(&self, dir: &Path) -> io::Result<String> {
        if let Ok(known) = self.known.lock()
            && let Some(snap) = known.get(dir)
            && snap
                .files
                .iter()
                .all(|(path, stamp)| std::fs::metadata(path).is_ok_and(|m| Stamp::of(&m) == *stamp))
        {
            return Ok(snap.version.clone());
        }
        let mut files = Vec::new();
        walk(dir, &mut files, 0)?;
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut h = blake3::Hasher::new();
        for (path, stamp) in &files {
            h.update(
                path.strip_prefix(dir)
                    .unwrap_or(path)
                    .as_os_str()
                    .as_encoded_bytes(),
            );
            h.update(&[0]);
            h.update(&stamp.size.to_le_bytes());
            h.update(&stamp.mtime.to_le_bytes());
            h.update(&stamp.mtime_nsec.to_le_bytes());
        }
        let version = h.finalize().to_hex()[..16].to_string();
        if let Ok(mut known) = self.known.lock() {
            if known.len() > 10_000 {
                known.clear();
            }
            known.insert(
                dir.to_path_buf(),
                Snapshot {
                    files,
                    version: version.clone(),
                },
            );
        }
        Ok(version)
    }
}

fn walk(dir: &Path, out: &mut Vec<(PathBuf, Stamp)>, depth: usize) -> io::Result<()> {
    if depth > 16 {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "node_modules" {
            continue;
        }
        let path = entry.path();
        let meta = std::fs::metadata(&path)?;
        if meta.is_dir() {
            walk(&path, out, depth + 1)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| MODULE_EXTENSIONS.contains(&e))
        {
            out.push((path, Stamp::of(&meta)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_when_a_module_changes_and_only_then() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("index.ts"), "a").unwrap();
        std::fs::create_dir(d.join("lib")).unwrap();
        std::fs::write(d.join("lib/x.js"), "b").unwrap();
        std::fs::write(d.join("README.md"), "docs").unwrap();
        let v = CodeVersions::default();
        let first = v.version(d).unwrap();
        assert_eq!(v.version(d).unwrap(), first);
        std::fs::write(d.join("README.md"), "other docs").unwrap();
        assert_eq!(v.version(d).unwrap(), first, "docs are not code");
        std::fs::write(d.join("lib/x.js"), "bb").unwrap();
        let second = v.version(d).unwrap();
        assert_ne!(second, first);
        std::fs::remove_file(d.join("lib/x.js")).unwrap();
        assert_ne!(
            v.version(d).unwrap(),
            second,
            "a deleted module changes the version"
        );
    }
}
