//! A catalog kept current by its watcher, shared by every source that serves it.

use std::sync::{Arc, RwLock, RwLockReadGuard};

use tokio::sync::broadcast::{self, error::RecvError};
use toolhost_catalog::watch::{self, CatalogWatcher};
use toolhost_catalog::{Catalog, CatalogEvent};

use crate::Change;

/// One catalog and (when watching works here) the watcher that re-scans it. Sources
/// subscribe to its events instead of watching the same roots again.
pub struct WatchedCatalog {
    catalog: Arc<RwLock<Catalog>>,
    watcher: Option<CatalogWatcher>,
    /// Changes that are not the catalog's own but change what sources list (an MCP
    /// server added or removed while serving).
    others: broadcast::Sender<()>,
}

impl WatchedCatalog {
    /// Starts watching `catalog`'s roots. Must be called inside a Tokio runtime. A catalog
    /// that cannot be watched is still served, just not reloaded (a warning says so).
    pub fn watch(catalog: Catalog) -> WatchedCatalog {
        let catalog = Arc::new(RwLock::new(catalog));
        let watcher = match watch::watch(Arc::clone(&catalog)) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch the tool roots; edits need a restart");
                None
            }
        };
        WatchedCatalog {
            catalog,
            watcher,
            others: broadcast::channel(16).0,
        }
    }

    /// A catalog that is never re-scanned (one call, then exit).
    pub fn unwatched(catalog: Catalog) -> WatchedCatalog {
        WatchedCatalog {
            catalog: Arc::new(RwLock::new(catalog)),
            watcher: None,
            others: broadcast::channel(16).0,
        }
    }

    /// The catalog itself, shared with the tool-set registry's folder tool sets.
    pub fn shared(&self) -> &Arc<RwLock<Catalog>> {
        &self.catalog
    }

    /// The catalog as it is now (a poisoned lock still holds a whole catalog: each
    /// re-scan replaces folders whole).
    pub fn read(&self) -> RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Its events, if it is watched.
    pub fn subscribe(&self) -> Option<broadcast::Receiver<CatalogEvent>> {
        self.watcher.as_ref().map(CatalogWatcher::subscribe)
    }

    /// Publishes a [`Change`] for `user` (every user's with `None`) on `changes` after each
    /// of its events, until the watcher goes away.
    pub fn forward(&self, user: Option<String>, changes: &broadcast::Sender<Change>) {
        if let Some(events) = self.subscribe() {
            forward(events, user.clone(), changes.clone());
        }
        forward(self.others.subscribe(), user, changes.clone());
    }

    /// Tells every source forwarding this catalog's changes that what they list may have
    /// changed for another reason (an MCP server added, replaced or removed).
    pub fn announce(&self) {
        // No subscriber is fine: the next listing is current anyway.
        let _ = self.others.send(());
    }
}

/// Re-publishes catalog events as [`Change`]s until the watcher goes away.
fn forward<E: Clone + Send + 'static>(
    mut events: broadcast::Receiver<E>,
    user: Option<String>,
    changes: broadcast::Sender<Change>,
) {
    tokio::spawn(async move {
        // Lagged: some events were dropped, but one change notice covers them all.
        while let Ok(_) | Err(RecvError::Lagged(_)) = events.recv().await {
            // No subscriber is fine: the next listing is current anyway.
            let _ = changes.send(Change { user: user.clone() });
        }
    });
}
