//! `/tokens`: a user's tokens (an admin's view holds everyone's) with their prefix,
//! scopes, agent, last use and expiry; making one (its secret shown once) and revoking
//! one; and, for admins, the users and their roles. The lists are read server-side; the
//! changes go through the API (`/api/v1/tokens`, `/api/v1/users`) from `tokens.js`, with
//! the session cookie.

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
use crate::session::Signed;
use crate::{ConsoleState, page, time};

/// Tokens per page.
const PER_PAGE: usize = 50;

pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new().route("/tokens", get(index))
}

pub(crate) struct TokenView {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) user: String,
    pub(crate) scopes: String,
    pub(crate) agent: String,
    pub(crate) created: String,
    pub(crate) last_used: String,
    pub(crate) expires: String,
    /// `active`, `revoked` or `expired`.
    pub(crate) status: &'static str,
}

pub(crate) struct UserView {
    pub(crate) name: String,
    pub(crate) role: &'static str,
    pub(crate) created: String,
    pub(crate) me: bool,
}

#[derive(Template)]
#[template(path = "tokens.html")]
struct TokensPage {
    layout: Layout,
    tokens: Vec<TokenView>,
    everyones: bool,
    may_make: bool,
    is_admin: bool,
    scopes: Vec<&'static str>,
    agents: Vec<String>,
    users: Vec<UserView>,
    page: usize,
    pages: usize,
    js: &'static str,
}

#[derive(Deserialize)]
pub(crate) struct PageQuery {
    page: Option<usize>,
}

async fn index(
    State(state): State<ConsoleState>,
    who: Signed,
    Query(q): Query<PageQuery>,
) -> Response {
    let caller = &who.caller;
    let is_admin = caller.role >= Role::Admin && caller.may(Scope::Admin);
    // As the API lists them: an admin sees everyone's tokens, anyone else their own.
    let everyones = caller.role >= Role::Admin;
    let owner = (!everyones).then(|| caller.user().to_string());
    let all = match state.store.tokens(owner.as_deref()).await {
        Ok(t) => t,
        Err(e) => return page::store_error(e),
    };
    let now = time::now_ms();
    let pages = all.len().div_ceil(PER_PAGE).max(1);
    let page_no = q.page.unwrap_or(1).clamp(1, pages);
    let tokens = all
        .into_iter()
        .skip((page_no - 1) * PER_PAGE)
        .take(PER_PAGE)
        .map(|t| TokenView {
            status: if t.revoked_at.is_some() {
                "revoked"
            } else if t.expires_at.is_some_and(|e| e <= now) {
                "expired"
            } else {
                "active"
            },
            scopes: t
                .scopes
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            agent: t.agent.unwrap_or_default(),
            created: time::utc(t.created_at),
            last_used: t.last_used_at.map_or_else(|| "never".into(), time::utc),
            expires: t.expires_at.map_or_else(|| "never".into(), time::utc),
            id: t.id,
            name: t.name,
            user: t.user,
        })
        .collect();
    let agents = match state.host.agents().agent_ids().await {
        Ok(ids) => match &caller.agent {
            Some(own) => ids.into_iter().filter(|i| i == own).collect(),
            None => ids,
        },
        Err(e) => return page::store_error(e),
    };
    let users = if is_admin {
        match state.store.users().await {
            Ok(users) => users
                .into_iter()
                .map(|u| UserView {
                    me: u.name == caller.user(),
                    role: u.role.as_str(),
                    created: time::utc(u.created_at),
                    name: u.name,
                })
                .collect(),
            Err(e) => return page::store_error(e),
        }
    } else {
        Vec::new()
    };
    // A token never allows more than the one that makes it.
    let scopes = Scope::ALL
        .iter()
        .filter(|s| caller.may(**s))
        .map(|s| s.as_str())
        .collect();
    let mut icons = Icons::default();
    for name in ["key-round", "copy", "ban", "users", "plus"] {
        icons.take(Some(name));
    }
    let layout = Layout::new(caller, "/tokens", "Tokens and users", icons);
    page::html(
        StatusCode::OK,
        &TokensPage {
            layout,
            tokens,
            everyones,
            may_make: caller.may(Scope::Admin),
            is_admin,
            scopes,
            agents,
            users,
            page: page_no,
            pages,
            js: crate::assets::js_version(),
        },
    )
}
