//! The version of a tool's code, so an edited tool reloads on its next call.
//!
//! The version digests the path and stamp (device, inode, size, modification time) of every
//! module file of the folder, as [`ToolFolder::modules`] finds them: bounded, never through
//! a directory link, links resolved only inside the folder. Finding the files takes a walk;
//! checking them again takes one `openat2` and `fstat` each, no directory reads: a new file
//! matters only once an existing module imports it, and that edit changes the existing
//! module.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use toolhost_transpile::{Stamp, ToolFolder};

struct Snapshot {
    files: Vec<(PathBuf, Stamp)>,
    version: String,
}

/// Remembers each tool folder's module files, to re-check them cheaply.
#[derive(Default)]
pub(crate) struct CodeVersions {
    known: Mutex<HashMap<PathBuf, Arc<Snapshot>>>,
}

impl CodeVersions {
    /// The version of `dir` when it was last walked, if no file found then has changed.
    /// A re-check stats only files inside the folder, so it runs as the host.
    pub(crate) fn unchanged(&self, dir: &Path) -> Option<String> {
        let snap = self.known.lock().ok()?.get(dir).cloned()?;
        let folder = ToolFolder::open(dir).ok()?;
        snap.files
            .iter()
            .all(|(rel, stamp)| folder.stamp(rel) == *stamp)
            .then(|| snap.version.clone())
    }

    /// Remembers what a walk of `dir` found; returns its version.
    pub(crate) fn remember(&self, dir: &Path, files: Vec<(PathBuf, Stamp)>) -> String {
        let version = version_of(&files);
        if let Ok(mut known) = self.known.lock() {
            if known.len() > 10_000 {
                known.clear();
            }
            known.insert(
                dir.to_path_buf(),
                Arc::new(Snapshot {
                    files,
                    version: version.clone(),
                }),
            );
        }
        version
    }
}

fn version_of(files: &[(PathBuf, Stamp)]) -> String {
    let mut h = blake3::Hasher::new();
    for (rel, stamp) in files {
        h.update(rel.as_os_str().as_encoded_bytes());
        h.update(&[0]);
        stamp.hash_into(&mut h);
    }
    h.finalize().to_hex()[..16].to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;

    fn walk(v: &CodeVersions, d: &Path) -> String {
        let files = ToolFolder::open(d)
            .unwrap()
            .modules(&AtomicBool::new(false))
            .unwrap();
        v.remember(d, files)
    }

    #[test]
    fn changes_when_a_module_changes_and_only_then() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("index.ts"), "a").unwrap();
        std::fs::create_dir(d.join("lib")).unwrap();
        std::fs::write(d.join("lib/x.js"), "b").unwrap();
        std::fs::write(d.join("README.md"), "docs").unwrap();
        let v = CodeVersions::default();
        let first = walk(&v, d);
        assert_eq!(v.unchanged(d).unwrap(), first);
        std::fs::write(d.join("README.md"), "other docs").unwrap();
        assert_eq!(v.unchanged(d).unwrap(), first, "docs are not code");
        std::fs::write(d.join("lib/x.js"), "bb").unwrap();
        assert_eq!(v.unchanged(d), None);
        let second = walk(&v, d);
        assert_ne!(second, first);
        std::fs::remove_file(d.join("lib/x.js")).unwrap();
        assert_eq!(v.unchanged(d), None);
        assert_ne!(walk(&v, d), second, "a deleted module changes the version");
    }

    #[test]
    fn a_folder_swapped_for_a_link_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("tool");
        std::fs::create_dir_all(d.join("lib")).unwrap();
        std::fs::write(d.join("lib/x.ts"), "b").unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("x.ts"), "b").unwrap();
        let v = CodeVersions::default();
        walk(&v, &d);
        std::fs::rename(d.join("lib"), dir.path().join("old-lib")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, d.join("lib")).unwrap();
        assert_eq!(
            v.unchanged(&d),
            None,
            "lib/x.ts now resolves out of the folder"
        );
    }
}
