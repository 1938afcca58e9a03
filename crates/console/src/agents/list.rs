//! `GET /agents`: toolhost.toml's agents (read-only) and the stored ones, by id, a page at
//! a time (`?after=ID`), as the API lists them.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use toolhost_store::AgentSpec;

use crate::icons::Icons;
use crate::layout::Layout;
use crate::session::Signed;
use crate::{ConsoleState, page};

/// Agents per page.
const PER_PAGE: usize = 50;

pub(crate) struct Row {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) icon: &'static str,
    pub(crate) grants: usize,
    pub(crate) from_file: bool,
}

#[derive(Deserialize)]
pub(crate) struct ListQuery {
    after: Option<String>,
    deleted: Option<String>,
}

#[derive(Template)]
#[template(path = "agents.html")]
struct ListPage {
    layout: Layout,
    rows: Vec<Row>,
    may_manage: bool,
    next: Option<String>,
    first: bool,
    deleted: Option<String>,
}

pub(crate) async fn page(
    State(state): State<ConsoleState>,
    who: Signed,
    Query(q): Query<ListQuery>,
) -> Response {
    let after = q.after.unwrap_or_default();
    let stored = match state.store.agents(Some(&after), PER_PAGE).await {
        Ok(p) => p,
        Err(e) => return page::store_error(e),
    };
    let config = &state.host.config().agents;
    let mut all: Vec<(String, AgentSpec, bool)> = config
        .iter()
        .filter(|(id, _)| id.as_str() > after.as_str())
        .take(PER_PAGE + 1)
        .map(|(id, a)| (id.clone(), AgentSpec::from_config(id, a), true))
        .chain(
            stored
                .items
                .into_iter()
                // toolhost.toml's agent of the same id is the one served.
                .filter(|a| !config.contains_key(&a.id))
                .map(|a| (a.id, a.spec, false)),
        )
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let more = stored.next.is_some() || all.len() > PER_PAGE;
    all.truncate(PER_PAGE);
    let next = more.then(|| all.last().map(|a| a.0.clone())).flatten();
    let mut icons = Icons::default();
    let rows = all
        .into_iter()
        .map(|(id, spec, from_file)| Row {
            icon: icons.take(Some(spec.icon.as_deref().unwrap_or("bot"))),
            grants: spec.grants.len(),
            name: spec.name,
            description: spec.description,
            id,
            from_file,
        })
        .collect();
    let may_manage = super::may_manage(&who.caller);
    if may_manage {
        icons.take(Some("plus"));
    }
    icons.take(Some("chevron-right"));
    let layout = Layout::new(&who.caller, "/agents", "Agents", icons);
    page::html(
        StatusCode::OK,
        &ListPage {
            layout,
            rows,
            may_manage,
            next: next.map(|n| format!("/agents?after={}", page::encode(&n))),
            first: after.is_empty(),
            deleted: q.deleted,
        },
    )
}
