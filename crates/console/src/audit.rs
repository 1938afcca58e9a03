//! `/audit`: every change made through the API, the console or the CLI (who, what, to
//! which object, and the value before and after, secrets never among them), newest first,
//! a page at a time. Admins only, as in the API.

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;
use toolhost_host::{Role, Scope};

use crate::icons::Icons;
use crate::layout::Layout;
use crate::page::encode;
use crate::session::Signed;
use crate::{ConsoleState, page, time};

/// Events per page.
const PER_PAGE: usize = 50;

pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new().route("/audit", get(index))
}

pub(crate) struct EventView {
    pub(crate) when: String,
    pub(crate) actor: String,
    pub(crate) action: String,
    pub(crate) target: String,
    pub(crate) outcome: String,
    pub(crate) old_value: String,
    pub(crate) new_value: String,
}

#[derive(Template)]
#[template(path = "audit.html")]
struct AuditPage {
    layout: Layout,
    events: Vec<EventView>,
    older: Option<String>,
    first: bool,
}

#[derive(Deserialize)]
pub(crate) struct AuditQuery {
    before: Option<String>,
}

/// A stored JSON value, indented for reading.
fn pretty(value: Option<String>) -> String {
    value
        .map(|v| {
            serde_json::from_str::<serde_json::Value>(&v)
                .and_then(|j| serde_json::to_string_pretty(&j))
                .unwrap_or(v)
        })
        .unwrap_or_default()
}

async fn index(
    State(state): State<ConsoleState>,
    who: Signed,
    Query(q): Query<AuditQuery>,
) -> Response {
    if who.caller.role < Role::Admin || !who.caller.may(Scope::Admin) {
        return page::failure(
            StatusCode::FORBIDDEN,
            "The audit log is for admins with a token that has the admin scope.",
        );
    }
    let page_of = match state.store.audit(q.before.as_deref(), PER_PAGE).await {
        Ok(p) => p,
        Err(e) => return page::store_error(e),
    };
    let older = page_of
        .next
        .map(|n| format!("/audit?before={}", encode(&n)));
    let events = page_of
        .items
        .into_iter()
        .map(|e| EventView {
            when: time::utc(e.happened_at),
            actor: e.actor,
            action: e.action,
            target: format!("{} {}", e.target_kind, e.target_id),
            outcome: e.outcome,
            old_value: pretty(e.old_value),
            new_value: pretty(e.new_value),
        })
        .collect();
    let layout = Layout::new(&who.caller, "/audit", "Audit log", Icons::default());
    page::html(
        StatusCode::OK,
        &AuditPage {
            layout,
            events,
            older,
            first: q.before.is_none(),
        },
    )
}
