//! Keeping roots watched when they are deleted and re-created, or replaced by a rename.
//!
//! An inotify watch belongs to a directory, not to a path: once a root is deleted (or
//! moved away), its recursive watch is gone (or follows the old directory), and a new
//! directory at the same path would never be watched. So besides the recursive watch of
//! every root that exists, the nearest existing ancestor of every root is watched (not
//! recursively): a root that reappears, or is swapped for another directory, shows up
//! there, and its recursive watch is armed again.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use notify::{RecursiveMode, Watcher};

use crate::CatalogError;

/// Which directory a path named when it was watched: a root deleted and re-created may get
/// the same inode number back, so this alone cannot tell a replaced root; events do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

fn identity(path: &Path) -> Option<Identity> {
    // Follows a symlinked root: the directory behind it is what gets watched.
    let meta = std::fs::metadata(path).ok()?;
    meta.is_dir().then(|| Identity {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

pub(super) struct RootWatches {
    roots: Vec<PathBuf>,
    /// Per root: the directory its recursive watch is on, or `None` while it is missing
    /// (or could not be watched).
    armed: Vec<Option<Identity>>,
    /// Ancestors watched for roots appearing or being replaced.
    anchors: BTreeMap<PathBuf, Identity>,
}

impl RootWatches {
    /// Watches every root that exists and the ancestors of all of them. A missing root is
    /// not an error (it is watched for); a root that exists but cannot be watched is.
    pub(crate) fn start(
        roots: &[PathBuf],
        watcher: &mut dyn Watcher,
    ) -> Result<Self, CatalogError> {
        let mut w = RootWatches {
            roots: roots.to_vec(),
            armed: vec![None; roots.len()],
            anchors: BTreeMap::new(),
        };
        w.update_anchors(&[], watcher);
        for i in w.shallow_first() {
            let root = &w.roots[i];
            let Some(id) = identity(root) else {
                tracing::info!(root = %root.display(), "tool root is missing (or not a directory); watching for it to appear");
                continue;
            };
            watcher
                .watch(root, RecursiveMode::Recursive)
                .map_err(|source| CatalogError::Watch {
                    path: root.clone(),
                    source,
                })?;
            w.armed[i] = Some(id);
        }
        Ok(w)
    }

    /// Whether an event at `path` may mean that a root appeared, vanished or was
    /// replaced: it names the root itself or one of its ancestors.
    pub(crate) fn concerns(&self, path: &Path) -> Vec<usize> {
        (0..self.roots.len())
            .filter(|&i| self.roots[i].starts_with(path))
            .collect()
    }

    /// Brings the watches in line with the file system: roots in `touched` (events named
    /// them or their ancestors) are watched afresh if they exist, as is any root whose
    /// directory changed or appeared. Returns the roots to re-scan: every one whose watch
    /// was armed or lost, since changes made meanwhile were not seen.
    pub(crate) fn reconcile(&mut self, touched: &[usize], watcher: &mut dyn Watcher) -> Vec<usize> {
        self.update_anchors(touched, watcher);
        let mut rescan = Vec::new();
        for i in self.shallow_first() {
            let now = identity(&self.roots[i]);
            let was = self.armed[i];
            if now.is_some() && now == was && !touched.contains(&i) {
                continue;
            }
            rescan.push(i);
            let root = self.roots[i].clone();
            if was.is_some() {
                // Whatever notify still holds for this path watches a directory that is
                // gone or elsewhere; it may already have dropped it, hence no error check.
                let _ = watcher.unwatch(&root);
                self.armed[i] = None;
                // Unwatching a path drops the watches of every root nested in it too.
                for j in 0..self.roots.len() {
                    if j != i && self.roots[j].starts_with(&root) {
                        self.armed[j] = None;
                    }
                }
            }
            let Some(id) = now else {
                if was.is_some() {
                    tracing::warn!(root = %root.display(), "tool root disappeared: its tools are withdrawn until it comes back");
                }
                continue;
            };
            match watcher.watch(&root, RecursiveMode::Recursive) {
                Ok(()) => {
                    self.armed[i] = Some(id);
                    if was.is_some() {
                        tracing::info!(root = %root.display(), "tool root was replaced: watching the new one");
                    } else {
                        tracing::info!(root = %root.display(), "tool root is back: watching it again");
                    }
                }
                Err(e) => {
                    tracing::warn!(root = %root.display(), error = %e, "cannot watch tool root: its changes are missed until it is re-created");
                }
            }
        }
        rescan
    }

    /// Every root, outer roots before roots nested in them (re-arming an outer one
    /// drops the nested ones' watches, which are then armed again).
    fn shallow_first(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.roots.len()).collect();
        order.sort_by_key(|&i| self.roots[i].components().count());
        order
    }

    /// Watches the nearest existing ancestor of each root, and stops watching ancestors
    /// no longer needed. An ancestor inside a root is left alone: the root's recursive
    /// watch sees it already, and watching it again non-recursively would replace that.
    /// The ancestors of `touched` roots are watched afresh: one of them may be a new
    /// directory that got the inode number of the one it replaced.
    fn update_anchors(&mut self, touched: &[usize], watcher: &mut dyn Watcher) {
        let mut wanted: BTreeMap<PathBuf, Identity> = BTreeMap::new();
        let mut renew: Vec<PathBuf> = Vec::new();
        for (i, root) in self.roots.iter().enumerate() {
            let found = root
                .ancestors()
                .skip(1)
                .find_map(|a| identity(a).map(|id| (a, id)));
            if let Some((anchor, id)) = found
                && !self.roots.iter().any(|r| anchor.starts_with(r))
            {
                wanted.insert(anchor.to_path_buf(), id);
                if touched.contains(&i) {
                    renew.push(anchor.to_path_buf());
                }
            }
        }
        let stale: Vec<PathBuf> = self
            .anchors
            .iter()
            .filter(|(path, id)| wanted.get(*path) != Some(id) || renew.contains(path))
            .map(|(path, _)| path.clone())
            .collect();
        for path in stale {
            self.anchors.remove(&path);
            // notify drops the watch of a directory that was deleted by itself.
            let _ = watcher.unwatch(&path);
        }
        for (path, id) in wanted {
            if self.anchors.contains_key(&path) {
                continue;
            }
            match watcher.watch(&path, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.anchors.insert(path, id);
                }
                Err(e) => {
                    tracing::warn!(dir = %path.display(), error = %e, "cannot watch the folder of a tool root: a root re-created there is not noticed");
                }
            }
        }
    }
}
