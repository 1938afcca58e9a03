//! The fleet's shared catalog: published to the store by `toolhost cluster publish`,
//! served by every gateway from its own copy.
//!
//! Publishing bundles each tool folder of each root (kept in the store by content hash,
//! so an unchanged folder costs nothing) and writes a new epoch only when something
//! changed, then tells the gateways over NATS. A gateway *materializes* the newest epoch
//! into its cache: bundles unpacked once under `bundles/HASH`, and per root a folder of
//! links `roots/NAME/FOLDER → bundles/HASH`, each swapped by an atomic rename. The
//! gateway's ordinary catalog watches those roots, so a published edit reaches every
//! session's `list_changed` through the path a local edit takes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toolhost_catalog::Root;
use toolhost_store::{Published, PublishedRoot, Store};

use crate::{Bundles, bundle};

/// The name of a root's tool-set manifest (`toolhost_toolsets`'s).
const TOOLSET: &str = "toolset.toml";

/// What publishing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublishOutcome {
    /// A new epoch, with this many folders.
    Published {
        /// The new epoch.
        epoch: i64,
        /// Tool folders in it.
        folders: usize,
    },
    /// The newest epoch already holds exactly this.
    Unchanged {
        /// That epoch.
        epoch: i64,
    },
}

/// The name a root gets on the gateways: its position and its folder's name, so two roots
/// named alike stay apart.
fn root_name(position: usize, root: &Path) -> String {
    let base: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{position}-{base}")
}

/// The subfolders of `root` that may be tools (hidden ones are not), sorted.
fn tool_dirs(root: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let mut dirs = Vec::new();
    let entries =
        std::fs::read_dir(root).map_err(|e| format!("cannot list {}: {e}", root.display()))?;
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let path = entry.path();
        if !name.starts_with('.') && path.is_dir() {
            dirs.push((name, path));
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Bundles every tool folder of `roots` into the store (through `bundles`, which skips
/// folders unchanged since it last bundled them) and publishes them as a new epoch, unless
/// the newest epoch already holds exactly them.
pub async fn publish(
    store: &Store,
    bundles: &Bundles,
    roots: &[Root],
    publisher: &str,
) -> Result<PublishOutcome, String> {
    let mut published = Vec::new();
    for (position, root) in roots.iter().enumerate() {
        let dirs = tool_dirs(&root.path)?;
        let mut folders = Vec::new();
        for (name, dir) in dirs {
            match bundles.of(&dir).await {
                Ok(hash) => folders.push((name, hash)),
                // One folder that cannot be bundled costs only itself.
                Err(e) => tracing::warn!("not published: {name}: {e}"),
            }
        }
        let toolset = match std::fs::read_to_string(root.path.join(TOOLSET)) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(format!(
                    "cannot read {}: {e}",
                    root.path.join(TOOLSET).display()
                ));
            }
        };
        published.push(PublishedRoot {
            name: root_name(position, &root.path),
            toolset,
            folders,
        });
    }
    let newest = store
        .published_catalog()
        .await
        .map_err(|e| format!("cannot read the published catalog: {e}"))?;
    if let Some(newest) = newest
        && newest.roots == published
    {
        return Ok(PublishOutcome::Unchanged {
            epoch: newest.epoch,
        });
    }
    let folders = published.iter().map(|r| r.folders.len()).sum();
    let epoch = store
        .publish_catalog(publisher, &published)
        .await
        .map_err(|e| format!("cannot publish the catalog: {e}"))?;
    Ok(PublishOutcome::Published { epoch, folders })
}

/// Watches `roots` (every file beneath them): the receiver gets a word after each burst
/// of changes has settled for `settle`. Dropping the receiver stops the watch.
pub fn watch(
    roots: &[Root],
    settle: std::time::Duration,
) -> Result<tokio::sync::mpsc::Receiver<()>, String> {
    use notify::Watcher;
    let (raw_tx, mut raw) = tokio::sync::mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // Reading a file (a runner or the publisher itself) changes nothing.
        if event.is_ok_and(|e| !matches!(e.kind, notify::EventKind::Access(_))) {
            let _ = raw_tx.send(());
        }
    })
    .map_err(|e| format!("cannot watch the tool roots: {e}"))?;
    for root in roots {
        watcher
            .watch(&root.path, notify::RecursiveMode::Recursive)
            .map_err(|e| format!("cannot watch {}: {e}", root.path.display()))?;
    }
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        // The watcher lives as long as this task.
        let _watcher = watcher;
        while raw.recv().await.is_some() {
            while let Ok(Some(())) = tokio::time::timeout(settle, raw.recv()).await {}
            if tx.send(()).await.is_err() {
                break;
            }
        }
    });
    Ok(rx)
}

/// A gateway's copy of the published catalog, under one folder.
pub struct Materialized {
    dir: PathBuf,
}

impl Materialized {
    /// The copy kept in `dir` (the gateway's cache).
    pub fn new(dir: PathBuf) -> Materialized {
        Materialized { dir }
    }

    fn bundles(&self) -> PathBuf {
        self.dir.join("bundles")
    }

    /// The folder a published root is served from.
    pub fn root(&self, name: &str) -> PathBuf {
        self.dir.join("roots").join(name)
    }

    /// Makes the copy hold `published`: bundles it lacks fetched from `store` and
    /// unpacked, every folder's link pointing at its bundle, folders no longer published
    /// removed, each root's `toolset.toml` written. Returns each root's folder, in order,
    /// and each tool folder's bundle (for the gateway's bundle cache).
    pub async fn apply(
        &self,
        store: &Store,
        published: &Published,
    ) -> Result<(Vec<PathBuf>, BTreeMap<PathBuf, String>), String> {
        let bundles = self.bundles();
        std::fs::create_dir_all(&bundles)
            .map_err(|e| format!("cannot make {}: {e}", bundles.display()))?;
        let mut roots = Vec::new();
        let mut known = BTreeMap::new();
        for root in &published.roots {
            let dir = self.root(&root.name);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
            for (folder, hash) in &root.folders {
                let target = bundles.join(hash);
                if !target.is_dir() {
                    let packed = store
                        .bundle(hash)
                        .await
                        .map_err(|e| format!("cannot read bundle {hash}: {e}"))?
                        .ok_or_else(|| format!("the store has no bundle {hash}"))?;
                    let (hash, bundles) = (hash.clone(), bundles.clone());
                    tokio::task::spawn_blocking(move || bundle::unpack(&packed, &hash, &bundles))
                        .await
                        .map_err(|e| e.to_string())?
                        .map_err(|e| e.to_string())?;
                }
                let link = dir.join(folder);
                point(&link, &target)?;
                known.insert(link, hash.clone());
            }
            // Folders published before and not now.
            for (name, path) in tool_dirs(&dir).unwrap_or_default() {
                if !root.folders.iter().any(|(f, _)| *f == name) {
                    let _ = std::fs::remove_file(&path);
                }
            }
            let manifest = dir.join(TOOLSET);
            match &root.toolset {
                Some(text) => {
                    if std::fs::read_to_string(&manifest).ok().as_deref() != Some(text) {
                        write_atomically(&manifest, text)?;
                    }
                }
                None => {
                    let _ = std::fs::remove_file(&manifest);
                }
            }
            roots.push(dir);
        }
        Ok((roots, known))
    }
}

/// Makes `link` a symbolic link to `target`, replacing what was there in one rename.
fn point(link: &Path, target: &Path) -> Result<(), String> {
    if std::fs::read_link(link).ok().as_deref() == Some(target) {
        return Ok(());
    }
    let name = link
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = link.with_file_name(format!(".{name}.link-{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    std::os::unix::fs::symlink(target, &temp)
        .and_then(|()| std::fs::rename(&temp, link))
        .map_err(|e| {
            format!(
                "cannot point {} at {}: {e}",
                link.display(),
                target.display()
            )
        })
}

fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&temp, text)
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_named_by_position_and_folder() {
        assert_eq!(root_name(0, Path::new("/srv/tools")), "0-tools");
        assert_eq!(root_name(2, Path::new("/a/my tools!")), "2-my_tools_");
    }
}
