//! `/agents`: the list, the agent form (new, edit, read-only for toolhost.toml's agents
//! and for callers who may not manage agents), its live effective-tools panel, saving with
//! conflict handling, deleting, and TOML export and import.

mod diff;
mod fields;
mod form;
mod list;
mod preview;
mod sources;
mod toml;

use axum::Router;
use axum::routing::{get, post};
use toolhost_host::{Caller, Role, Scope};
use toolhost_store::AgentSpec;

use crate::ConsoleState;

/// The agents' routes.
pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new()
        .route("/agents", get(list::page).post(form::create))
        .route("/agents/new", get(form::new_page))
        .route("/agents/import", post(form::import))
        .route("/agents/preview", post(preview::panel))
        .route("/agents/{id}", get(form::edit_page).post(form::update))
        .route("/agents/{id}/export", get(form::export))
        .route("/agents/{id}/delete", post(form::delete))
}

/// Whether `caller` may create, change and delete agents: what the API's
/// `Principal::operator` requires (role operator or above, a token with `admin`).
pub(crate) fn may_manage(caller: &Caller) -> bool {
    caller.role >= Role::Operator && caller.may(Scope::Admin)
}

/// An agent as the console reads it.
pub(crate) struct Loaded {
    pub(crate) spec: AgentSpec,
    /// 0 for toolhost.toml's.
    pub(crate) version: i64,
    /// From toolhost.toml: read-only here.
    pub(crate) from_file: bool,
}

/// Agent `id`: toolhost.toml's first (it wins, as the API and the host have it), else the
/// store's.
pub(crate) async fn load(
    state: &ConsoleState,
    id: &str,
) -> Result<Option<Loaded>, toolhost_store::StoreError> {
    if let Some(config) = state.host.config().agents.get(id) {
        return Ok(Some(Loaded {
            spec: AgentSpec::from_config(id, config),
            version: 0,
            from_file: true,
        }));
    }
    Ok(state.store.agent(id).await?.map(|a| Loaded {
        spec: a.spec,
        version: a.version,
        from_file: false,
    }))
}
