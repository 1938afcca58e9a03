//! Chat icons: per-tool overrides, then tool → set, then set → Lucide icon; the wrench
//! when nothing maps.

use std::collections::HashMap;

use serde::Serialize;

use crate::toolset::{ToolSet, Tools};

/// The fallback icon.
pub const WRENCH: &str = "wrench";

/// Which rung of the chain gave a tool its icon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "via", rename_all = "kebab-case")]
pub enum IconSource {
    /// The tool's own override.
    Override,
    /// The tool maps to this set, whose icon it takes.
    ToolSet {
        /// The set's id.
        set: String,
    },
    /// Nothing maps.
    Wrench,
}

/// The three maps, built at boot from every registered set.
#[derive(Debug, Default)]
pub(crate) struct IconMaps {
    overrides: HashMap<String, String>,
    tool_to_set: HashMap<String, String>,
    set_to_icon: HashMap<String, String>,
}

impl IconMaps {
    /// Sets in registration order: a tool in several sets maps to the first that lists
    /// it (its owner, as a rule); a tool with its own icon becomes an override.
    pub(crate) fn build<'a>(sets: impl Iterator<Item = &'a ToolSet>) -> IconMaps {
        let mut maps = IconMaps::default();
        for set in sets {
            if let Some(icon) = &set.icon {
                maps.set_to_icon.insert(set.id.clone(), icon.clone());
            }
            let overrides: Vec<(String, String)> = match (set.tools.listed(), &set.tools) {
                (Some(tools), _) => tools
                    .iter()
                    .filter_map(|(name, t)| Some((name.to_string(), t.icon()?.to_string())))
                    .collect(),
                (None, Tools::Factory(f)) => f.icon_overrides(),
                (None, Tools::Static(_)) => Vec::new(),
            };
            for (name, icon) in overrides {
                maps.overrides.entry(name).or_insert(icon);
            }
            for name in set.known_tools() {
                maps.tool_to_set
                    .entry(name)
                    .or_insert_with(|| set.id.clone());
            }
        }
        maps
    }

    /// The icon of tool `name` supplied by set `supplier` (used when no map names the
    /// tool: dynamic tools such as an MCP server's take their supplier's icon), and which
    /// rung of the chain gave it. `own` is the tool's own override.
    pub(crate) fn resolve<'a>(
        &'a self,
        name: &str,
        own: Option<&'a str>,
        supplier: &str,
    ) -> (&'a str, IconSource) {
        if let Some(icon) = own.or_else(|| self.overrides.get(name).map(String::as_str)) {
            return (icon, IconSource::Override);
        }
        let set = self
            .tool_to_set
            .get(name)
            .map(String::as_str)
            .unwrap_or(supplier);
        match self.set_to_icon.get(set) {
            Some(icon) => (
                icon,
                IconSource::ToolSet {
                    set: set.to_string(),
                },
            ),
            None => (WRENCH, IconSource::Wrench),
        }
    }

    /// Adds a set's icon after the sets' (external sources).
    pub(crate) fn set_icon(&mut self, set: &str, icon: &str) {
        self.set_to_icon.insert(set.into(), icon.into());
    }
}
