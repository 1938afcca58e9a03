//! Hot reload: file-system events → re-scans of the folders that changed → [`CatalogEvent`]s.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use notify::RecommendedWatcher;
use tokio::sync::broadcast;

use crate::{Catalog, CatalogError, CatalogEvent};

mod rearm;

use rearm::RootWatches;

/// Editors save in bursts (write temp, rename, chmod): wait this long for quiet.
const QUIET: Duration = Duration::from_millis(50);
/// …but never delay a re-scan longer than this while events keep coming.
const MAX_DELAY: Duration = Duration::from_millis(500);

/// Keeps a shared [`Catalog`] current while it lives. Dropping it stops watching.
pub struct CatalogWatcher {
    /// The watch thread holds only a weak handle (it re-arms roots that come back), so
    /// dropping this one drops the watcher, which ends the thread.
    _watcher: Arc<Mutex<RecommendedWatcher>>,
    events: broadcast::Sender<CatalogEvent>,
}

impl CatalogWatcher {
    /// Receives every change published after this call.
    pub fn subscribe(&self) -> broadcast::Receiver<CatalogEvent> {
        self.events.subscribe()
    }
}

/// Starts watching every root of `catalog`, including roots that do not exist yet or are
/// later deleted, re-created or replaced (`watch/rearm.rs` says how).
pub fn watch(catalog: Arc<RwLock<Catalog>>) -> Result<CatalogWatcher, CatalogError> {
    let roots: Vec<PathBuf> = {
        let c = catalog.read().unwrap_or_else(|e| e.into_inner());
        c.roots()
            .iter()
            .map(|r| std::path::absolute(&r.path).unwrap_or_else(|_| r.path.clone()))
            .collect()
    };
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).map_err(|source| CatalogError::Watch {
        path: PathBuf::new(),
        source,
    })?;
    let watches = RootWatches::start(&roots, &mut watcher)?;
    let watcher = Arc::new(Mutex::new(watcher));
    let (events, _) = broadcast::channel(1024);
    let sender = events.clone();
    let handle = Arc::downgrade(&watcher);
    std::thread::Builder::new()
        .name("catalog-watch".into())
        .spawn(move || {
            Loop {
                roots,
                watches,
                watcher: handle,
            }
            .run(rx, &catalog, &sender)
        })
        .map_err(|e| CatalogError::Watch {
            path: PathBuf::new(),
            source: notify::Error::io(e),
        })?;
    Ok(CatalogWatcher {
        _watcher: watcher,
        events,
    })
}

#[derive(Default)]
struct Pending {
    folders: BTreeSet<(usize, String)>,
    roots: BTreeSet<usize>,
    /// Roots whose own path or an ancestor's was named by an event: they may have been
    /// deleted, re-created or replaced.
    touched: BTreeSet<usize>,
    everything: bool,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.folders.is_empty() && self.roots.is_empty() && !self.everything
    }
}

struct Loop {
    roots: Vec<PathBuf>,
    watches: RootWatches,
    watcher: Weak<Mutex<RecommendedWatcher>>,
}

impl Loop {
    fn run(
        mut self,
        rx: mpsc::Receiver<notify::Result<notify::Event>>,
        catalog: &RwLock<Catalog>,
        events: &broadcast::Sender<CatalogEvent>,
    ) {
        // The loop ends when the watcher (the only sender) is dropped.
        while let Ok(first) = rx.recv() {
            let mut pending = Pending::default();
            self.note(&mut pending, first);
            let started = Instant::now();
            loop {
                let left = MAX_DELAY.saturating_sub(started.elapsed());
                match rx.recv_timeout(QUIET.min(left)) {
                    Ok(ev) => self.note(&mut pending, ev),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
                if left.is_zero() {
                    break;
                }
            }
            if pending.everything || !pending.touched.is_empty() {
                let Some(watcher) = self.watcher.upgrade() else {
                    return;
                };
                let mut watcher = watcher.lock().unwrap_or_else(|e| e.into_inner());
                // After lost events any root may have been replaced unseen.
                let touched: Vec<usize> = if pending.everything {
                    (0..self.roots.len()).collect()
                } else {
                    pending.touched.iter().copied().collect()
                };
                let rescan = self.watches.reconcile(&touched, &mut *watcher);
                pending.roots.extend(rescan);
            }
            if pending.is_empty() {
                continue;
            }
            let changes = {
                let mut c = catalog.write().unwrap_or_else(|e| e.into_inner());
                if pending.everything {
                    c.rescan_all()
                } else {
                    let mut changes: Vec<CatalogEvent> = pending
                        .roots
                        .iter()
                        .flat_map(|&i| c.rescan_root(i))
                        .collect();
                    let folders = pending
                        .folders
                        .into_iter()
                        .filter(|(i, _)| !pending.roots.contains(i));
                    changes.extend(c.rescan_folders(folders));
                    changes
                }
            };
            for change in changes {
                tracing::info!(kind = ?change.kind, name = %change.name, "catalog changed");
                // No subscriber is fine: the catalog itself is already current.
                let _ = events.send(change);
            }
        }
    }

    fn note(&self, pending: &mut Pending, event: notify::Result<notify::Event>) {
        let event = match event {
            Ok(ev) => ev,
            Err(e) => {
                tracing::warn!(error = %e, "file watcher error; re-scanning every root");
                pending.everything = true;
                return;
            }
        };
        if event.need_rescan() {
            pending.everything = true;
            return;
        }
        // Reads (our own re-scans among them) change nothing.
        if matches!(event.kind, notify::EventKind::Access(_)) {
            return;
        }
        for path in &event.paths {
            pending.touched.extend(self.watches.concerns(path));
            match locate(&self.roots, path) {
                Some((i, Some(folder))) => {
                    pending.folders.insert((i, folder));
                }
                Some((i, None)) => {
                    pending.roots.insert(i);
                }
                None => {}
            }
        }
    }
}

/// Root index and tool folder name of a changed path; `None` as folder means the root itself.
fn locate(roots: &[PathBuf], path: &Path) -> Option<(usize, Option<String>)> {
    let (i, rest) = roots
        .iter()
        .enumerate()
        .filter_map(|(i, r)| path.strip_prefix(r).ok().map(|rest| (i, rest)))
        .max_by_key(|(i, _)| roots[*i].components().count())?;
    let folder = rest
        .components()
        .next()
        .and_then(|c| c.as_os_str().to_str())
        .map(str::to_string);
    Some((i, folder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_changes_in_the_deepest_root() {
        let roots = vec![
            PathBuf::from("/d/tools"),
            PathBuf::from("/d/tools/x/nested"),
        ];
        assert_eq!(
            locate(&roots, Path::new("/d/tools/a/TOOL.md")),
            Some((0, Some("a".into())))
        );
        assert_eq!(locate(&roots, Path::new("/d/tools")), Some((0, None)));
        assert_eq!(
            locate(&roots, Path::new("/d/tools/x/nested/b/index.ts")),
            Some((1, Some("b".into())))
        );
        assert_eq!(locate(&roots, Path::new("/elsewhere/a")), None);
    }
}
