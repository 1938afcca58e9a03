//! `/mcp-servers`: the MCP servers whose tools Toolhost serves as tool sets: toolhost.toml's
//! (read-only here) and the stored ones, with their health; adding and editing one (a
//! stdio command or a URL, environment, headers, secrets), testing it (it lists its tools,
//! none is called) and removing it. The pages are read server-side; the changes go through
//! the API (`/api/v1/mcp-servers`) from `mcp-servers.js`, so the rules are the API's:
//! secret values are write-only (an empty field keeps the stored value), and a save of a
//! stale version is refused with a 409.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use toolhost_host::{Role, Scope};
use toolhost_mcp_client::McpServerConfig;

use crate::catalog::{HealthView, health};
use crate::icons::Icons;
use crate::layout::Layout;
use crate::session::Signed;
use crate::{ConsoleState, page, time};

pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new()
        .route("/mcp-servers", get(index))
        .route("/mcp-servers/new", get(new_page))
        .route("/mcp-servers/{name}", get(edit_page))
}

pub(crate) struct ServerView {
    pub(crate) name: String,
    pub(crate) icon: &'static str,
    pub(crate) transport: String,
    pub(crate) description: String,
    pub(crate) from_config: bool,
    pub(crate) health: Option<HealthView>,
    pub(crate) updated: String,
}

#[derive(Template)]
#[template(path = "mcp_servers.html")]
struct IndexPage {
    layout: Layout,
    servers: Vec<ServerView>,
    may_edit: bool,
}

/// Operators with the `admin` scope manage servers.
fn may_edit(who: &Signed) -> bool {
    who.caller.role >= Role::Operator && who.caller.may(Scope::Admin)
}

fn health_of(state: &ConsoleState, name: &str) -> Option<HealthView> {
    let source = state.host.registry()?.external_source(name)?;
    Some(health(source.health()))
}

async fn index(State(state): State<ConsoleState>, who: Signed) -> Response {
    let mut icons = Icons::default();
    let config = &state.host.config().mcp_servers;
    let stored = match state.store.mcp_servers().await {
        Ok(s) => s,
        Err(e) => return page::store_error(e),
    };
    let mut servers: Vec<ServerView> = config
        .iter()
        .map(|(name, c)| view(&state, name, c, true, 0))
        .chain(
            stored
                .iter()
                .filter(|s| !config.contains_key(&s.name))
                .map(|s| view(&state, &s.name, &s.config, false, s.updated_at)),
        )
        .collect();
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    for s in &mut servers {
        let configured = config
            .get(&s.name)
            .or_else(|| stored.iter().find(|x| x.name == s.name).map(|x| &x.config))
            .and_then(|c| c.icon.clone());
        s.icon = icons.take(configured.as_deref().or(Some("server")));
    }
    icons.take(Some("plus"));
    let layout = Layout::new(&who.caller, "/mcp-servers", "MCP servers", icons);
    page::html(
        StatusCode::OK,
        &IndexPage {
            layout,
            servers,
            may_edit: may_edit(&who),
        },
    )
}

fn transport(c: &McpServerConfig) -> String {
    match &c.url {
        Some(url) => format!("Streamable HTTP {url}"),
        None => format!("stdio: {}", c.command.join(" ")),
    }
}

fn view(
    state: &ConsoleState,
    name: &str,
    c: &McpServerConfig,
    from_config: bool,
    updated_at: i64,
) -> ServerView {
    ServerView {
        name: name.to_string(),
        icon: "",
        transport: transport(c),
        description: c.description.clone().unwrap_or_default(),
        from_config,
        health: health_of(state, name),
        updated: if updated_at > 0 {
            time::utc(updated_at)
        } else {
            String::new()
        },
    }
}

/// One name=value row of the form; a secret's value is never put into the page.
pub(crate) struct Pair {
    pub(crate) key: String,
}

#[derive(Template)]
#[template(path = "mcp_server.html")]
struct FormPage {
    layout: Layout,
    /// Empty for a new server.
    name: String,
    version: i64,
    from_config: bool,
    may_edit: bool,
    kind: &'static str,
    command: String,
    url: String,
    cwd: String,
    sandbox: bool,
    network: bool,
    env: Vec<Pair>,
    headers: Vec<Pair>,
    bearer_token: bool,
    icon: String,
    description: String,
    timeout: String,
    health: Option<HealthView>,
    js: &'static str,
}

fn form(
    who: &Signed,
    name: &str,
    c: &McpServerConfig,
    version: i64,
    from_config: bool,
    health: Option<HealthView>,
    icons: Icons,
) -> FormPage {
    let title = if name.is_empty() {
        "Add an MCP server".to_string()
    } else {
        format!("MCP server {name}")
    };
    let secs =
        |d: Option<std::time::Duration>| d.map_or(String::new(), |d| d.as_secs_f64().to_string());
    FormPage {
        layout: Layout::new(&who.caller, "/mcp-servers", title, icons),
        name: name.to_string(),
        version,
        from_config,
        may_edit: may_edit(who) && !from_config,
        kind: if c.url.is_some() { "http" } else { "stdio" },
        command: c.command.join("\n"),
        url: c.url.clone().unwrap_or_default(),
        cwd: c
            .cwd
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        sandbox: c.sandbox,
        network: c.network,
        env: c.env.keys().map(|k| Pair { key: k.clone() }).collect(),
        headers: c.headers.keys().map(|k| Pair { key: k.clone() }).collect(),
        bearer_token: c.bearer_token.is_some() || c.bearer_token_env.is_some(),
        icon: c.icon.clone().unwrap_or_default(),
        description: c.description.clone().unwrap_or_default(),
        timeout: secs(c.timeout),
        health,
        js: crate::assets::js_version(),
    }
}

fn form_icons() -> Icons {
    let mut icons = Icons::default();
    for name in ["server", "plug-zap", "trash-2", "plus", "save"] {
        icons.take(Some(name));
    }
    icons
}

async fn new_page(State(_state): State<ConsoleState>, who: Signed) -> Response {
    if !may_edit(&who) {
        return page::failure(
            StatusCode::FORBIDDEN,
            "Adding an MCP server needs the operator role and a token with the admin scope.",
        );
    }
    let page = form(
        &who,
        "",
        &McpServerConfig::default(),
        0,
        false,
        None,
        form_icons(),
    );
    page::html(StatusCode::OK, &page)
}

async fn edit_page(
    State(state): State<ConsoleState>,
    who: Signed,
    Path(name): Path<String>,
) -> Response {
    let health = health_of(&state, &name);
    if let Some(c) = state.host.config().mcp_servers.get(&name) {
        let page = form(&who, &name, c, 0, true, health, form_icons());
        return page::html(StatusCode::OK, &page);
    }
    match state.store.mcp_server(&name).await {
        Ok(Some(s)) => {
            let page = form(
                &who,
                &name,
                &s.config,
                s.version,
                false,
                health,
                form_icons(),
            );
            page::html(StatusCode::OK, &page)
        }
        Ok(None) => page::failure(
            StatusCode::NOT_FOUND,
            "There is no MCP server by that name.",
        ),
        Err(e) => page::store_error(e),
    }
}
