//! The catalog as a [`ToolSource`]: global tools, overridden per user by
//! `DATA_PATH/EMAIL/tools`, both kept current by the catalog's watcher.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio::sync::broadcast;
use toolhost_catalog::{Catalog, ResolvedTool, Root, RootOrigin};
use toolhost_runtime::{Target, ToolRef};

use crate::{Caller, Change, ToolInfo, ToolSource, WatchedCatalog};

/// Serves a catalog. With a data directory, each caller's `DATA_PATH/EMAIL/tools`
/// overrides the global tools by name for that caller alone.
pub struct CatalogSource {
    global: Arc<WatchedCatalog>,
    data: Option<PathBuf>,
    users: Mutex<HashMap<String, Arc<WatchedCatalog>>>,
    changes: broadcast::Sender<Change>,
}

impl CatalogSource {
    /// Must be called inside a Tokio runtime (change forwarding runs on it). `data` enables
    /// per-user tools: pass it only when `global` holds no user's root itself.
    pub fn new(global: Arc<WatchedCatalog>, data: Option<PathBuf>) -> CatalogSource {
        let (changes, _) = broadcast::channel(256);
        global.forward(None, &changes);
        CatalogSource {
            global,
            data,
            users: Mutex::new(HashMap::new()),
            changes,
        }
    }

    /// The caller's own catalog, scanned and watched from their first request on. A user
    /// folder created later is picked up at the next request after it appears.
    fn user_catalog(&self, caller: &Caller) -> Option<Arc<WatchedCatalog>> {
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
        let watched = Arc::new(WatchedCatalog::watch(Catalog::scan(vec![root])));
        watched.forward(Some(user.to_string()), &self.changes);
        users.insert(user.to_string(), Arc::clone(&watched));
        Some(watched)
    }
}

/// How a catalog tool is listed.
pub(crate) fn info(resolved: &ResolvedTool) -> ToolInfo {
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
        hints: None,
    }
}

#[async_trait::async_trait]
impl ToolSource for CatalogSource {
    async fn tools(&self, caller: &Caller) -> Vec<ToolInfo> {
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

    async fn resolve(&self, caller: &Caller, name: &str) -> Option<Target> {
        // A folder tool's own `timeout` key is the runtime's to apply.
        let folder = |tool: &Arc<_>| Target::new(ToolRef::Folder(Arc::clone(tool)));
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
