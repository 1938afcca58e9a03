//! `/tool-sets` and `/plugins`: what the host can grant, as an agent form shows it.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use toolhost_toolsets::{Gating, Owner};
use utoipa::ToSchema;

use crate::auth::Principal;
use crate::{ApiState, Problem};

/// A tool set.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ToolSetOut {
    /// Its id (what a grant names).
    pub(crate) id: String,
    /// Its display name.
    pub(crate) name: String,
    /// Its group in agent forms.
    pub(crate) category: String,
    /// What it is for.
    pub(crate) description: String,
    /// A Lucide icon name.
    pub(crate) icon: Option<String>,
    /// `plugin`, `folder` or `mcp_server`.
    pub(crate) owner_kind: String,
    /// The plugin's or server's name, or the tool root's path.
    pub(crate) owner: String,
    /// `static`, or `factory` (built per turn: the names listed are those known now).
    pub(crate) tools_kind: String,
    /// Its tools' names.
    pub(crate) tools: Vec<String>,
}

/// A plugin.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PluginOut {
    /// Its name.
    pub(crate) name: String,
    /// Its version, when loaded.
    pub(crate) version: Option<String>,
    /// The plugin API version it targets, when loaded.
    pub(crate) api_version: Option<u32>,
    /// Where it comes from: `core` (Toolhost's own) or `third-party` (a Platypus plugin
    /// package named in `TOOLHOST_PLUGINS`).
    pub(crate) origin: String,
    /// A third-party plugin's entry file.
    pub(crate) entry: Option<String>,
    /// What boot noticed: tools left out and why, contributions that are not tool sets.
    pub(crate) notes: Vec<String>,
    /// Whether it is loaded, and why (or why not).
    pub(crate) gating: GatingName,
    /// The tool sets it contributes.
    pub(crate) tool_sets: Vec<String>,
}

/// How a plugin came to be loaded, or not.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum GatingName {
    /// On the always-on list.
    AlwaysOn,
    /// Named in `TOOLHOST_PLUGINS`.
    Enabled,
    /// In the loader map, but neither always on nor named: not loaded.
    Disabled,
}

fn gating_name(g: Gating) -> GatingName {
    match g {
        Gating::AlwaysOn => GatingName::AlwaysOn,
        Gating::Enabled => GatingName::Enabled,
        Gating::Disabled => GatingName::Disabled,
    }
}

/// An MCP server the host reaches.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SourceOut {
    /// Its name (its tool set's id).
    pub(crate) name: String,
    /// `stdio `COMMAND`` or `streamable HTTP URL`.
    pub(crate) transport: String,
    /// How its last listing went: `{"state": "not_contacted" | "live"}`, or
    /// `{"state": "failing", "error", "failures", "serving_stale"}`.
    #[schema(value_type = Object)]
    pub(crate) health: serde_json::Value,
}

/// Plugins and sources.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PluginsOut {
    /// Every plugin of the loader map, loaded or not.
    pub(crate) plugins: Vec<PluginOut>,
    /// The MCP servers.
    pub(crate) mcp_servers: Vec<SourceOut>,
}

/// Tool sets by category (A→Z, "Uncategorized" last), then name.
#[utoipa::path(get, path = "/tool-sets", operation_id = "listToolSets", tag = "catalog",
    responses((status = 200, body = Vec<ToolSetOut>), (status = 401, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn tool_sets(
    State(state): State<ApiState>,
    who: Principal,
) -> Result<Json<Vec<ToolSetOut>>, Problem> {
    who.reader()?;
    let Some(registry) = state.host.registry() else {
        return Ok(Json(Vec::new()));
    };
    let mut sets: Vec<ToolSetOut> = registry
        .tool_sets()
        .map(|e| {
            let (owner_kind, owner) = match &e.owner {
                Owner::Plugin { name } => ("plugin", name.clone()),
                Owner::Folder { root } => ("folder", root.display().to_string()),
                Owner::McpServer { name } => ("mcp_server", name.clone()),
            };
            ToolSetOut {
                id: e.set.id.clone(),
                name: e.set.name.clone(),
                category: e.set.category.clone(),
                description: e.set.description.clone(),
                icon: e.set.icon.clone(),
                owner_kind: owner_kind.into(),
                owner,
                tools_kind: e.set.tools.kind().into(),
                tools: e.set.known_tools(),
            }
        })
        .collect();
    sets.sort_by(|a, b| {
        let key = |s: &ToolSetOut| {
            (
                s.category.is_empty() || s.category == "Uncategorized",
                s.category.to_lowercase(),
                s.name.to_lowercase(),
            )
        };
        key(a).cmp(&key(b))
    });
    Ok(Json(sets))
}

/// The plugins of the loader map and the MCP servers.
#[utoipa::path(get, path = "/plugins", operation_id = "listPlugins", tag = "catalog",
    responses((status = 200, body = PluginsOut), (status = 401, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn plugins(
    State(state): State<ApiState>,
    who: Principal,
) -> Result<Json<PluginsOut>, Problem> {
    who.reader()?;
    let Some(registry) = state.host.registry() else {
        return Ok(Json(PluginsOut {
            plugins: Vec::new(),
            mcp_servers: Vec::new(),
        }));
    };
    Ok(Json(PluginsOut {
        plugins: registry
            .plugins()
            .iter()
            .map(|p| PluginOut {
                name: p.name.clone(),
                version: p.version.clone(),
                api_version: p.api_version,
                origin: p.origin.to_string(),
                entry: p.entry.as_ref().map(|e| e.display().to_string()),
                notes: p.notes.clone(),
                gating: gating_name(p.gating),
                tool_sets: p.tool_sets.clone(),
            })
            .collect(),
        mcp_servers: registry
            .external_sources()
            .into_iter()
            .map(|s| SourceOut {
                name: s.name().to_string(),
                transport: s.transport(),
                health: serde_json::to_value(s.health()).unwrap_or_default(),
            })
            .collect(),
    }))
}
