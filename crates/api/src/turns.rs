//! `/agents/{id}/effective-tools`: the turn an agent's caller would get now, exactly as
//! `toolhost resolve` shows it: the tools with the set and owner that won each name, the
//! warnings, the collisions and what the rules kept out.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_toolsets::Claim;
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::params::Params;
use crate::{ApiState, Problem};

/// One tool of the turn.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EffectiveTool {
    /// The name the model sees.
    pub(crate) name: String,
    /// The tool set that won the name.
    pub(crate) set: String,
    /// Who contributed that set (`plugin NAME`, `tool root PATH`, `MCP server NAME`).
    pub(crate) owner: String,
    /// The grant's layer.
    pub(crate) layer: String,
    /// Its place among the agent's grants.
    pub(crate) grant: usize,
    /// Other sets that supply the same tool under this name.
    pub(crate) also_in: Vec<String>,
    /// Its Lucide icon.
    pub(crate) icon: String,
    /// What it does.
    pub(crate) description: String,
    /// Its input schema.
    #[schema(value_type = Object)]
    pub(crate) input_schema: Value,
    /// Its annotations.
    #[schema(value_type = Object)]
    pub(crate) annotations: Value,
}

/// A claim on a name.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ClaimOut {
    /// The tool set.
    pub(crate) set: String,
    /// Who contributed it.
    pub(crate) owner: String,
    /// The grant's layer.
    pub(crate) layer: String,
}

/// Two tools claimed one name.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CollisionOut {
    /// The name.
    pub(crate) name: String,
    /// The claim the model sees.
    pub(crate) winner: ClaimOut,
    /// The claim it shadowed.
    pub(crate) shadowed: ClaimOut,
}

/// Something resolution reports.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WarningOut {
    /// The grant's source.
    pub(crate) source: String,
    /// What happened.
    pub(crate) message: String,
}

/// A tool the agent's rules kept out.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ExcludedOut {
    /// The tool.
    pub(crate) name: String,
    /// Its set.
    pub(crate) set: String,
    /// Which rule kept it out.
    pub(crate) reason: String,
}

/// An agent's turn as resolved now.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EffectiveTools {
    /// The agent.
    pub(crate) agent: String,
    /// What the model sees, by name.
    pub(crate) tools: Vec<EffectiveTool>,
    /// What resolution reports (a failing MCP server, a name out of rule).
    pub(crate) warnings: Vec<WarningOut>,
    /// Names claimed twice, and who won.
    pub(crate) collisions: Vec<CollisionOut>,
    /// What the rules kept out.
    pub(crate) excluded: Vec<ExcludedOut>,
}

/// The context of the turn, as a caller would give it.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct TurnQuery {
    /// The workspace the turn runs in (default: the agent's).
    #[param(nullable = false)]
    pub(crate) workspace: Option<String>,
    /// The organisation (default: the agent's).
    #[param(nullable = false)]
    pub(crate) org: Option<String>,
}

fn layer_name(layer: toolhost_toolsets::Layer) -> String {
    serde_json::to_value(layer)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn claim(c: &Claim) -> ClaimOut {
    ClaimOut {
        set: c.set.clone(),
        owner: c.owner.to_string(),
        layer: layer_name(c.layer),
    }
}

/// The tools an agent's caller gets now, with warnings, collisions and exclusions: what
/// `toolhost resolve` prints.
#[utoipa::path(get, path = "/agents/{id}/effective-tools", operation_id = "effectiveTools", tag = "agents",
    params(("id" = String, Path, description = "The agent's id"), TurnQuery),
    responses((status = 200, body = EffectiveTools), (status = 404, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn effective_tools(
    State(state): State<ApiState>,
    who: Principal,
    Path(id): Path<String>,
    Params(q): Params<TurnQuery>,
) -> Result<Json<EffectiveTools>, Problem> {
    who.reader()?;
    // toolhost.toml's agent, else the stored one (read once: its grants and its context).
    let agent = match state.host.config().agents.get(&id) {
        Some(agent) => agent.clone(),
        None => match state.store.agent(&id).await? {
            Some(stored) => stored.spec.to_config(),
            None => return Err(Problem::not_found("agent", &id)),
        },
    };
    // The host's one resolution of an agent's turn, which the console's form shows too.
    let Some(turn) = state
        .host
        .agent_turn(&id, &agent, who.actor(), q.workspace, q.org)
        .await
    else {
        return Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "this host serves no tool sets",
        ));
    };
    let tools = turn
        .tools
        .iter()
        .map(|t| EffectiveTool {
            name: t.name.clone(),
            set: t.claim.set.clone(),
            owner: t.claim.owner.to_string(),
            layer: layer_name(t.claim.layer),
            grant: t.claim.grant,
            also_in: t.also_in.clone(),
            icon: t.icon.clone(),
            description: t.description(),
            input_schema: t.input_schema(),
            annotations: serde_json::to_value(t.annotations()).unwrap_or(Value::Null),
        })
        .collect();
    let out = EffectiveTools {
        agent: id,
        tools,
        warnings: turn
            .warnings
            .iter()
            .map(|w| WarningOut {
                source: w.source.clone(),
                message: w.message.clone(),
            })
            .collect(),
        collisions: turn
            .collisions
            .iter()
            .map(|c| CollisionOut {
                name: c.name.clone(),
                winner: claim(&c.winner),
                shadowed: claim(&c.shadowed),
            })
            .collect(),
        excluded: turn
            .excluded
            .iter()
            .map(|e| ExcludedOut {
                name: e.name.clone(),
                set: e.set.clone(),
                reason: e.reason.clone(),
            })
            .collect(),
    };
    turn.end().await;
    Ok(Json(out))
}
