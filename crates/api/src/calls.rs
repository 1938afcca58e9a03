//! Calling tools over the API: `POST /calls` starts a call and answers at once with its id;
//! `GET /calls/{id}/events` streams its progress and result as server-sent events
//! (resumable with `Last-Event-ID`); `DELETE /calls/{id}` cancels it; `GET /calls/{id}`
//! says where it is. `GET /tools` lists what the caller may call.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolhost_host::{CallTrace, Caller, Role, Scope};
use utoipa::ToSchema;

use crate::auth::Principal;
use crate::body::Body;
use crate::history::{CallOut, call_out};
use crate::live::{CallResult, CallUpdate, LiveCall, MAX_RUNNING_PER_USER, Refused};
use crate::{ApiState, Problem};

/// A call to start.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StartCall {
    /// The tool, by the name a model calls it.
    pub(crate) tool: String,
    /// Its arguments (an object; absent is `{}`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub(crate) arguments: Option<Map<String, Value>>,
    /// Call it as this agent (its granted tools only). A token bound to an agent calls as
    /// that agent whether or not this is given.
    #[serde(default)]
    pub(crate) agent: Option<String>,
}

/// A call, while it runs or once it ended.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CallStatus {
    /// Its id: also the id of its row in the call log.
    pub(crate) id: String,
    /// The tool.
    pub(crate) tool: String,
    /// The agent it was called as.
    pub(crate) agent: Option<String>,
    /// Who called.
    pub(crate) user: String,
    /// Milliseconds since the Unix epoch.
    pub(crate) started_at: i64,
    /// `running`, or `finished`.
    pub(crate) status: String,
    /// Where its events stream.
    pub(crate) events: String,
    /// Its result, once finished (kept for ten minutes after the call ends).
    pub(crate) result: Option<CallResult>,
    /// Its row in the call log, once written (calls that ended a while ago have only this).
    pub(crate) logged: Option<CallOut>,
}

fn status_of(live: &LiveCall) -> CallStatus {
    let result = live.result();
    CallStatus {
        id: live.id.clone(),
        tool: live.tool.clone(),
        agent: live.agent.clone(),
        user: live.user.clone(),
        started_at: live.started_at,
        status: if result.is_some() {
            "finished"
        } else {
            "running"
        }
        .into(),
        events: format!("/api/v1/calls/{}/events", live.id),
        result,
        logged: None,
    }
}

/// Whose calls `who` may see: their own, or everyone's for an admin.
fn owner_filter(who: &Principal) -> Option<&str> {
    match who.0.role {
        Role::Admin => None,
        _ => Some(who.actor()),
    }
}

/// The caller a call runs as, and whether `agent` is one it may call as.
pub(crate) async fn calling_as(
    state: &ApiState,
    who: &Principal,
    agent: Option<&str>,
) -> Result<Caller, Problem> {
    let mut caller = who.0.clone();
    match (agent, caller.agent.as_deref()) {
        (None, _) => {}
        (Some(asked), Some(bound)) if asked != bound => {
            // The token *is* its agent: any other looks like one that does not exist.
            return Err(Problem::not_found("agent", asked).at("agent"));
        }
        (Some(asked), _) => {
            if state.host.agents().agent(asked).await?.is_none() {
                return Err(Problem::not_found("agent", asked).at("agent"));
            }
            caller.agent = Some(asked.to_string());
        }
    }
    Ok(caller)
}

/// Starts a call. It runs until it ends or is cancelled, whether or not anyone follows its
/// events.
#[utoipa::path(post, path = "/calls", operation_id = "startCall", tag = "calls",
    request_body = StartCall,
    responses(
        (status = 202, description = "Started; follow `events`", body = CallStatus,
            headers(("Location" = String, description = "The call"))),
        (status = 403, body = Problem), (status = 404, description = "No such tool or agent", body = Problem),
        (status = 422, body = Problem),
        (status = 429, description = "Too many calls running", body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn start(
    State(state): State<ApiState>,
    who: Principal,
    Body(body): Body<StartCall>,
) -> Result<Response, Problem> {
    let caller = calling_as(&state, &who, body.agent.as_deref()).await?;
    let log = state.host.call_log();
    let surface = who.1.surface();
    if !caller.may(Scope::ToolsCall) {
        let why = "this token lacks the scope `tools:call`";
        CallTrace::deny(&*log, &caller, &body.tool, surface, why);
        return Err(Problem::forbidden(why));
    }
    let Some(target) = state.endpoint.resolve(&caller, &body.tool).await else {
        let why = format!(
            "tool `{}` does not exist, or is not one you may call",
            body.tool
        );
        CallTrace::deny(&*log, &caller, &body.tool, surface, &why);
        return Err(Problem::new(StatusCode::NOT_FOUND, why).at("tool"));
    };
    let args = Value::Object(body.arguments.unwrap_or_default());
    let id = toolhost_store::new_id();
    let trace =
        CallTrace::begin(log, &caller, &body.tool, surface, &args, &target).with_id(id.clone());
    let mut request = target.request(args, caller.space.clone());
    request.tool_call_id = Some(id.clone());
    let call = state.host.runtime().call(request);
    let live = state
        .live
        .start(
            id,
            caller.user(),
            &body.tool,
            caller.agent.clone(),
            call,
            trace,
            &state.stop,
        )
        .map_err(|refusal| {
            let (refused, trace) = *refusal;
            let detail = match refused {
                Refused::UserBusy => format!(
                    "you have {MAX_RUNNING_PER_USER} calls running already; wait for one to end"
                ),
                Refused::Full => "the server runs as many calls as it may; try again".into(),
            };
            // Logged as refused, not as a call that was cancelled.
            trace.refuse(&detail);
            Problem::new(StatusCode::TOO_MANY_REQUESTS, detail)
        })?;
    let status = status_of(&live);
    let mut res = (StatusCode::ACCEPTED, Json(&status)).into_response();
    if let Ok(at) = HeaderValue::from_str(&format!("/api/v1/calls/{}", status.id)) {
        res.headers_mut().insert(header::LOCATION, at);
    }
    Ok(res)
}

/// A call: running, finished with its result, or (a while after) its row in the call log.
#[utoipa::path(get, path = "/calls/{id}", operation_id = "getCall", tag = "calls",
    params(("id" = String, Path, description = "The call's id")),
    responses((status = 200, body = CallStatus), (status = 404, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn get(
    State(state): State<ApiState>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Json<CallStatus>, Problem> {
    who.reader()?;
    if let Some(live) = state.live.get(&id, owner_filter(&who)) {
        return Ok(Json(status_of(&live)));
    }
    let row = state.store.call(&id).await?;
    let Some(row) = row.filter(|r| owner_filter(&who).is_none_or(|u| u == r.principal)) else {
        return Err(Problem::not_found("call", &id));
    };
    Ok(Json(CallStatus {
        id: row.id.clone(),
        tool: row.tool.clone(),
        agent: row.agent_id.clone(),
        user: row.principal.clone(),
        started_at: row.started_at,
        status: "finished".into(),
        events: format!("/api/v1/calls/{}/events", row.id),
        result: None,
        logged: Some(call_out(row)),
    }))
}

/// Cancels a running call: its tool's abort signal fires, and if it does not stop within
/// the grace period its processes are killed. The call's stream then ends with a
/// `cancelled` result.
#[utoipa::path(delete, path = "/calls/{id}", operation_id = "cancelCall", tag = "calls",
    params(("id" = String, Path, description = "The call's id")),
    responses((status = 202, description = "Cancelling", body = CallStatus),
        (status = 404, body = Problem), (status = 409, description = "It has ended", body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn cancel(
    State(state): State<ApiState>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    who.require(Role::Viewer, Scope::ToolsCall)?;
    let Some(live) = state.live.get(&id, owner_filter(&who)) else {
        return Err(Problem::not_found("running call", &id));
    };
    if live.finished() {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            format!("call `{id}` has ended already"),
        ));
    }
    live.cancel();
    Ok((StatusCode::ACCEPTED, Json(status_of(&live))).into_response())
}

/// The events of a call as `text/event-stream`: `progress` events, then one `result`
/// event, after which the stream ends. Each event's `id` counts up; reconnect with
/// `Last-Event-ID` to get only what came after it. Events stay for ten minutes after the
/// call ends.
#[utoipa::path(get, path = "/calls/{id}/events", operation_id = "callEvents", tag = "calls",
    params(("id" = String, Path, description = "The call's id"),
        ("Last-Event-ID" = Option<String>, Header, description = "The last event already seen")),
    responses(
        (status = 200, description = "Server-sent events: `progress` events, then one `result`",
            content_type = "text/event-stream", body = CallEventFrame),
        (status = 400, description = "`Last-Event-ID` is not an event id", body = Problem),
        (status = 404, body = Problem),
        (status = 410, description = "The call ended too long ago: its row is at /calls/{id}", body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn events(
    State(state): State<ApiState>,
    who: Principal,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    who.reader()?;
    let after = match headers.get("last-event-id") {
        None => 0,
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                Problem::new(
                    StatusCode::BAD_REQUEST,
                    "`Last-Event-ID` must be the id of an event of this call",
                )
                .at("Last-Event-ID")
            })?,
    };
    let Some(live) = state.live.get(&id, owner_filter(&who)) else {
        let logged = state.store.call(&id).await?;
        if logged.is_some_and(|r| owner_filter(&who).is_none_or(|u| u == r.principal)) {
            return Err(Problem::new(
                StatusCode::GONE,
                format!(
                    "call `{id}` ended a while ago and its events are gone; its row is at /api/v1/calls/{id}"
                ),
            ));
        }
        return Err(Problem::not_found("call", &id));
    };
    Ok(Sse::new(follow(live, after))
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// One server-sent event of a call, as the stream frames it (for the document: the data
/// is a `CallUpdate` as JSON).
#[derive(ToSchema)]
#[allow(dead_code)]
pub(crate) struct CallEventFrame {
    /// Counts up from 1; send the last one seen as `Last-Event-ID` to resume after it.
    id: String,
    /// `progress` or `result`.
    event: EventName,
    /// A `CallUpdate`, as JSON.
    #[schema(content_media_type = "application/json")]
    data: String,
}

/// The kind of a call's event.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub(crate) enum EventName {
    /// The tool reported progress.
    Progress,
    /// The call ended: the last event.
    Result,
}

/// The events of `live` after `after`, as they come, until its result.
fn follow(live: Arc<LiveCall>, after: u64) -> impl Stream<Item = Result<Event, Infallible>> {
    futures::stream::unfold(
        (
            live,
            after,
            Vec::<(u64, Arc<CallUpdate>)>::new().into_iter(),
            false,
        ),
        |(live, mut after, mut pending, mut ended)| async move {
            loop {
                if let Some((id, update)) = pending.next() {
                    after = id;
                    let kind = match update.as_ref() {
                        CallUpdate::Progress { .. } => "progress",
                        CallUpdate::Result(_) => "result",
                    };
                    let event = Event::default()
                        .id(id.to_string())
                        .event(kind)
                        .json_data(update.as_ref())
                        .unwrap_or_else(|_| Event::default().comment("unserialisable event"));
                    return Some((Ok(event), (live, after, pending, ended)));
                }
                if ended {
                    return None;
                }
                let (items, finished) = live.after(after);
                if items.is_empty() {
                    if finished {
                        return None;
                    }
                    live.wait_past(after).await;
                    continue;
                }
                ended = finished;
                pending = items.into_iter();
            }
        },
    )
}
