//! Which icon a tool gets: its tool set's (by the set a call names, else the set that
//! lists the tool), the wrench otherwise.

use std::collections::HashMap;

use crate::ConsoleState;
use crate::icons::Icons;

/// Tool sets' icons by set id, and by the names of the tools they list.
pub(crate) struct ToolIcons {
    by_set: HashMap<String, Option<String>>,
    by_tool: HashMap<String, Option<String>>,
}

impl ToolIcons {
    pub(crate) fn of(state: &ConsoleState) -> ToolIcons {
        let mut by_set = HashMap::new();
        let mut by_tool = HashMap::new();
        if let Some(registry) = state.host.registry() {
            for e in registry.tool_sets() {
                by_set.insert(e.set.id.clone(), e.set.icon.clone());
                for tool in e.set.known_tools() {
                    by_tool.entry(tool).or_insert_with(|| e.set.icon.clone());
                }
            }
        }
        ToolIcons { by_set, by_tool }
    }

    /// The icon name of `tool`, called through the set `set` when known.
    pub(crate) fn name(&self, tool: &str, set: Option<&str>) -> Option<&str> {
        set.and_then(|s| self.by_set.get(s))
            .or_else(|| self.by_tool.get(tool))
            .and_then(|i| i.as_deref())
    }

    /// The icon of `tool`, called through the set `set` when known, taken into `icons`.
    pub(crate) fn take(&self, icons: &mut Icons, tool: &str, set: Option<&str>) -> &'static str {
        icons.take(self.name(tool, set))
    }
}
