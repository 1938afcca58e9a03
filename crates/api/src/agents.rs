//! `/agents`: the configuration file's agents (read-only) and the stored ones, created,
//! read, replaced (with the `version` read, else 409) and deleted.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use toolhost_store::{Agent, AgentSpec, GrantSpec, Rule};
use toolhost_toolsets::{AgentConfig, Layer};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::body::Body;
use crate::params::Params;
use crate::{ApiState, Problem};

/// An agent, as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AgentOut {
    /// Its id.
    pub(crate) id: String,
    /// Its display name.
    pub(crate) name: String,
    /// What it is for.
    pub(crate) description: String,
    /// A Lucide icon name.
    pub(crate) icon: Option<String>,
    /// The workspace its turns run in.
    pub(crate) workspace: Option<String>,
    /// The organisation its turns run in.
    pub(crate) org: Option<String>,
    /// In precedence order.
    pub(crate) grants: Vec<GrantBody>,
    /// `store`, or `config` (from toolhost.toml: read-only here).
    pub(crate) source: String,
    /// What an update must send back (0 for the configuration file's).
    pub(crate) version: i64,
    /// Milliseconds since the Unix epoch (0 for the configuration file's).
    pub(crate) created_at: i64,
    /// Milliseconds since the Unix epoch (0 for the configuration file's).
    pub(crate) updated_at: i64,
}

/// One grant: exactly one of `tool_set` and `mcp_server`.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrantBody {
    /// A tool set, by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tool_set: Option<String>,
    /// An MCP server, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mcp_server: Option<String>,
    /// Its precedence layer.
    #[serde(default)]
    pub(crate) layer: LayerName,
    /// What a tool without a rule of its own gets.
    #[serde(default)]
    pub(crate) default: RuleName,
    /// Per tool key.
    #[serde(default)]
    pub(crate) rules: BTreeMap<String, RuleName>,
}

/// A precedence layer: each beats the one before it.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LayerName {
    /// The agent's own grants.
    #[default]
    Session,
    /// Tools found by a search.
    Search,
    /// A sub-agent's grants.
    SubAgent,
}

/// Allowed or denied.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RuleName {
    /// In the turn.
    #[default]
    Allow,
    /// Left out.
    Deny,
}

/// An agent as a client sends it: with its `id` to create it, with the `version` it read
/// to replace it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentBody {
    /// Its id, `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$`: required to create, absent (or the
    /// same as the path's) to replace.
    #[serde(default)]
    #[schema(pattern = "^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$")]
    pub(crate) id: Option<String>,
    /// The version read: required to replace (if it changed since, the update is a 409);
    /// absent to create.
    #[serde(default)]
    pub(crate) version: Option<i64>,
    /// Its display name (1 to 100 characters).
    #[schema(min_length = 1, max_length = 100, pattern = "\\S")]
    pub(crate) name: String,
    /// What it is for.
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub(crate) description: String,
    /// A Lucide icon name.
    #[serde(default)]
    #[schema(max_length = 64, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub(crate) icon: Option<String>,
    /// The workspace its turns run in.
    #[serde(default)]
    #[schema(min_length = 1)]
    pub(crate) workspace: Option<String>,
    /// The organisation its turns run in.
    #[serde(default)]
    #[schema(min_length = 1)]
    pub(crate) org: Option<String>,
    /// In precedence order.
    #[serde(default)]
    pub(crate) grants: Vec<GrantBody>,
}

impl AgentBody {
    fn into_spec(self) -> AgentSpec {
        AgentSpec {
            name: self.name,
            description: self.description,
            icon: self.icon,
            workspace: self.workspace,
            org: self.org,
            grants: self.grants.into_iter().map(grant_spec).collect(),
        }
    }
}

/// One page of agents.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AgentPage {
    /// By id.
    pub(crate) items: Vec<AgentOut>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub(crate) next: Option<String>,
}

/// Paging.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageQuery {
    /// The `next` of the previous page.
    #[param(nullable = false)]
    pub(crate) cursor: Option<String>,
    /// Items per page, 1 to 500 (default 50).
    #[param(nullable = false)]
    pub(crate) limit: Option<usize>,
}

/// The version a delete expects.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct VersionQuery {
    /// The version read: if it changed since, the delete is a 409.
    #[param(nullable = false)]
    pub(crate) version: Option<i64>,
}

fn layer(l: LayerName) -> Layer {
    match l {
        LayerName::Session => Layer::Session,
        LayerName::Search => Layer::Search,
        LayerName::SubAgent => Layer::SubAgent,
    }
}

fn layer_name(l: Layer) -> LayerName {
    match l {
        Layer::Session => LayerName::Session,
        Layer::Search => LayerName::Search,
        Layer::SubAgent => LayerName::SubAgent,
    }
}

fn rule(r: RuleName) -> Rule {
    match r {
        RuleName::Allow => Rule::Allow,
        RuleName::Deny => Rule::Deny,
    }
}

fn rule_name(r: Rule) -> RuleName {
    match r {
        Rule::Allow => RuleName::Allow,
        Rule::Deny => RuleName::Deny,
    }
}

fn grant_spec(g: GrantBody) -> GrantSpec {
    GrantSpec {
        tool_set: g.tool_set,
        mcp_server: g.mcp_server,
        layer: layer(g.layer),
        default: rule(g.default),
        rules: g.rules.into_iter().map(|(k, r)| (k, rule(r))).collect(),
    }
}

fn grant_body(g: &GrantSpec) -> GrantBody {
    GrantBody {
        tool_set: g.tool_set.clone(),
        mcp_server: g.mcp_server.clone(),
        layer: layer_name(g.layer),
        default: rule_name(g.default),
        rules: g
            .rules
            .iter()
            .map(|(k, r)| (k.clone(), rule_name(*r)))
            .collect(),
    }
}

fn out(agent: &Agent) -> AgentOut {
    let s = &agent.spec;
    AgentOut {
        id: agent.id.clone(),
        name: s.name.clone(),
        description: s.description.clone(),
        icon: s.icon.clone(),
        workspace: s.workspace.clone(),
        org: s.org.clone(),
        grants: s.grants.iter().map(grant_body).collect(),
        source: "store".into(),
        version: agent.version,
        created_at: agent.created_at,
        updated_at: agent.updated_at,
    }
}

fn from_config(id: &str, config: &AgentConfig) -> AgentOut {
    let spec = AgentSpec::from_config(id, config);
    AgentOut {
        id: id.to_string(),
        name: spec.name,
        description: spec.description,
        icon: spec.icon,
        workspace: spec.workspace,
        org: spec.org,
        grants: spec.grants.iter().map(grant_body).collect(),
        source: "config".into(),
        version: 0,
        created_at: 0,
        updated_at: 0,
    }
}

fn unprocessable(field: &str, detail: &str) -> Problem {
    Problem::new(StatusCode::UNPROCESSABLE_ENTITY, detail).at(field)
}

fn read_only(id: &str) -> Problem {
    Problem::new(
        StatusCode::CONFLICT,
        format!("agent `{id}` comes from toolhost.toml: change it there"),
    )
}

/// Agents, by id.
#[utoipa::path(get, path = "/agents", operation_id = "listAgents", tag = "agents", params(PageQuery),
    responses((status = 200, body = AgentPage), (status = 401, body = Problem), (status = 403, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<ApiState>,
    who: Principal,
    Params(q): Params<PageQuery>,
) -> Result<Json<AgentPage>, Problem> {
    who.reader()?;
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let after = q.cursor.unwrap_or_default();
    let stored = state.store.agents(Some(&after), limit).await?;
    let config = &state.host.config().agents;
    let mut items: Vec<AgentOut> = config
        .iter()
        .filter(|(id, _)| id.as_str() > after.as_str())
        .take(limit + 1)
        .map(|(id, a)| from_config(id, a))
        .chain(
            stored
                .items
                .iter()
                .filter(|a| !config.contains_key(&a.id))
                .map(out),
        )
        .collect();
    items.sort_by(|a, b| a.id.cmp(&b.id));
    let more = stored.next.is_some() || items.len() > limit;
    items.truncate(limit);
    let next = more.then(|| items.last().map(|a| a.id.clone())).flatten();
    Ok(Json(AgentPage { items, next }))
}

/// One agent.
#[utoipa::path(get, path = "/agents/{id}", operation_id = "getAgent", tag = "agents", params(("id" = String, Path, description = "The agent's id")),
    responses((status = 200, body = AgentOut), (status = 404, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn get(
    State(state): State<ApiState>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Json<AgentOut>, Problem> {
    who.reader()?;
    if let Some(a) = state.host.config().agents.get(&id) {
        return Ok(Json(from_config(&id, a)));
    }
    match state.store.agent(&id).await? {
        Some(agent) => Ok(Json(out(&agent))),
        None => Err(Problem::not_found("agent", &id)),
    }
}

/// Creates an agent.
#[utoipa::path(post, path = "/agents", operation_id = "createAgent", tag = "agents", request_body = AgentBody,
    responses((status = 201, body = AgentOut), (status = 409, body = Problem), (status = 422, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn create(
    State(state): State<ApiState>,
    who: Principal,
    Body(new): Body<AgentBody>,
) -> Result<(StatusCode, Json<AgentOut>), Problem> {
    who.operator()?;
    let Some(id) = new.id.clone() else {
        return Err(unprocessable("id", "required to create an agent"));
    };
    if new.version.is_some() {
        return Err(unprocessable(
            "version",
            "a new agent has no version yet: leave it out",
        ));
    }
    if state.host.config().agents.contains_key(&id) {
        return Err(read_only(&id));
    }
    let agent = state
        .store
        .create_agent(who.actor(), &id, new.into_spec())
        .await?;
    Ok((StatusCode::CREATED, Json(out(&agent))))
}

/// Replaces an agent, if it is still at `version`.
#[utoipa::path(put, path = "/agents/{id}", operation_id = "updateAgent", tag = "agents", request_body = AgentBody,
    params(("id" = String, Path, description = "The agent's id")),
    responses((status = 200, body = AgentOut), (status = 404, body = Problem), (status = 409, body = Problem), (status = 422, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn update(
    State(state): State<ApiState>,
    who: Principal,
    Path(id): Path<String>,
    Body(update): Body<AgentBody>,
) -> Result<Json<AgentOut>, Problem> {
    who.operator()?;
    if state.host.config().agents.contains_key(&id) {
        return Err(read_only(&id));
    }
    let Some(version) = update.version else {
        return Err(unprocessable(
            "version",
            "required: send the version you read, so that no one else's change is lost",
        ));
    };
    if update.id.as_ref().is_some_and(|i| *i != id) {
        return Err(unprocessable(
            "id",
            "differs from the path's: an agent's id cannot change",
        ));
    }
    let agent = state
        .store
        .update_agent(who.actor(), &id, update.into_spec(), version)
        .await?;
    Ok(Json(out(&agent)))
}

/// Deletes an agent (if still at `version`, when given); tokens bound to it stop working.
#[utoipa::path(delete, path = "/agents/{id}", operation_id = "deleteAgent", tag = "agents",
    params(("id" = String, Path, description = "The agent's id"), VersionQuery),
    responses((status = 204), (status = 404, body = Problem), (status = 409, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn delete(
    State(state): State<ApiState>,
    who: Principal,
    Path(id): Path<String>,
    Params(q): Params<VersionQuery>,
) -> Result<StatusCode, Problem> {
    who.operator()?;
    if state.host.config().agents.contains_key(&id) {
        return Err(read_only(&id));
    }
    state
        .store
        .delete_agent(who.actor(), &id, q.version)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// JSON values shaped like agent bodies, with hostile strings and numbers where the
    /// fields are.
    fn body() -> impl Strategy<Value = Value> {
        let text = prop_oneof![
            Just(String::new()),
            "[a-z0-9_-]{1,70}",
            "\\PC{0,120}",
            Just("\u{0}\u{202e}\u{fffd}".to_string()),
        ];
        let value = prop_oneof![
            text.clone().prop_map(Value::String),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|n| json!(n)),
            Just(Value::Null),
            Just(json!([])),
        ];
        let grant = (
            proptest::option::of(text.clone()),
            proptest::option::of(text.clone()),
            prop_oneof![
                Just("session"),
                Just("search"),
                Just("sub-agent"),
                Just("nope")
            ],
            prop_oneof![Just("allow"), Just("deny"), Just("maybe")],
            proptest::collection::btree_map(
                text.clone(),
                prop_oneof![Just("allow"), Just("deny")],
                0..4,
            ),
        )
            .prop_map(|(ts, mcp, layer, default, rules)| {
                let mut g = json!({"layer": layer, "default": default, "rules": rules});
                if let Some(ts) = ts {
                    g["tool_set"] = json!(ts);
                }
                if let Some(mcp) = mcp {
                    g["mcp_server"] = json!(mcp);
                }
                g
            });
        (
            proptest::option::of(text.clone()),
            value.clone(),
            text.clone(),
            proptest::option::of(text),
            proptest::collection::vec(grant, 0..6),
            value,
        )
            .prop_map(|(id, name, description, icon, grants, extra)| {
                let mut b = json!({"name": name, "description": description, "grants": grants});
                if let Some(id) = id {
                    b["id"] = json!(id);
                }
                if let Some(icon) = icon {
                    b["icon"] = json!(icon);
                }
                if extra.is_number() {
                    b["version"] = extra;
                }
                b
            })
    }

    proptest! {
        #[test]
        fn any_body_is_an_agent_or_a_clear_error_never_a_panic(b in body()) {
            if let Ok(parsed) = serde_json::from_value::<AgentBody>(b) {
                let spec = parsed.into_spec();
                match spec.validate() {
                    Ok(()) => {
                        // What validates converts to the resolver's form and back.
                        let config = spec.to_config();
                        prop_assert_eq!(config.grants.len(), spec.grants.len());
                    }
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                }
            }
        }
    }
}
