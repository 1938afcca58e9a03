//! `/playground`: pick a tool (as yourself, or as an agent: its effective tools), fill in
//! a form drawn from its input schema (or raw JSON), run it, watch its progress, cancel
//! it, see its result. The page is drawn here; `assets/js/playground.js` validates, runs
//! the call through the API (`POST /api/v1/calls`, then its event stream) and draws what
//! comes back. `replay=CALL` prefills the form with a logged call's arguments.

mod form;

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Map, Value};
use toolhost_host::{Scope, ToolInfo};
use toolhost_runtime::REDACTED;

use crate::icons::Icons;
use crate::layout::Layout;
use crate::session::Signed;
use crate::tool_icons::ToolIcons;
use crate::{ConsoleState, page};
use form::{Field, Form};

pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new().route("/playground", get(index))
}

#[derive(Deserialize)]
pub(crate) struct PlaygroundQuery {
    tool: Option<String>,
    agent: Option<String>,
    replay: Option<String>,
}

pub(crate) struct ToolOption {
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) selected: bool,
}

/// The tool chosen, ready to fill in.
pub(crate) struct Chosen {
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) icon: &'static str,
    pub(crate) fields: Vec<Field>,
    /// Why there is no form (raw JSON only); empty when there is one.
    pub(crate) raw_reason: String,
    /// The raw editor's arguments (pretty JSON).
    pub(crate) raw_json: String,
    /// Required argument names, comma-separated (for checking raw JSON).
    pub(crate) required: String,
    /// Start in the raw editor (no form, or a replay the form cannot hold).
    pub(crate) start_raw: bool,
    /// The call replayed, if any.
    pub(crate) replayed: String,
    /// Whether the replayed arguments had sensitive values the log replaced.
    pub(crate) replay_redacted: bool,
}

#[derive(Template)]
#[template(path = "playground.html")]
struct PlaygroundPage {
    layout: Layout,
    tools: Vec<ToolOption>,
    agents: Vec<(String, bool)>,
    /// The agent called as ("" for none).
    agent: String,
    /// The token is bound to `agent`: no other can be chosen.
    agent_fixed: bool,
    chosen: Option<Chosen>,
    problems: Vec<String>,
    can_call: bool,
}

fn given(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

pub(crate) async fn index(
    State(state): State<ConsoleState>,
    who: Signed,
    Query(q): Query<PlaygroundQuery>,
) -> Response {
    let mut caller = who.caller.clone();
    let mut problems = Vec::new();
    let agent_fixed = caller.agent.is_some();
    // As the API's `POST /calls`: a bound token calls as its agent; anyone else may call
    // as any agent there is.
    match (given(&q.agent), caller.agent.clone()) {
        (Some(asked), Some(bound)) if asked != bound => problems.push(format!(
            "Your token calls as the agent “{bound}”: it cannot call as “{asked}”."
        )),
        (Some(asked), None) => match state.host.agents().agent(&asked).await {
            Ok(Some(_)) => caller.agent = Some(asked),
            Ok(None) => problems.push(format!("There is no agent “{asked}”.")),
            Err(e) => return page::store_error(e),
        },
        _ => {}
    }
    let agents = match state.host.agents().agent_ids().await {
        Ok(mut ids) => {
            ids.sort();
            ids.into_iter()
                .map(|id| {
                    let selected = caller.agent.as_deref() == Some(id.as_str());
                    (id, selected)
                })
                .collect()
        }
        Err(e) => return page::store_error(e),
    };
    let mut tools: Vec<ToolInfo> = state.endpoint.tools(&caller).await;
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let wanted = given(&q.tool);
    let mut icons = Icons::default();
    let found = wanted
        .as_deref()
        .and_then(|name| tools.iter().find(|t| t.name == name));
    if let (Some(name), None) = (&wanted, found) {
        problems.push(match &caller.agent {
            Some(a) => format!("The agent “{a}” has no tool “{name}”."),
            None => format!("There is no tool “{name}” you may call."),
        });
    }
    let mut replay_args = Map::new();
    let mut replayed = String::new();
    if let (Some(id), Some(_)) = (given(&q.replay), found) {
        match replay(&state, &who, &id).await {
            Ok(Some(args)) => {
                replay_args = args;
                replayed = id;
            }
            Ok(None) => problems.push(format!(
                "The call “{id}” is not in your history, or its arguments were too large \
                 to keep: nothing to replay."
            )),
            Err(r) => return r,
        }
    }
    let chosen = found.map(|t| chosen(t, &replay_args, replayed, &state, &mut icons));
    for name in ["play", "square", "braces", "list", "flask-conical"] {
        icons.take(Some(name));
    }
    let layout = Layout::new(&who.caller, "/playground", "Playground", icons);
    let tools = tools
        .iter()
        .map(|t| ToolOption {
            selected: Some(&t.name) == wanted.as_ref(),
            name: t.name.clone(),
            title: t.title.clone(),
        })
        .collect();
    page::html(
        StatusCode::OK,
        &PlaygroundPage {
            layout,
            tools,
            agents,
            agent: caller.agent.clone().unwrap_or_default(),
            agent_fixed,
            chosen,
            problems,
            can_call: caller.may(Scope::ToolsCall),
        },
    )
}

/// The arguments of the logged call `id`, if it is the caller's to see and they were kept.
async fn replay(
    state: &ConsoleState,
    who: &Signed,
    id: &str,
) -> Result<Option<Map<String, Value>>, Response> {
    let row = state.store.call(id).await.map_err(page::store_error)?;
    let own = crate::history::own_only(&who.caller);
    let Some(row) = row.filter(|r| own.as_ref().is_none_or(|u| *u == r.principal)) else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(&row.arguments) {
        Ok(Value::Object(map)) if !map.contains_key("truncated_from_bytes") => Ok(Some(map)),
        _ => Ok(None),
    }
}

fn chosen(
    t: &ToolInfo,
    replay: &Map<String, Value>,
    replayed: String,
    state: &ConsoleState,
    icons: &mut Icons,
) -> Chosen {
    let schema = Value::Object((*t.input_schema).clone());
    let (fields, raw_reason) = match form::form(&schema, replay) {
        Form::Fields(f) => (f, String::new()),
        Form::Raw(why) => (Vec::new(), why),
    };
    // A replay with arguments the form has no field for is edited as JSON, not dropped.
    let unknown = replay.keys().any(|k| !fields.iter().any(|f| &f.name == k));
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let raw = form::initial_arguments(&schema, replay);
    Chosen {
        name: t.name.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        icon: ToolIcons::of(state).take(icons, &t.name, None),
        start_raw: !raw_reason.is_empty() || unknown,
        raw_reason,
        fields,
        raw_json: serde_json::to_string_pretty(&Value::Object(raw)).unwrap_or_default(),
        required,
        replay_redacted: replay.values().any(|v| v.as_str() == Some(REDACTED)),
        replayed,
    }
}
