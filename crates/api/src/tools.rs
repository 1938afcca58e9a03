//! `/tools`: what a caller may call (as an agent, when asked), and one tool in detail: its
//! schema and annotations, the tool set it comes through, and for a folder tool its
//! TOOL.md documentation and the definitions it shadows.

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolhost_host::{Hints, ToolInfo};
use toolhost_runtime::ToolRef;
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::calls::calling_as;
use crate::params::Params;
use crate::{ApiState, Problem};

/// Which tools.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ToolsQuery {
    /// As this agent: its granted tools only.
    pub(crate) agent: Option<String>,
}

/// A tool the caller may call.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ToolOut {
    /// The name to call it by.
    pub(crate) name: String,
    /// A human-readable name.
    pub(crate) title: String,
    /// What it does.
    pub(crate) description: String,
    /// The JSON Schema of its arguments.
    #[schema(value_type = Object)]
    pub(crate) input_schema: Value,
    /// Behaviour hints (MCP's tool annotations) when its tool set gives any.
    #[schema(value_type = Option<Object>)]
    pub(crate) annotations: Option<Value>,
}

/// The tools the caller may call (as `agent`, when given), ordered by name: what an MCP
/// client of this token would list.
#[utoipa::path(get, path = "/tools", operation_id = "listTools", tag = "calls",
    params(ToolsQuery),
    responses((status = 200, body = Vec<ToolOut>), (status = 404, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<ApiState>,
    who: Principal,
    Params(q): Params<ToolsQuery>,
) -> Result<Json<Vec<ToolOut>>, Problem> {
    who.reader()?;
    let caller = calling_as(&state, &who, q.agent.as_deref()).await?;
    let tools = state.endpoint.tools(&caller).await;
    Ok(Json(tools.into_iter().map(tool_out).collect()))
}

fn annotations(h: Hints) -> Value {
    let mut m = Map::new();
    let mut put = |k: &str, v: Option<bool>| {
        if let Some(v) = v {
            m.insert(k.into(), Value::Bool(v));
        }
    };
    put("readOnlyHint", h.read_only);
    put("destructiveHint", h.destructive);
    put("idempotentHint", h.idempotent);
    put("openWorldHint", h.open_world);
    Value::Object(m)
}

fn tool_out(t: ToolInfo) -> ToolOut {
    ToolOut {
        name: t.name,
        title: t.title,
        description: t.description,
        input_schema: Value::Object((*t.input_schema).clone()),
        annotations: t.hints.map(annotations),
    }
}

/// One tool in detail.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ToolDetail {
    /// What a listing shows.
    #[serde(flatten)]
    pub(crate) tool: ToolOut,
    /// The tool set it comes through (as an agent), when known.
    pub(crate) tool_set: Option<String>,
    /// For a tool folder: where it is, its TOOL.md, what it shadows.
    pub(crate) folder: Option<FolderOut>,
    /// For a tool of a third-party (Platypus) plugin: which plugin, where it is loaded from.
    pub(crate) plugin: Option<PluginOrigin>,
}

/// The third-party plugin a tool comes from.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PluginOrigin {
    /// The plugin's name (its manifest's).
    pub(crate) name: String,
    /// Its entry file.
    pub(crate) entry: String,
    /// The tool set's id in the plugin's manifest.
    pub(crate) set: String,
    /// The tool's key in that set.
    pub(crate) key: String,
}

/// A tool folder.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FolderOut {
    /// The folder.
    pub(crate) path: String,
    /// The tool root it is in.
    pub(crate) root: String,
    /// Its TOOL.md `version`.
    pub(crate) version: u64,
    /// `typescript`, `python` or `bash`.
    pub(crate) language: String,
    /// Whether it may reach the network.
    pub(crate) network: bool,
    /// Its deadline in seconds, when it sets one.
    pub(crate) timeout: Option<f64>,
    /// TOOL.md's Markdown documentation (after the frontmatter).
    pub(crate) documentation: String,
    /// Folders defining the same name that this one wins over, earliest root first.
    pub(crate) shadows: Vec<String>,
}

/// One tool the caller may call (as `agent`, when given).
#[utoipa::path(get, path = "/tools/{name}", operation_id = "getTool", tag = "calls",
    params(("name" = String, Path, description = "The tool's name"), ToolsQuery),
    responses((status = 200, body = ToolDetail), (status = 404, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn get(
    State(state): State<ApiState>,
    who: Principal,
    Path(name): Path<String>,
    Params(q): Params<ToolsQuery>,
) -> Result<Json<ToolDetail>, Problem> {
    who.reader()?;
    let caller = calling_as(&state, &who, q.agent.as_deref()).await?;
    let missing = || Problem::not_found("tool", &name);
    let target = state
        .endpoint
        .resolve(&caller, &name)
        .await
        .ok_or_else(missing)?;
    let info = state
        .endpoint
        .tools(&caller)
        .await
        .into_iter()
        .find(|t| t.name == name)
        .ok_or_else(missing)?;
    let folder = match &target.tool {
        ToolRef::Folder(t) => {
            let shadows = state.host.shadowed_by(t);
            Some(FolderOut {
                path: t.dir.display().to_string(),
                root: t.root.display().to_string(),
                version: t.manifest.version,
                language: t.manifest.language.as_str().to_string(),
                network: t.manifest.network,
                timeout: t.manifest.timeout.map(|d| d.as_secs_f64()),
                documentation: t.manifest.body.clone(),
                shadows: shadows.iter().map(|p| p.display().to_string()).collect(),
            })
        }
        ToolRef::Native(_) | ToolRef::Plugin(_) => None,
    };
    let plugin = match &target.tool {
        ToolRef::Plugin(t) => Some(PluginOrigin {
            name: t.module.name.clone(),
            entry: t.module.entry.display().to_string(),
            set: t.set.clone(),
            key: t.key.clone(),
        }),
        _ => None,
    };
    Ok(Json(ToolDetail {
        tool: tool_out(info),
        tool_set: target.set,
        folder,
        plugin,
    }))
}
