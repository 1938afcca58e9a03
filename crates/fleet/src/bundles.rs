//! A gateway's bundles: each tool folder's current bundle, made when the folder changed
//! and kept in the store before any runner is asked to run it; recent ones in memory,
//! for the runners that fetch them.

use std::collections::{HashMap, VecDeque};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use toolhost_store::Store;

use crate::bundle::{self, MAX_ENTRIES};

/// Bundles kept in memory for runners to fetch.
const IN_MEMORY: usize = 64;

/// What a folder looked like when its bundle was made.
struct Known {
    fingerprint: [u8; 32],
    hash: String,
    /// For a folder of the published catalog's copy: the link's target, an unpacked
    /// bundle, which never changes; the link pointing there still is all to check.
    link: Option<PathBuf>,
}

/// Each tool folder's bundle, made on demand.
pub struct Bundles {
    store: Store,
    known: Mutex<HashMap<PathBuf, Arc<Known>>>,
    packed: Mutex<VecDeque<(String, Arc<Vec<u8>>)>>,
}

impl Bundles {
    /// Bundles kept in `store`.
    pub fn new(store: Store) -> Bundles {
        Bundles {
            store,
            known: Mutex::default(),
            packed: Mutex::default(),
        }
    }

    /// The bundle of `dir` as it is now: known if no file changed since it was made
    /// (one `lstat` per entry), else made and kept in the store first.
    pub async fn of(&self, dir: &Path) -> Result<String, String> {
        let known = self
            .known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(dir)
            .cloned();
        if let Some(known) = &known
            && let Some(link) = &known.link
            && std::fs::read_link(dir).ok().as_ref() == Some(link)
        {
            return Ok(known.hash.clone());
        }
        let owned = dir.to_path_buf();
        let fingerprint = tokio::task::spawn_blocking(move || fingerprint(&owned))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("cannot read the tool folder {}: {e}", dir.display()))?;
        if let Some(known) = known
            && known.fingerprint == fingerprint
        {
            return Ok(known.hash.clone());
        }
        let owned = dir.to_path_buf();
        let made = tokio::task::spawn_blocking(move || bundle::make(&owned))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("cannot bundle the tool folder: {e}"))?;
        self.store
            .put_bundle(&made.hash, &made.packed)
            .await
            .map_err(|e| format!("cannot keep the tool's bundle in the store: {e}"))?;
        tracing::debug!(folder = %dir.display(), bundle = %made.hash, "bundled");
        self.keep(made.hash.clone(), Arc::new(made.packed));
        self.known.lock().unwrap_or_else(|e| e.into_inner()).insert(
            dir.to_path_buf(),
            Arc::new(Known {
                fingerprint,
                hash: made.hash.clone(),
                link: None,
            }),
        );
        Ok(made.hash)
    }

    /// Records that `dir` (a link of the published catalog's copy to its unpacked bundle)
    /// is bundle `hash`, so it is not bundled again while the link points there.
    pub async fn seed(&self, dir: PathBuf, hash: String) {
        let link = std::fs::read_link(&dir).ok();
        let owned = dir.clone();
        let Ok(Ok(fingerprint)) = tokio::task::spawn_blocking(move || fingerprint(&owned)).await
        else {
            return;
        };
        self.known.lock().unwrap_or_else(|e| e.into_inner()).insert(
            dir,
            Arc::new(Known {
                fingerprint,
                hash,
                link,
            }),
        );
    }

    fn keep(&self, hash: String, packed: Arc<Vec<u8>>) {
        let mut kept = self.packed.lock().unwrap_or_else(|e| e.into_inner());
        if kept.iter().any(|(h, _)| *h == hash) {
            return;
        }
        if kept.len() >= IN_MEMORY {
            kept.pop_front();
        }
        kept.push_back((hash, packed));
    }

    /// The gzipped bundle named `hash`: from memory, else from the store.
    pub async fn packed(&self, hash: &str) -> Result<Option<Arc<Vec<u8>>>, String> {
        let hit = self
            .packed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(h, _)| h == hash)
            .map(|(_, p)| Arc::clone(p));
        if hit.is_some() {
            return Ok(hit);
        }
        match self.store.bundle(hash).await {
            Ok(Some(packed)) => {
                let packed = Arc::new(packed);
                self.keep(hash.to_string(), Arc::clone(&packed));
                Ok(Some(packed))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A digest of every entry's path, type, size, inode and modification time: changes
/// whenever a file is edited, added, removed or replaced.
fn fingerprint(dir: &Path) -> std::io::Result<[u8; 32]> {
    let mut h = blake3::Hasher::new();
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(here) = pending.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&here)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(std::io::Error::other(format!(
                    "more than {MAX_ENTRIES} files and folders"
                )));
            }
            let meta = entry.metadata()?;
            let path = entry.path();
            h.update(path.as_os_str().as_encoded_bytes());
            h.update(&[0]);
            for n in [
                meta.mode() as u64,
                meta.len(),
                meta.ino(),
                meta.mtime() as u64,
                meta.mtime_nsec() as u64,
            ] {
                h.update(&n.to_le_bytes());
            }
            if meta.is_dir() {
                pending.push(path);
            }
        }
    }
    Ok(*h.finalize().as_bytes())
}
