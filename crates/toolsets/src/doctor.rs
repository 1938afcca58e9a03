//! Why a tool is or is not visible to an agent: the seed's "When a tool doesn't appear"
//! chain, walked for real (contribution → plugin gating → grant → this turn's resolution).

use serde::Serialize;

use crate::config::GrantSource;
use crate::context::TurnRequest;
use crate::icons::IconSource;
use crate::lucide::is_lucide_icon;
use crate::names::{TOOL_NAME_RULE, is_valid_tool_name};
use crate::owner::Owner;
use crate::plugin::Gating;
use crate::registry::Registry;
use crate::toolset::Tools;

/// One link of the chain.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Whether this link holds.
    pub ok: bool,
    /// Which link: `name`, `plugin`, `contributed`, `agent`, `granted`, `allow/deny`,
    /// `warning`, `resolved`, `icon` or `collision`.
    pub check: &'static str,
    /// What was found.
    pub detail: String,
}

/// The whole chain for one agent and one tool name.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnosis {
    /// The agent asked about.
    pub agent: String,
    /// The tool name asked about.
    pub tool: String,
    /// Whether the agent sees the tool this turn.
    pub visible: bool,
    /// The links, in order.
    pub steps: Vec<Step>,
}

impl Registry {
    /// Walks the chain for `tool` and `agent`, resolving a real turn for `req` (and
    /// ending it).
    pub async fn doctor(&self, agent: &str, tool: &str, req: &TurnRequest) -> Diagnosis {
        let mut steps = Vec::new();
        let mut step = |ok, check, detail: String| steps.push(Step { ok, check, detail });

        if !is_valid_tool_name(tool) {
            step(
                false,
                "name",
                format!("`{tool}` does not match {TOOL_NAME_RULE}: such a tool is always left out"),
            );
        }

        // 1. Is it in some set's contributions (or an MCP server's namespace)?
        let mut sources: Vec<GrantSource> = Vec::new();
        for entry in self.tool_sets() {
            if entry.set.known_tools().iter().any(|t| t == tool) {
                sources.push(GrantSource::ToolSet(entry.set.id.clone()));
            }
        }
        for server in self.external_sources() {
            if tool.starts_with(&format!("{}__", server.name())) {
                sources.push(GrantSource::McpServer(server.name().to_string()));
            }
        }
        if sources.is_empty() {
            let disabled = self.find_in_disabled(|set| set.known_tools().iter().any(|t| t == tool));
            match disabled {
                Some((plugin, set)) => step(
                    false,
                    "plugin",
                    format!(
                        "tool set `{set}` of core plugin `{plugin}` contributes it, but the plugin is not enabled: add `{plugin}` to TOOLHOST_PLUGINS"
                    ),
                ),
                None => step(
                    false,
                    "contributed",
                    "no tool set contributes it (per-turn factories may still produce it; see the resolution below)".into(),
                ),
            }
        } else {
            for s in &sources {
                let detail = match s {
                    GrantSource::ToolSet(id) => match self.tool_set(id).map(|e| &e.owner) {
                        Some(Owner::Plugin { name }) => {
                            let gating = self
                                .plugins
                                .iter()
                                .find(|p| &p.name == name)
                                .map(|p| p.gating);
                            format!(
                                "{s} of plugin `{name}` ({}) contributes it",
                                gating.map_or("not loaded", Gating::describe)
                            )
                        }
                        Some(owner) => format!("{s} of {owner} contributes it"),
                        None => format!("{s} contributes it"),
                    },
                    GrantSource::McpServer(_) => {
                        format!("{s} would supply it (named server__tool)")
                    }
                };
                step(true, "contributed", detail);
            }
        }

        // 2. Does the agent hold one of those sets?
        let grants = self.config.agents.get(agent).map(|a| a.grants.clone());
        let Some(grants) = grants else {
            step(
                false,
                "agent",
                format!("no agent `{agent}` in toolhost.toml ([agents.{agent}])"),
            );
            return Diagnosis {
                agent: agent.into(),
                tool: tool.into(),
                visible: false,
                steps,
            };
        };
        let held: Vec<&GrantSource> = grants
            .iter()
            .map(|g| &g.source)
            .filter(|s| sources.contains(s))
            .collect();
        if held.is_empty() && !sources.is_empty() {
            let wanted: Vec<String> = sources.iter().map(ToString::to_string).collect();
            step(
                false,
                "granted",
                format!("agent `{agent}` holds none of: {}", wanted.join(", ")),
            );
        } else if !held.is_empty() {
            let held: Vec<String> = held.iter().map(ToString::to_string).collect();
            step(
                true,
                "granted",
                format!("agent `{agent}` holds {}", held.join(", ")),
            );
        }

        // 3. This turn's resolution.
        let turn = self.resolve_grants(agent, &grants, req).await;
        let visible = turn.tool(tool).is_some();
        if let Some(t) = turn.tool(tool) {
            step(
                true,
                "resolved",
                format!(
                    "visible this turn, from tool set `{}` ({})",
                    t.claim.set, t.claim.owner
                ),
            );
            if is_lucide_icon(&t.icon) {
                step(
                    true,
                    "icon",
                    format!("shows as the Lucide icon `{}`", t.icon),
                );
            } else {
                step(
                    false,
                    "icon",
                    format!(
                        "`{}` is not a Lucide icon: the chat shows the wrench (see lucide.dev/icons)",
                        t.icon
                    ),
                );
            }
        } else {
            for e in turn.excluded.iter().filter(|e| e.name == tool) {
                step(
                    false,
                    "allow/deny",
                    format!("left out of `{}`: {}", e.set, e.reason),
                );
            }
            let relevant =
                |source: &str| held.iter().any(|h| h.to_string() == source) || sources.is_empty();
            for w in turn.warnings.iter().filter(|w| relevant(&w.source)) {
                step(false, "warning", format!("{}: {}", w.source, w.message));
            }
            step(false, "resolved", "not among this turn's tools".into());
        }
        for c in turn.collisions.iter().filter(|c| c.name == tool) {
            step(
                true,
                "collision",
                format!(
                    "`{}` ({}) shadows `{}` ({}) for this name",
                    c.winner.set, c.winner.owner, c.shadowed.set, c.shadowed.owner
                ),
            );
        }
        turn.end().await;
        Diagnosis {
            agent: agent.into(),
            tool: tool.into(),
            visible,
            steps,
        }
    }

    /// Every icon a tool set or a tool names that Lucide does not have (it shows as the
    /// wrench): `(icon, set, tool)`, `tool` empty for the set's own icon.
    pub fn unknown_icons(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for entry in self.tool_sets() {
            if let Some(icon) = &entry.set.icon
                && !is_lucide_icon(icon)
            {
                out.push((icon.clone(), entry.set.id.clone(), String::new()));
            }
            let overrides: Vec<(String, String)> =
                match (entry.set.tools.listed(), &entry.set.tools) {
                    (Some(map), _) => map
                        .iter()
                        .filter_map(|(name, t)| Some((name.to_string(), t.icon()?.to_string())))
                        .collect(),
                    (None, Tools::Factory(f)) => f.icon_overrides(),
                    (None, Tools::Static(_)) => Vec::new(),
                };
            for (tool, icon) in overrides {
                if !is_lucide_icon(&icon) {
                    out.push((icon, entry.set.id.clone(), tool));
                }
            }
        }
        out.sort();
        out
    }

    /// Every known tool whose icon falls back to the wrench: `(tool, set)`.
    pub fn wrench_tools(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for entry in self.tool_sets() {
            let listed = entry.set.tools.listed();
            let own = |name: &str| {
                listed.as_ref().and_then(|map| {
                    map.iter()
                        .find(|(k, _)| *k == name)
                        .and_then(|(_, t)| t.icon().map(str::to_string))
                })
            };
            for name in entry.set.known_tools() {
                let own = own(&name);
                let (_, via) = self.icons.resolve(&name, own.as_deref(), &entry.set.id);
                if via == IconSource::Wrench {
                    out.push((name, entry.set.id.clone()));
                }
            }
        }
        out.sort();
        out
    }
}
