//! The agent form: `GET /agents/new`, `GET /agents/{id}`, saving (`POST /agents` to create,
//! `POST /agents/{id}` with the `version` read), deleting, export and import. Saving a
//! stale version re-renders the form with the user's edits kept and a banner saying what
//! the other change was, with "save mine over theirs" (the form now carries the current
//! version) and "take theirs" (reload): neither change is lost without the user seeing it.

use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use toolhost_store::{AgentSpec, StoreError};

use super::fields::{self, Posted};
use super::preview::{self, Panel};
use super::sources::{self, Category, LAYERS};
use super::{diff, load, may_manage, toml};
use crate::icons::{self, Icons};
use crate::layout::Layout;
use crate::session::Signed;
use crate::{ConsoleState, page};

/// Ids the console's own routes take (`/agents/new`, …): refused for agents made here.
const RESERVED: &[&str] = &["new", "import", "preview"];

/// Complaints beside the fields.
#[derive(Default)]
pub(crate) struct Errors {
    pub(crate) id: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) icon: Option<String>,
    pub(crate) workspace: Option<String>,
    pub(crate) org: Option<String>,
    pub(crate) other: Option<String>,
}

impl Errors {
    fn any(&self) -> bool {
        self.id.is_some()
            || self.name.is_some()
            || self.description.is_some()
            || self.icon.is_some()
            || self.workspace.is_some()
            || self.org.is_some()
            || self.other.is_some()
    }

    /// The store's complaint, beside its field.
    fn from_store(field: &str, problem: &str) -> Errors {
        let mut e = Errors::default();
        let text = Some(problem.to_string());
        match field {
            "id" => e.id = text,
            "name" => e.name = text,
            "description" => e.description = text,
            "icon" => e.icon = text,
            "workspace" => e.workspace = text,
            "org" => e.org = text,
            _ => e.other = Some(format!("{field}: {problem}")),
        }
        e
    }
}

/// The banner of a stale save.
pub(crate) struct Conflict {
    /// The version the user started from and the one stored now.
    pub(crate) from: i64,
    pub(crate) found: i64,
    /// What the other change did (from the form's starting point to now).
    pub(crate) theirs: Vec<String>,
    /// How the form's edits differ from what is stored now.
    pub(crate) mine: Vec<String>,
}

#[derive(Template)]
#[template(path = "agent_form.html")]
struct FormPage {
    layout: Layout,
    is_new: bool,
    id: String,
    /// Nothing can be changed (toolhost.toml's agent, or a caller who may not).
    read_only: bool,
    from_file: bool,
    may_manage: bool,
    spec: AgentSpec,
    icon: &'static str,
    version: i64,
    base: String,
    extra: String,
    categories: Vec<Category>,
    layers: &'static [(&'static str, &'static str)],
    errors: Errors,
    notice: Option<String>,
    conflict: Option<Conflict>,
    import_error: Option<String>,
    import_text: String,
    panel: Panel,
}

/// What a form page shows, before rendering.
struct View {
    is_new: bool,
    id: String,
    from_file: bool,
    spec: AgentSpec,
    version: i64,
    /// The agent as the form starts from (its JSON rides in a hidden field).
    base: Option<AgentSpec>,
    errors: Errors,
    notice: Option<String>,
    conflict: Option<Conflict>,
    import_error: Option<String>,
    import_text: String,
}

impl View {
    fn new(spec: AgentSpec) -> View {
        View {
            is_new: true,
            id: String::new(),
            from_file: false,
            spec,
            version: 0,
            base: None,
            errors: Errors::default(),
            notice: None,
            conflict: None,
            import_error: None,
            import_text: String::new(),
        }
    }
}

async fn render(state: &ConsoleState, who: &Signed, status: StatusCode, v: View) -> Response {
    let manage = may_manage(&who.caller);
    let mut icons = Icons::default();
    let icon = icons.take(Some(v.spec.icon.as_deref().unwrap_or("bot")));
    let (categories, extra) = sources::categories(state, &v.spec, &mut icons).await;
    for name in [
        "search",
        "save",
        "download",
        "upload",
        "trash-2",
        "triangle-alert",
        "circle-check",
        "refresh-cw",
        "chevron-down",
    ] {
        icons.take(Some(name));
    }
    let panel = preview::build(state, &who.caller, &v.id, &v.spec).await;
    let title = if v.is_new {
        "New agent".to_string()
    } else {
        format!("Agent {}", v.spec.name)
    };
    let layout = Layout::new(&who.caller, "/agents", title, icons);
    let base = v
        .base
        .as_ref()
        .and_then(|b| serde_json::to_string(b).ok())
        .unwrap_or_default();
    page::html(
        status,
        &FormPage {
            layout,
            is_new: v.is_new,
            id: v.id,
            read_only: v.from_file || !manage,
            from_file: v.from_file,
            may_manage: manage,
            icon,
            version: v.version,
            base,
            extra,
            categories,
            layers: LAYERS,
            errors: v.errors,
            notice: v.notice,
            conflict: v.conflict,
            import_error: v.import_error,
            import_text: v.import_text,
            panel,
            spec: v.spec,
        },
    )
}

fn forbidden() -> Response {
    page::failure(
        StatusCode::FORBIDDEN,
        "Managing agents needs the role operator and a token with the admin scope.",
    )
}

pub(crate) async fn new_page(State(state): State<ConsoleState>, who: Signed) -> Response {
    render(
        &state,
        &who,
        StatusCode::OK,
        View::new(AgentSpec::default()),
    )
    .await
}

#[derive(Deserialize)]
pub(crate) struct EditQuery {
    saved: Option<String>,
}

pub(crate) async fn edit_page(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(id): Path<String>,
    Query(q): Query<EditQuery>,
) -> Response {
    let loaded = match load(&state, &id).await {
        Ok(Some(l)) => l,
        Ok(None) => return page::failure(StatusCode::NOT_FOUND, "There is no agent of that id."),
        Err(e) => return page::store_error(e),
    };
    let mut v = View::new(loaded.spec.clone());
    v.is_new = false;
    v.id = id;
    v.from_file = loaded.from_file;
    v.version = loaded.version;
    v.base = Some(loaded.spec);
    v.notice = q.saved.map(|_| "Saved.".to_string());
    render(&state, &who, StatusCode::OK, v).await
}

/// What the console checks before the store does: an icon Lucide has, an id free of the
/// console's own routes and of toolhost.toml's agents.
fn precheck(state: &ConsoleState, id: Option<&str>, spec: &AgentSpec) -> Errors {
    let mut e = Errors::default();
    if spec.name.trim().is_empty() {
        e.name = Some("A name is required.".into());
    }
    if let Some(icon) = &spec.icon
        && !icons::exists(icon)
    {
        e.icon = Some(format!(
            "Lucide has no icon called “{icon}”: use a name from lucide.dev/icons, like book-open."
        ));
    }
    if let Some(id) = id {
        if id.is_empty() {
            e.id = Some("An id is required: letters, digits, - and _.".into());
        } else if RESERVED.contains(&id) {
            e.id = Some(format!(
                "“{id}” is taken by the console's own pages: choose another."
            ));
        } else if state.host.config().agents.contains_key(id) {
            e.id = Some(format!("toolhost.toml defines an agent “{id}” already."));
        }
    }
    e
}

fn saved(id: &str) -> Response {
    Redirect::to(&format!("/agents/{}?saved=1", page::encode(id))).into_response()
}

/// `POST /agents`: creates the agent of the form.
pub(crate) async fn create(
    State(state): State<ConsoleState>,
    who: Signed,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    if !may_manage(&who.caller) {
        return forbidden();
    }
    let posted = fields::parse(&pairs);
    let again = |errors: Errors, posted: Posted| {
        let mut v = View::new(posted.spec);
        v.id = posted.id;
        v.errors = errors;
        v
    };
    let errors = precheck(&state, Some(&posted.id), &posted.spec);
    if errors.any() {
        let v = again(errors, posted);
        return render(&state, &who, StatusCode::UNPROCESSABLE_ENTITY, v).await;
    }
    match state
        .store
        .create_agent(who.caller.user(), &posted.id, posted.spec.clone())
        .await
    {
        Ok(agent) => saved(&agent.id),
        Err(StoreError::Invalid { field, problem }) => {
            let v = again(Errors::from_store(&field, &problem), posted);
            render(&state, &who, StatusCode::UNPROCESSABLE_ENTITY, v).await
        }
        Err(StoreError::Exists { .. }) => {
            let errors = Errors {
                id: Some(format!(
                    "An agent “{}” exists already: choose another id, or open it to edit it.",
                    posted.id
                )),
                ..Errors::default()
            };
            let v = again(errors, posted);
            render(&state, &who, StatusCode::CONFLICT, v).await
        }
        Err(e) => page::store_error(e),
    }
}

/// `POST /agents/{id}`: replaces the agent, if still at the form's `version`.
pub(crate) async fn update(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    if !may_manage(&who.caller) {
        return forbidden();
    }
    if state.host.config().agents.contains_key(&id) {
        return page::failure(
            StatusCode::CONFLICT,
            "This agent comes from toolhost.toml: change it there.",
        );
    }
    let posted = fields::parse(&pairs);
    let edit = |posted: Posted, version: i64, base: Option<AgentSpec>| {
        let mut v = View::new(posted.spec);
        v.is_new = false;
        v.id = id.clone();
        v.version = version;
        v.base = base;
        v
    };
    let errors = precheck(&state, None, &posted.spec);
    if errors.any() {
        let (version, base) = (posted.version.unwrap_or(0), posted.base.clone());
        let mut v = edit(posted, version, base);
        v.errors = errors;
        return render(&state, &who, StatusCode::UNPROCESSABLE_ENTITY, v).await;
    }
    let version = posted.version.unwrap_or(0);
    match state
        .store
        .update_agent(who.caller.user(), &id, posted.spec.clone(), version)
        .await
    {
        Ok(_) => saved(&id),
        Err(StoreError::Conflict { found, .. }) => {
            let current = match state.store.agent(&id).await {
                Ok(Some(a)) => a,
                Ok(None) => return deleted_meanwhile(&state, &who, id, posted).await,
                Err(e) => return page::store_error(e),
            };
            // What they changed: from where this form started (when it says) to now.
            let theirs = match &posted.base {
                Some(base) => diff::changes(base, &current.spec),
                None => Vec::new(),
            };
            let conflict = Conflict {
                from: version,
                found: current.version.max(found),
                theirs,
                mine: diff::changes(&current.spec, &posted.spec),
            };
            // The form keeps the user's edits and now starts from the current version:
            // saving it again is "save mine over theirs".
            let mut v = edit(posted, current.version, Some(current.spec));
            v.conflict = Some(conflict);
            render(&state, &who, StatusCode::CONFLICT, v).await
        }
        Err(StoreError::NotFound { .. }) => deleted_meanwhile(&state, &who, id, posted).await,
        Err(StoreError::Invalid { field, problem }) => {
            let base = posted.base.clone();
            let mut v = edit(posted, version, base);
            v.errors = Errors::from_store(&field, &problem);
            render(&state, &who, StatusCode::UNPROCESSABLE_ENTITY, v).await
        }
        Err(e) => page::store_error(e),
    }
}

/// The agent was deleted while the form was open: the edits come back as a new agent's
/// form, to be saved again.
async fn deleted_meanwhile(
    state: &ConsoleState,
    who: &Signed,
    id: String,
    posted: Posted,
) -> Response {
    let mut v = View::new(posted.spec);
    v.id = id;
    v.errors.other = Some(
        "Someone deleted this agent while you edited it. Your edits are below: save them to \
         create it again."
            .into(),
    );
    render(state, who, StatusCode::CONFLICT, v).await
}

#[derive(Deserialize)]
pub(crate) struct DeleteForm {
    version: Option<i64>,
    confirm: Option<String>,
}

/// `POST /agents/{id}/delete`: with the box ticked, and if still at `version`.
pub(crate) async fn delete(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(id): Path<String>,
    Form(f): Form<DeleteForm>,
) -> Response {
    if !may_manage(&who.caller) {
        return forbidden();
    }
    if state.host.config().agents.contains_key(&id) {
        return page::failure(
            StatusCode::CONFLICT,
            "This agent comes from toolhost.toml: remove it there.",
        );
    }
    if f.confirm.as_deref() != Some("yes") {
        return page::failure(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Tick the box to confirm the deletion, then delete again.",
        );
    }
    match state
        .store
        .delete_agent(who.caller.user(), &id, f.version)
        .await
    {
        Ok(()) => Redirect::to(&format!("/agents?deleted={}", page::encode(&id))).into_response(),
        Err(StoreError::Conflict { .. }) => page::failure(
            StatusCode::CONFLICT,
            "Someone changed this agent since you opened it: nothing was deleted. Reload it, \
             look, and delete again if you still mean to.",
        ),
        Err(StoreError::NotFound { .. }) => {
            page::failure(StatusCode::NOT_FOUND, "There is no agent of that id.")
        }
        Err(e) => page::store_error(e),
    }
}

/// `GET /agents/{id}/export`: the agent as a toolhost.toml section, downloaded.
pub(crate) async fn export(
    State(state): State<ConsoleState>,
    _who: Signed,
    Path(id): Path<String>,
) -> Response {
    let loaded = match load(&state, &id).await {
        Ok(Some(l)) => l,
        Ok(None) => return page::failure(StatusCode::NOT_FOUND, "There is no agent of that id."),
        Err(e) => return page::store_error(e),
    };
    let text = match toml::export(&id, &loaded.spec) {
        Ok(t) => t,
        Err(e) => {
            tracing::error!("console: agent {id} could not be written as TOML: {e}");
            return page::failure(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The agent could not be written as TOML.",
            );
        }
    };
    // The file name from the id's safe characters only (a header value).
    let file: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .collect();
    (
        [
            (
                header::CONTENT_TYPE,
                "application/toml; charset=utf-8".to_string(),
            ),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"agent-{file}.toml\""),
            ),
        ],
        text,
    )
        .into_response()
}

#[derive(Deserialize)]
pub(crate) struct ImportForm {
    #[serde(default)]
    toml: String,
}

/// `POST /agents/import`: the new-agent form prefilled from a pasted (or, with
/// JavaScript, uploaded) `[agents.ID]`; nothing is saved until the user saves.
pub(crate) async fn import(
    State(state): State<ConsoleState>,
    who: Signed,
    Form(f): Form<ImportForm>,
) -> Response {
    if !may_manage(&who.caller) {
        return forbidden();
    }
    match toml::import(&f.toml) {
        Ok((id, spec)) => {
            let exists = match load(&state, &id).await {
                Ok(found) => found.is_some(),
                Err(e) => return page::store_error(e),
            };
            let mut v = View::new(spec);
            v.notice = Some(if exists {
                format!(
                    "Imported “{id}”, not saved yet. An agent “{id}” exists already: choose \
                     another id before saving."
                )
            } else {
                format!("Imported “{id}”, not saved yet: check it and save.")
            });
            v.id = id;
            render(&state, &who, StatusCode::OK, v).await
        }
        Err(e) => {
            let mut v = View::new(AgentSpec::default());
            v.import_error = Some(format!("The TOML was not imported: {e}"));
            v.import_text = f.toml;
            render(&state, &who, StatusCode::UNPROCESSABLE_ENTITY, v).await
        }
    }
}
