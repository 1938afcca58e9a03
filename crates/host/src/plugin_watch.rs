//! Edits to third-party plugins' files, announced: a plugin's worker is keyed by its code
//! version, so the next call or turn after an edit runs the edited code on a fresh worker
//! (Node.js never unloads a module); this tells MCP clients (`list_changed`) to list again,
//! so a factory's tools are described anew.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use crate::WatchedCatalog;

/// Edits closer together than this are one change.
const SETTLE: Duration = Duration::from_millis(150);

/// Watches the plugin packages; dropping it stops watching.
pub(crate) struct PluginWatch {
    _watcher: notify::RecommendedWatcher,
}

/// Watches `roots` (plugin package folders; their `node_modules` and hidden folders are
/// not code the operator edits) and announces each settled edit on `catalog`. Must be
/// called inside a Tokio runtime. `None` (with a warning) when watching fails here.
pub(crate) fn watch(roots: Vec<PathBuf>, catalog: &Arc<WatchedCatalog>) -> Option<PluginWatch> {
    if roots.is_empty() {
        return None;
    }
    let handle = tokio::runtime::Handle::current();
    let pending = Arc::new(AtomicBool::new(false));
    let announce_to = Arc::downgrade(catalog);
    let watched = roots.clone();
    let on_event = move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if event.kind.is_access() || !event.paths.iter().any(|p| is_code(p, &watched)) {
            return;
        }
        if pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let pending = Arc::clone(&pending);
        let announce_to = announce_to.clone();
        handle.spawn(async move {
            tokio::time::sleep(SETTLE).await;
            pending.store(false, Ordering::Release);
            if let Some(catalog) = announce_to.upgrade() {
                tracing::info!("a plugin's files changed: its next call runs the new code");
                catalog.announce();
            }
        });
    };
    let mut watcher = match notify::recommended_watcher(on_event) {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("cannot watch the plugins' files ({e}); edits need a restart");
            return None;
        }
    };
    for root in &roots {
        if let Err(e) = watcher.watch(root, RecursiveMode::Recursive) {
            tracing::warn!(root = %root.display(), "cannot watch this plugin's files ({e}); its edits need a restart");
        }
    }
    Some(PluginWatch { _watcher: watcher })
}

/// Whether `path` is a plugin's own code: under one of `roots`, outside `node_modules` and
/// hidden folders.
fn is_code(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| {
        path.strip_prefix(root).is_ok_and(|rest| {
            !rest.components().any(|c| {
                let c = c.as_os_str().to_string_lossy();
                c == "node_modules" || c.starts_with('.')
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_plugins_own_files_are_code() {
        let roots = vec![PathBuf::from("/p/one")];
        assert!(is_code(Path::new("/p/one/index.ts"), &roots));
        assert!(is_code(Path::new("/p/one/lib/x.ts"), &roots));
        assert!(!is_code(
            Path::new("/p/one/node_modules/zod/index.js"),
            &roots
        ));
        assert!(!is_code(Path::new("/p/one/.git/HEAD"), &roots));
        assert!(!is_code(Path::new("/p/two/index.ts"), &roots));
    }
}
