//! `/history`: the call log (every surface's calls), newest first, adjacent calls to the
//! same tool grouped, filtered by a GET form (tool, agent, user, status, time), cursor
//! pages; `/history/{id}`, one call. An admin sees everyone's calls, anyone else their own
//! (the API's rule for `/calls`).

mod detail;
mod group;

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;
use toolhost_host::{Caller, Role};
use toolhost_store::{CallFilter, CallRow, Outcome};

use crate::icons::Icons;
use crate::layout::Layout;
use crate::page::{self, encode};
use crate::session::Signed;
use crate::tool_icons::ToolIcons;
use crate::{ConsoleState, time};

/// Calls per page.
const PER_PAGE: usize = 50;

/// The statuses the filter offers.
const STATUSES: &[&str] = &["success", "error", "cancelled", "timeout", "denied"];

pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new()
        .route("/history", get(index))
        .route("/history/{id}", get(detail::page))
}

/// Whose calls `caller` may see: `None` for everyone's (an admin).
pub(crate) fn own_only(caller: &Caller) -> Option<String> {
    (caller.role < Role::Admin).then(|| caller.user().to_string())
}

pub(crate) struct Row {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) icon: &'static str,
    pub(crate) when: String,
    pub(crate) duration: String,
    pub(crate) outcome: &'static str,
    pub(crate) ok: bool,
    pub(crate) user: String,
    pub(crate) agent: String,
    pub(crate) surface: String,
    pub(crate) error: String,
}

/// Adjacent calls to one tool; a group of one is shown as a plain row.
pub(crate) struct Group {
    pub(crate) tool: String,
    pub(crate) icon: &'static str,
    /// `3 success, 1 error`.
    pub(crate) summary: String,
    pub(crate) rows: Vec<Row>,
}

#[derive(Deserialize, Default)]
pub(crate) struct HistoryQuery {
    tool: Option<String>,
    agent: Option<String>,
    user: Option<String>,
    status: Option<String>,
    since: Option<String>,
    until: Option<String>,
    cursor: Option<String>,
}

/// A query parameter, blank as none.
fn given(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

#[derive(Template)]
#[template(path = "history.html")]
struct HistoryPage {
    layout: Layout,
    groups: Vec<Group>,
    own_calls_only: bool,
    tool: String,
    agent: String,
    user: String,
    status: String,
    since: String,
    until: String,
    statuses: &'static [&'static str],
    /// Why a filter was not applied.
    problems: Vec<String>,
    older: Option<String>,
    newest: Option<String>,
}

pub(crate) async fn index(
    State(state): State<ConsoleState>,
    who: Signed,
    Query(q): Query<HistoryQuery>,
) -> Response {
    let caller = &who.caller;
    let own = own_only(caller);
    let mut problems = Vec::new();
    let outcome = given(&q.status).and_then(|s| {
        let o = Outcome::parse(&s);
        if o.is_none() {
            problems.push(format!("“{s}” is not a status; showing every status."));
        }
        o
    });
    let mut when = |name: &str, v: &Option<String>| {
        given(v).and_then(|text| {
            let ms = time::parse_input(&text);
            if ms.is_none() {
                problems.push(format!(
                    "“{text}” is not a date and time (YYYY-MM-DDTHH:MM, UTC); {name} ignored."
                ));
            }
            ms
        })
    };
    let since = when("since", &q.since);
    let until = when("until", &q.until);
    let filter = CallFilter {
        tool: given(&q.tool),
        agent: given(&q.agent),
        principal: own.clone().or_else(|| given(&q.user)),
        outcome,
        since,
        until,
    };
    let cursor = given(&q.cursor);
    let found = match state
        .store
        .calls(&filter, cursor.as_deref(), PER_PAGE)
        .await
    {
        Ok(p) => p,
        Err(e) => return page::store_error(e),
    };
    let mut icons = Icons::default();
    let tool_icons = ToolIcons::of(&state);
    let groups = group::runs(found.items, |c| c.tool.as_str())
        .into_iter()
        .map(|run| to_group(run, &tool_icons, &mut icons))
        .collect();
    // The filters as the form and the links carry them.
    let mut filters: Vec<(&str, String)> = Vec::new();
    for (name, v) in [
        ("tool", &q.tool),
        ("agent", &q.agent),
        ("user", if own.is_some() { &None } else { &q.user }),
        ("status", &q.status),
        ("since", &q.since),
        ("until", &q.until),
    ] {
        if let Some(v) = given(v) {
            filters.push((name, v));
        }
    }
    let link = |cursor: Option<&str>| {
        let mut parts: Vec<String> = filters
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        if let Some(c) = cursor {
            parts.push(format!("cursor={}", encode(c)));
        }
        if parts.is_empty() {
            "/history".to_string()
        } else {
            format!("/history?{}", parts.join("&"))
        }
    };
    let older = found.next.as_deref().map(|c| link(Some(c)));
    let newest = cursor.is_some().then(|| link(None));
    for name in ["filter", "chevron-right", "chevrons-left", "play"] {
        icons.take(Some(name));
    }
    let layout = Layout::new(caller, "/history", "History", icons);
    let value = |v: &Option<String>| given(v).unwrap_or_default();
    page::html(
        StatusCode::OK,
        &HistoryPage {
            layout,
            groups,
            own_calls_only: own.is_some(),
            tool: value(&q.tool),
            agent: value(&q.agent),
            user: if own.is_some() {
                caller.user().to_string()
            } else {
                value(&q.user)
            },
            status: outcome.map(|o| o.as_str().to_string()).unwrap_or_default(),
            since: since.map(time::input_value).unwrap_or_default(),
            until: until.map(time::input_value).unwrap_or_default(),
            statuses: STATUSES,
            problems,
            older,
            newest,
        },
    )
}

fn to_group(run: Vec<CallRow>, tool_icons: &ToolIcons, icons: &mut Icons) -> Group {
    let tool = run.first().map(|c| c.tool.clone()).unwrap_or_default();
    let icon = tool_icons.take(
        icons,
        &tool,
        run.first().and_then(|c| c.tool_set.as_deref()),
    );
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for c in &run {
        let o = c.outcome.as_str();
        match counts.iter_mut().find(|(name, _)| *name == o) {
            Some((_, n)) => *n += 1,
            None => counts.push((o, 1)),
        }
    }
    let summary = counts
        .iter()
        .map(|(o, n)| format!("{n} {o}"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = run
        .into_iter()
        .map(|c| Row {
            icon: tool_icons.take(icons, &c.tool, c.tool_set.as_deref()),
            when: time::utc(c.started_at),
            duration: time::duration(c.duration_ms),
            outcome: c.outcome.as_str(),
            ok: c.outcome == Outcome::Success,
            user: c.principal,
            agent: c.agent_id.unwrap_or_default(),
            surface: c.transport,
            error: c.error.unwrap_or_default(),
            id: c.id,
            tool: c.tool,
        })
        .collect();
    Group {
        tool,
        icon,
        summary,
        rows,
    }
}
