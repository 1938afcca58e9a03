//! Tool roots as tool sets: each root of the catalog is one set, so TOOL.md tools are
//! granted, scoped and resolved like any other.
//!
//! A root may hold `toolset.toml` (our extension to the Officer layout) saying what the
//! set is; every key is optional:
//!
//! ```toml
//! id = "research"            # default: the root folder's name in kebab-case
//! name = "Research"          # default: the folder's name
//! category = "Research"      # default: "Folder tools"
//! description = "…"          # default: "Tools from <root>"
//! icon = "flask-conical"     # a Lucide icon; default: none (the wrench)
//! resolve_timeout = 5        # seconds
//! [icons]                    # per-tool overrides
//! web_search = "search"
//! ```
//!
//! The set's tools are the catalog's resolved tools that live in the root, read live at
//! each turn: a tool overridden by a later root belongs to that root's set, and hot
//! reload shows up at the next turn.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::Deserialize;
use toolhost_catalog::Catalog;

use crate::context::TurnContext;
use crate::error::BootError;
use crate::names::{is_valid_set_id, to_kebab_case};
use crate::owner::Owner;
use crate::tool::{Tool, ToolMap};
use crate::toolset::{FactoryFuture, ToolFactory, ToolSet, Tools};

/// The optional manifest file of a tool root.
pub const MANIFEST: &str = "toolset.toml";

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Manifest {
    id: Option<String>,
    name: Option<String>,
    category: Option<String>,
    description: Option<String>,
    icon: Option<String>,
    #[serde(with = "toolhost_spec::seconds::opt_secs")]
    resolve_timeout: Option<Duration>,
    icons: BTreeMap<String, String>,
}

/// One tool set per root of `catalog`, in root order.
pub fn root_sets(catalog: &Arc<RwLock<Catalog>>) -> Result<Vec<(ToolSet, Owner)>, BootError> {
    let roots = match catalog.read() {
        Ok(c) => c.roots().to_vec(),
        Err(_) => return Ok(Vec::new()),
    };
    let mut sets = Vec::with_capacity(roots.len());
    for (index, root) in roots.iter().enumerate() {
        let owner = Owner::Folder {
            root: root.path.clone(),
        };
        let manifest = read_manifest(&root.path, &owner)?;
        let dir_name = root
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "tools".into());
        let id = manifest
            .id
            .unwrap_or_else(|| default_id(&root.path, &dir_name));
        if !is_valid_set_id(&id) {
            return Err(BootError::InvalidSetId { owner, id });
        }
        let factory = RootTools {
            catalog: Arc::clone(catalog),
            index,
            icons: manifest.icons,
        };
        let set = ToolSet {
            id,
            name: manifest.name.unwrap_or(dir_name),
            category: manifest.category.unwrap_or_else(|| "Folder tools".into()),
            description: manifest
                .description
                .unwrap_or_else(|| format!("Tools from {}", root.path.display())),
            icon: manifest.icon,
            tools: Tools::factory(factory),
            resolve_timeout: manifest.resolve_timeout,
        };
        sets.push((set, owner));
    }
    Ok(sets)
}

/// `tools` is the usual name of every root (`DATA_PATH/tools`, `…/EMAIL/tools`), so the
/// default id takes the parent's name too: `alice-example-com-tools`.
fn default_id(path: &Path, dir_name: &str) -> String {
    let mut id = to_kebab_case(dir_name);
    if id == "tools"
        && let Some(parent) = path.parent().and_then(|p| p.file_name())
    {
        id = to_kebab_case(&format!("{} tools", parent.to_string_lossy()));
    }
    if id.is_empty() { "tools".into() } else { id }
}

fn read_manifest(root: &Path, owner: &Owner) -> Result<Manifest, BootError> {
    let path = root.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
        Err(source) => {
            return Err(BootError::ReadManifest {
                owner: owner.clone(),
                path,
                source,
            });
        }
    };
    toml::from_str(&text).map_err(|e| BootError::Manifest {
        owner: owner.clone(),
        message: e.message().to_string(),
        path,
    })
}

struct RootTools {
    catalog: Arc<RwLock<Catalog>>,
    index: usize,
    icons: BTreeMap<String, String>,
}

impl RootTools {
    fn current(&self) -> ToolMap {
        let Ok(catalog) = self.catalog.read() else {
            return ToolMap::new();
        };
        let mut map = ToolMap::new();
        for resolved in catalog.tools_in_root(self.index) {
            let mut tool = Tool::folder(Arc::clone(resolved));
            if let Some(icon) = self.icons.get(&resolved.manifest.name) {
                tool = tool.with_icon(icon);
            }
            map.add(tool);
        }
        map
    }
}

impl ToolFactory for RootTools {
    fn tools(&self, _ctx: TurnContext) -> FactoryFuture {
        let map = self.current();
        Box::pin(async move { Ok(map) })
    }

    fn known_tools(&self) -> Vec<String> {
        // The names alone: building each tool (its identity, annotations) is for turns.
        match self.catalog.read() {
            Ok(c) => c
                .tools_in_root(self.index)
                .map(|t| t.manifest.name.clone())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn icon_overrides(&self) -> Vec<(String, String)> {
        self.icons.clone().into_iter().collect()
    }
}
