//! `/chat`: talk to an agent through the OpenAI-compatible chat-completions endpoint an
//! operator configured (`/chat/settings`: base URL, model, and the key, kept sealed in the
//! store). The agent's effective tools are offered to the model; the tool calls it makes
//! run through Toolhost as the signed-in user acting as that agent, and show as tool cards
//! (pending, running with live progress, completed, error). The page's script keeps the
//! conversation and posts it with each message to `/chat/{agent}/turn`, which streams the
//! turn back as server-sent events; Stop closes that stream, which cancels the turn.

mod completions;
mod running;
mod settings;
mod turn;

pub(crate) use running::Running;

use std::convert::Infallible;

use askama::Template;
use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolhost_host::{Caller, Role, Scope};

use crate::icons::Icons;
use crate::layout::Layout;
use crate::session::Signed;
use crate::tool_icons::ToolIcons;
use crate::{ConsoleState, page};

/// Messages a conversation may hold.
const MAX_MESSAGES: usize = 400;

/// The chat's routes.
pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new()
        .route("/chat", get(index))
        .route("/chat/settings", get(settings::page).post(settings::save))
        .route("/chat/{agent}", get(chat_page))
        .route("/chat/{agent}/turn", post(turn_stream))
}

/// Whether `caller` may set the chat's model: an operator with the `admin` scope.
pub(crate) fn may_configure(caller: &Caller) -> bool {
    caller.role >= Role::Operator && caller.may(Scope::Admin)
}

pub(crate) struct AgentView {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) icon: &'static str,
}

#[derive(Template)]
#[template(path = "chat_index.html")]
struct IndexPage {
    layout: Layout,
    agents: Vec<AgentView>,
    model: Option<String>,
    may_configure: bool,
    saved: bool,
}

#[derive(Deserialize)]
pub(crate) struct IndexQuery {
    saved: Option<String>,
}

/// The agents `caller` may chat as: theirs if their token is bound to one, else all.
async fn agents_for(state: &ConsoleState, caller: &Caller) -> Result<Vec<String>, Response> {
    let ids = state
        .host
        .agents()
        .agent_ids()
        .await
        .map_err(page::store_error)?;
    Ok(match &caller.agent {
        Some(own) => ids.into_iter().filter(|i| i == own).collect(),
        None => ids,
    })
}

async fn index(
    State(state): State<ConsoleState>,
    who: Signed,
    Query(q): Query<IndexQuery>,
) -> Response {
    let mut icons = Icons::default();
    let ids = match agents_for(&state, &who.caller).await {
        Ok(ids) => ids,
        Err(r) => return r,
    };
    let mut agents = Vec::new();
    for id in ids {
        let Ok(Some(a)) = state.host.agents().agent(&id).await else {
            continue;
        };
        agents.push(AgentView {
            name: a.name.clone().unwrap_or_else(|| id.clone()),
            description: a.description.clone().unwrap_or_default(),
            icon: icons.take(a.icon.as_deref().or(Some("bot"))),
            id,
        });
    }
    let model = match state.store.chat_model().await {
        Ok(m) => m.map(|m| m.model),
        Err(e) => return page::store_error(e),
    };
    icons.take(Some("settings"));
    let layout = Layout::new(&who.caller, "/chat", "Chat", icons);
    page::html(
        StatusCode::OK,
        &IndexPage {
            layout,
            agents,
            model,
            may_configure: may_configure(&who.caller),
            saved: q.saved.is_some(),
        },
    )
}

pub(crate) struct ToolView {
    pub(crate) name: String,
    pub(crate) icon: &'static str,
}

#[derive(Template)]
#[template(path = "chat.html")]
struct ChatPage {
    layout: Layout,
    agent: AgentView,
    tools: Vec<ToolView>,
    model: Option<String>,
    may_call: bool,
    may_configure: bool,
    js: &'static str,
}

/// `caller` acting as agent `id`, if they may.
async fn as_agent(state: &ConsoleState, who: &Signed, id: &str) -> Result<Caller, Response> {
    let not_found = || page::failure(StatusCode::NOT_FOUND, "There is no such agent.");
    if who.caller.agent.as_deref().is_some_and(|own| own != id) {
        return Err(not_found());
    }
    match state.host.agents().agent(id).await {
        Ok(Some(_)) => {}
        Ok(None) => return Err(not_found()),
        Err(e) => return Err(page::store_error(e)),
    }
    let mut caller = who.caller.clone();
    caller.agent = Some(id.to_string());
    Ok(caller)
}

async fn chat_page(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(id): Path<String>,
) -> Response {
    let caller = match as_agent(&state, &who, &id).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let config = match state.host.agents().agent(&id).await {
        Ok(Some(a)) => a,
        Ok(None) => return page::failure(StatusCode::NOT_FOUND, "There is no such agent."),
        Err(e) => return page::store_error(e),
    };
    let model = match state.store.chat_model().await {
        Ok(m) => m.map(|m| m.model),
        Err(e) => return page::store_error(e),
    };
    let mut icons = Icons::default();
    let tool_icons = ToolIcons::of(&state);
    let tools = state
        .endpoint
        .tools(&caller)
        .await
        .into_iter()
        .map(|t| ToolView {
            icon: tool_icons.take(&mut icons, &t.name, None),
            name: t.name,
        })
        .collect();
    // Every icon a tool card or message may show.
    for name in [
        "bot",
        "user",
        "loader-circle",
        "circle-check",
        "circle-x",
        "circle-dashed",
        "square",
        "send",
        "settings",
    ] {
        icons.take(Some(name));
    }
    let agent = AgentView {
        name: config.name.clone().unwrap_or_else(|| id.clone()),
        description: config.description.clone().unwrap_or_default(),
        icon: icons.take(config.icon.as_deref().or(Some("bot"))),
        id,
    };
    let layout = Layout::new(
        &who.caller,
        "/chat",
        format!("Chat with {}", agent.name),
        icons,
    );
    page::html(
        StatusCode::OK,
        &ChatPage {
            layout,
            agent,
            tools,
            model,
            may_call: who.caller.may(Scope::ToolsCall),
            may_configure: may_configure(&who.caller),
            js: crate::assets::js_version(),
        },
    )
}

#[derive(Deserialize)]
pub(crate) struct TurnBody {
    messages: Vec<Value>,
}

/// Whether `m` is a message the conversation may carry.
fn well_formed(m: &Value) -> bool {
    matches!(
        m.get("role").and_then(Value::as_str),
        Some("user" | "assistant" | "tool" | "system")
    )
}

async fn turn_stream(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(id): Path<String>,
    Json(body): Json<TurnBody>,
) -> Response {
    let caller = match as_agent(&state, &who, &id).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let refuse = |status: StatusCode, why: &str| (status, why.to_string()).into_response();
    if !caller.may(Scope::ToolsCall) {
        return refuse(
            StatusCode::FORBIDDEN,
            "your token lacks the scope tools:call, which chatting needs",
        );
    }
    if body.messages.is_empty() || body.messages.len() > MAX_MESSAGES {
        return refuse(
            StatusCode::UNPROCESSABLE_ENTITY,
            "a turn needs between 1 and 400 messages",
        );
    }
    if let Some(i) = body.messages.iter().position(|m| !well_formed(m)) {
        return refuse(
            StatusCode::UNPROCESSABLE_ENTITY,
            &format!("message {i} has no role the chat knows (user, assistant, tool, system)"),
        );
    }
    let model = match state.store.chat_model().await {
        Ok(Some(m)) => m,
        Ok(None) => {
            return refuse(
                StatusCode::CONFLICT,
                "no chat model is configured: an operator sets one at /chat/settings",
            );
        }
        Err(e) => return page::store_error(e),
    };
    let Some(slot) = state.chats.begin(caller.user()) else {
        return refuse(
            StatusCode::TOO_MANY_REQUESTS,
            &format!(
                "you have {} chat turns running already: stop one or wait for it",
                running::MAX_PER_USER
            ),
        );
    };
    let tools = state.endpoint.tools(&caller).await;
    let icons = ToolIcons::of(&state);
    let stop = CancellationToken::new();
    let stop_turn = stop.clone();
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    let job = turn::Turn {
        state,
        caller,
        model,
        tools,
        icons,
        messages: body.messages,
    };
    tokio::spawn(async move {
        turn::run(job, tx, stop_turn).await;
        drop(slot);
    });
    // Dropping the stream (the browser closed it: Stop, or the tab went) stops the turn.
    let guard = stop.drop_guard();
    let stream = futures::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        let (name, data) = rx.recv().await?;
        let event = Event::default().event(name).data(data.to_string());
        Some((Ok::<_, Infallible>(event), (rx, guard)))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
