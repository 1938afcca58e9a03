//! The catalog as a [`ToolSource`]: global tools, overridden per user by
//! `DATA_PATH/EMAIL/tools`, both kept current by the catalog's watcher.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::{Map, Value};
use tokio::sync::broadcast::{self, error::RecvError};
use toolhost_catalog::watch::{self, CatalogWatcher};
use toolhost_catalog::{Catalog, ResolvedTool, Root, RootOrigin};
use toolhost_runtime::ToolRef;

use crate::{Caller, Change, Target, ToolInfo, ToolSource};

/// One catalog with the watcher that keeps it current.
struct Watched {
    catalog: Arc<RwLock<Catalog>>,
    _watcher: Option<CatalogWatcher>,
}

impl Watched {
    /// Starts watching; `user` tags the changes it publishes. A catalog that cannot be
    /// watched is still served, just not reloaded.
    fn new(catalog: Catalog, user: Option<String>, changes: &broadcast::Sender<Change>) -> Self {
        let catalog = Arc::new(RwLock::new(catalog));
        let watcher = match watch::watch(Arc::clone(&catalog)) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch the tool roots; edits need a restart");
                None
            }
        };
        if let Some(w) = &watcher {
            forward(w.subscribe(), user, changes.clone());
        }
        Watched {
            catalog,
            _watcher: watcher,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|e| e.into_inner())
    }
}

/// Re-publishes catalog events as [`Change`]s until the watcher goes away.
fn forward(
    mut events: broadcast::Receiver<toolhost_catalog::CatalogEvent>,
    user: Option<String>,
    changes: broadcast::Sender<Change>,
) {
    tokio::spawn(async move {
        // Lagged: some events were dropped, but one change notice covers them all.
        while let Ok(_) | Err(RecvError::Lagged(_)) = events.recv().await {
            // No subscriber is fine: the next tools/list is current anyway.
            let _ = changes.send(Change { user: user.clone() });
        }
    });
}

/// Serves a catalog. With a data directory, each caller's `DATA_PATH/EMAIL/tools`
/// overrides the global tools by name for that caller alone.
pub struct CatalogSource {
    global: Watched,
    data: Option<PathBuf>,
    users: Mutex<HashMap<String, Arc<Watched>>>,
    changes: broadcast::Sender<Change>,
}

impl CatalogSource {
    /// Must be called inside a Tokio runtime (change forwarding runs on it). `data` enables
    /// per-user tools: pass it only when `catalog` holds no user's root itself.
    pub fn new(catalog: Catalog, data: Option<PathBuf>) -> CatalogSource {
        let (changes, _) = broadcast::channel(256);
        CatalogSource {
            global: Watched::new(catalog, None, &changes),
            data,
            users: Mutex::new(HashMap::new()),
            changes,
        }
    }

    /// The caller's own catalog, scanned and watched from their first request on. A user
    /// folder created later is picked up at the next request after it appears.
    fn user_catalog(&self, caller: &Caller) -> Option<Arc<Watched>> {
        let data = self.data.as_ref()?;
        let user = caller.user();
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = users.get(user) {
            return Some(Arc::clone(w));
        }
        toolhost_catalog::validate_user(user).ok()?;
        let path = data.join(user).join("tools");
        // Never a link (the user's tools could have planted one to another user's tools);
        // the user's next sandboxed call replaces it with a folder.
        if !toolhost_catalog::is_real_dir(&path) {
            return None;
        }
        let root = Root {
            path,
            origin: RootOrigin::DataUser {
                user: user.to_string(),
            },
        };
        let watched = Arc::new(Watched::new(
            Catalog::scan(vec![root]),
            Some(user.to_string()),
            &self.changes,
        ));
        users.insert(user.to_string(), Arc::clone(&watched));
        Some(watched)
    }
}

fn info(resolved: &ResolvedTool) -> ToolInfo {
    let t = &resolved.tool;
    let schema = match t.input_schema() {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    ToolInfo {
        name: t.manifest.name.clone(),
        title: t.manifest.label.clone(),
        description: t.manifest.description.clone(),
        input_schema: Arc::new(schema),
        annotations: None,
    }
}

impl ToolSource for CatalogSource {
    fn tools(&self, caller: &Caller) -> Vec<ToolInfo> {
        let mut by_name: BTreeMap<String, ToolInfo> = BTreeMap::new();
        for t in self.global.read().tools() {
            by_name.insert(t.tool.manifest.name.clone(), info(t));
        }
        if let Some(own) = self.user_catalog(caller) {
            for t in own.read().tools() {
                by_name.insert(t.tool.manifest.name.clone(), info(t));
            }
        }
        by_name.into_values().collect()
    }

    fn resolve(&self, caller: &Caller, name: &str) -> Option<Target> {
        let folder = |tool: &Arc<_>| Target {
            tool: ToolRef::Folder(Arc::clone(tool)),
            // A folder tool's own `timeout` key is the runtime's to apply.
            timeout: None,
        };
        if let Some(own) = self.user_catalog(caller)
            && let Some(t) = own.read().get(name)
        {
            return Some(folder(&t.tool));
        }
        let global = self.global.read();
        global.get(name).map(|t| folder(&t.tool))
    }

    fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }
}
