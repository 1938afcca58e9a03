//! The catalog proper: folders per root, and the name → winning definition view.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use toolhost_spec::{Code, Diagnostic, Entry, ToolManifest};

use crate::folder::{self, FolderEntry};
use crate::{ContentHash, Root};

/// A valid tool definition found in one folder.
#[derive(Debug)]
pub struct Tool {
    /// The validated TOOL.md.
    pub manifest: ToolManifest,
    /// The file the runtime loads on the first call.
    pub entry: Entry,
    /// The tool folder.
    pub dir: PathBuf,
    /// The root the folder was found in.
    pub root: PathBuf,
    /// Position of `root` in the catalog's roots (higher wins).
    pub root_index: usize,
    /// Identifies this version of TOOL.md (and which entry file exists).
    pub hash: ContentHash,
    /// Built on first use, then kept: every call validates against it.
    pub(crate) input_schema: OnceLock<Value>,
}

impl Tool {
    /// The JSON Schema of the tool's parameters.
    pub fn input_schema(&self) -> &Value {
        self.input_schema
            .get_or_init(|| self.manifest.input_schema())
    }
}

/// The definition that wins for a name, and the folders it overrides.
#[derive(Debug, Clone)]
pub struct ResolvedTool {
    /// The winning definition, from the highest root that defines the name.
    pub tool: Arc<Tool>,
    /// Folders of earlier roots defining the same name, earliest first.
    pub shadows: Vec<PathBuf>,
}

/// What happened to a name in the served view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// A tool is now served under a name that had none.
    Added,
    /// The definition served under the name changed (edited, or another folder won).
    Changed,
    /// Nothing is served under the name any more.
    Removed,
}

/// A change in what the catalog serves under one name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CatalogEvent {
    /// What happened.
    pub kind: EventKind,
    /// The tool name it happened to.
    pub name: String,
}

type FolderKey = (usize, String);

/// All tools across the roots, kept current by [`Catalog::rescan_folders`].
pub struct Catalog {
    roots: Vec<Root>,
    /// Per root, by folder name.
    folders: Vec<BTreeMap<String, FolderEntry>>,
    /// Tool name → every folder that defines it.
    by_name: HashMap<String, BTreeSet<FolderKey>>,
    resolved: BTreeMap<String, ResolvedTool>,
    /// Per root, the served tools whose winning folder is in it, by name: a root's tool
    /// set reads its tools here without walking every root's.
    by_root: Vec<BTreeMap<String, Arc<Tool>>>,
    /// Tool name → duplicate-name errors within one root.
    duplicates: BTreeMap<String, Vec<Diagnostic>>,
    /// Roots that could not be listed.
    root_errors: Vec<Option<Diagnostic>>,
}

impl Catalog {
    /// Scans every root (folders in parallel) and resolves the names.
    pub fn scan(roots: Vec<Root>) -> Catalog {
        let mut root_errors = Vec::with_capacity(roots.len());
        let mut work = Vec::new();
        for (i, root) in roots.iter().enumerate() {
            match folder::list_root(root) {
                Ok(dirs) => {
                    root_errors.push(None);
                    work.extend(dirs.into_iter().map(|(name, path)| (i, name, path)));
                }
                Err(e) => root_errors.push(Some(unreadable_root(&root.path, &e))),
            }
        }
        let loaded: Vec<(usize, String, FolderEntry)> = work
            .into_par_iter()
            .map(|(i, name, path)| {
                let entry = folder::load(&roots[i].path, i, &path);
                (i, name, entry)
            })
            .collect();

        let mut catalog = Catalog {
            folders: vec![BTreeMap::new(); roots.len()],
            by_root: vec![BTreeMap::new(); roots.len()],
            roots,
            by_name: HashMap::new(),
            resolved: BTreeMap::new(),
            duplicates: BTreeMap::new(),
            root_errors,
        };
        for (i, name, entry) in loaded {
            if let Some(tool) = &entry.tool {
                catalog
                    .by_name
                    .entry(tool.manifest.name.clone())
                    .or_default()
                    .insert((i, name.clone()));
            }
            catalog.folders[i].insert(name, entry);
        }
        let names: Vec<String> = catalog.by_name.keys().cloned().collect();
        for name in names {
            catalog.resolve(&name);
        }
        catalog
    }

    /// The roots, in order of increasing precedence.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The tool served under `name`.
    pub fn get(&self, name: &str) -> Option<&ResolvedTool> {
        self.resolved.get(name)
    }

    /// Every served tool, ordered by name.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &ResolvedTool> {
        self.resolved.values()
    }

    /// The served tools whose winning folder is in root `i` (the `i`th of
    /// [`roots`](Self::roots)), by name; none for an index out of range.
    pub fn tools_in_root(&self, i: usize) -> impl Iterator<Item = &Arc<Tool>> {
        self.by_root.get(i).into_iter().flat_map(BTreeMap::values)
    }

    /// How many tools are served.
    pub fn len(&self) -> usize {
        self.resolved.len()
    }

    /// True when no tool is served.
    pub fn is_empty(&self) -> bool {
        self.resolved.is_empty()
    }

    /// Every finding: unreadable roots, per-folder diagnostics and duplicate names, sorted.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all: Vec<Diagnostic> = self.root_errors.iter().flatten().cloned().collect();
        for folders in &self.folders {
            for entry in folders.values() {
                all.extend(entry.diagnostics.iter().cloned());
            }
        }
        all.extend(self.duplicates.values().flatten().cloned());
        all.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        all
    }

    /// Re-reads the given folders (by root index and folder name) and returns what changed
    /// in the served view. Folders whose content hash is unchanged cost one read and a stat.
    pub fn rescan_folders(
        &mut self,
        keys: impl IntoIterator<Item = (usize, String)>,
    ) -> Vec<CatalogEvent> {
        let mut affected = BTreeSet::new();
        for (i, name) in keys {
            if i < self.roots.len() {
                self.rescan_one(i, &name, &mut affected);
            }
        }
        self.resolve_all_of(affected)
    }

    /// Re-lists a root (folders added or removed) and re-scans every folder in it.
    pub fn rescan_root(&mut self, i: usize) -> Vec<CatalogEvent> {
        let Some(root) = self.roots.get(i) else {
            return Vec::new();
        };
        let mut names: BTreeSet<String> = self.folders[i].keys().cloned().collect();
        match folder::list_root(root) {
            Ok(dirs) => {
                self.root_errors[i] = None;
                names.extend(dirs.into_iter().map(|(n, _)| n));
            }
            Err(e) => self.root_errors[i] = Some(unreadable_root(&root.path, &e)),
        }
        self.rescan_folders(names.into_iter().map(|n| (i, n)))
    }

    /// Re-lists and re-scans every root, for when the watcher lost track of events.
    pub(crate) fn rescan_all(&mut self) -> Vec<CatalogEvent> {
        (0..self.roots.len())
            .flat_map(|i| self.rescan_root(i))
            .collect()
    }

    fn rescan_one(&mut self, i: usize, folder_name: &str, affected: &mut BTreeSet<String>) {
        let dir = self.roots[i].path.join(folder_name);
        let is_tool_dir = !folder_name.starts_with('.')
            && dir.is_dir()
            && folder::followable(&self.roots[i]).is_ok();
        let new = is_tool_dir.then(|| folder::load(&self.roots[i].path, i, &dir));
        let old = self.folders[i].get(folder_name);
        if let (Some(old), Some(new)) = (old, &new)
            && old.hash == new.hash
            && old.diagnostics == new.diagnostics
        {
            return;
        }
        let key = (i, folder_name.to_string());
        if let Some(old_tool) = old.and_then(|o| o.tool.as_ref()) {
            let name = old_tool.manifest.name.clone();
            if let Some(set) = self.by_name.get_mut(&name) {
                set.remove(&key);
                if set.is_empty() {
                    self.by_name.remove(&name);
                }
            }
            affected.insert(name);
        }
        match new {
            Some(entry) => {
                if let Some(tool) = &entry.tool {
                    let name = tool.manifest.name.clone();
                    self.by_name.entry(name.clone()).or_default().insert(key);
                    affected.insert(name);
                }
                self.folders[i].insert(folder_name.to_string(), entry);
            }
            None => {
                self.folders[i].remove(folder_name);
            }
        }
    }

    fn resolve_all_of(&mut self, names: BTreeSet<String>) -> Vec<CatalogEvent> {
        let mut events = Vec::new();
        for name in names {
            let before = self
                .resolved
                .get(&name)
                .map(|r| (r.tool.dir.clone(), r.tool.hash));
            self.resolve(&name);
            let after = self
                .resolved
                .get(&name)
                .map(|r| (r.tool.dir.clone(), r.tool.hash));
            let kind = match (before, after) {
                (None, Some(_)) => EventKind::Added,
                (Some(_), None) => EventKind::Removed,
                (Some(a), Some(b)) if a != b => EventKind::Changed,
                _ => continue,
            };
            events.push(CatalogEvent { kind, name });
        }
        events
    }

    /// Recomputes the winner for one name: the last root defining it wins; a root that
    /// defines it twice contributes neither definition, and both get an error.
    fn resolve(&mut self, name: &str) {
        self.duplicates.remove(name);
        if let Some(old) = self.resolved.remove(name)
            && let Some(root) = self.by_root.get_mut(old.tool.root_index)
        {
            root.remove(name);
        }
        let Some(keys) = self.by_name.get(name) else {
            return;
        };
        let mut candidates: Vec<Arc<Tool>> = Vec::new();
        let mut dups = Vec::new();
        let mut keys = keys.iter().peekable();
        while let Some((root, first)) = keys.next() {
            let mut same_root = vec![first];
            while let Some((_, next)) = keys.next_if(|(r, _)| r == root) {
                same_root.push(next);
            }
            let tools: Vec<&Arc<Tool>> = same_root
                .iter()
                .filter_map(|f| self.folders[*root].get(*f).and_then(|e| e.tool.as_ref()))
                .collect();
            match tools.as_slice() {
                [] => {}
                [one] => candidates.push(Arc::clone(one)),
                many => {
                    let dirs: Vec<&Path> = many.iter().map(|t| t.dir.as_path()).collect();
                    dups.extend(duplicate_diagnostics(name, &dirs));
                }
            }
        }
        if !dups.is_empty() {
            self.duplicates.insert(name.to_string(), dups);
        }
        if let Some(winner) = candidates.pop() {
            if let Some(root) = self.by_root.get_mut(winner.root_index) {
                root.insert(name.to_string(), Arc::clone(&winner));
            }
            let shadows = candidates.iter().map(|t| t.dir.clone()).collect();
            self.resolved.insert(
                name.to_string(),
                ResolvedTool {
                    tool: winner,
                    shadows,
                },
            );
        }
    }
}

/// One `duplicate-name` error per folder of one root that defines `name`.
pub(crate) fn duplicate_diagnostics(name: &str, dirs: &[&Path]) -> Vec<Diagnostic> {
    dirs.iter()
        .map(|dir| {
            let others: Vec<String> =
                dirs.iter().filter(|d| *d != dir).map(|d| d.display().to_string()).collect();
            Diagnostic::error(
                dir.join(toolhost_spec::TOOL_MD),
                None,
                Code::DuplicateName,
                format!(
                    "tool name `{name}` is also defined in {} (same root): both are left out until one is renamed",
                    others.join(", ")
                ),
            )
        })
        .collect()
}

pub(crate) fn unreadable_root(path: &Path, e: &std::io::Error) -> Diagnostic {
    Diagnostic::error(
        path,
        None,
        Code::RootUnreadable,
        format!("cannot list tool root: {e}"),
    )
}
