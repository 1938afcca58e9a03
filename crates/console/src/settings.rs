//! `/settings`: how this server is configured and what its sandbox can do, read-only (the
//! configuration file is the place to change them). No secret is shown: `[env]` and
//! `[resources]` by name only, the store without its credentials, the chat's key as
//! whether one is set.

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;

use crate::icons::Icons;
use crate::layout::Layout;
use crate::overview::{SandboxView, sandbox_view};
use crate::session::Signed;
use crate::{ConsoleState, page};

pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new().route("/settings", get(index))
}

/// One fact: its name and value.
pub(crate) struct Fact {
    pub(crate) name: &'static str,
    pub(crate) value: String,
}

/// A group of facts, one `[table]` of the configuration.
pub(crate) struct Group {
    pub(crate) title: &'static str,
    pub(crate) facts: Vec<Fact>,
}

#[derive(Template)]
#[template(path = "settings.html")]
struct SettingsPage {
    layout: Layout,
    groups: Vec<Group>,
    runtime: String,
    sandbox_config: String,
    turns: String,
    sandbox: SandboxView,
}

fn fact(name: &'static str, value: impl Into<String>) -> Fact {
    Fact {
        name,
        value: value.into(),
    }
}

fn list(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let all: Vec<String> = items.into_iter().map(|s| s.as_ref().to_string()).collect();
    if all.is_empty() {
        "none".into()
    } else {
        all.join(", ")
    }
}

async fn index(State(state): State<ConsoleState>, who: Signed) -> Response {
    let config = state.host.config();
    let serve = &config.serve;
    let chat = match state.store.chat_model().await {
        Ok(m) => m,
        Err(e) => return page::store_error(e),
    };
    let groups = vec![
        Group {
            title: "[serve]",
            facts: vec![
                fact(
                    "listen",
                    serve.listen.clone().unwrap_or_else(|| "the default".into()),
                ),
                fact(
                    "public_url",
                    serve.public_url.clone().unwrap_or_else(|| "not set".into()),
                ),
                fact("allowed_hosts", list(&serve.allowed_hosts)),
                fact("allowed_origins", list(&serve.allowed_origins)),
                fact("tokens in the file", serve.tokens.len().to_string()),
                fact(
                    "OAuth issuers",
                    list(serve.oauth.issuers.iter().map(|i| i.issuer.as_str())),
                ),
                fact(
                    "max_connections",
                    serve
                        .max_connections
                        .map_or("the default".into(), |n| n.to_string()),
                ),
            ],
        },
        Group {
            title: "[store]",
            facts: vec![
                fact("engine", format!("{:?}", state.store.engine())),
                fact("location", state.store.location().shown()),
            ],
        },
        Group {
            title: "What the file declares",
            facts: vec![
                fact("[env] variables", list(config.env.keys())),
                fact("[resources]", list(config.resources.keys())),
                fact("[plugins]", list(config.plugins.keys())),
                fact("[agents]", list(config.agents.keys())),
                fact("[mcp_servers]", list(config.mcp_servers.keys())),
                fact("[tool_sets]", list(config.tool_sets.keys())),
            ],
        },
        Group {
            title: "Chat model",
            facts: match chat {
                Some(m) => vec![
                    fact("base URL", m.base_url),
                    fact("model", m.model),
                    fact("API key", if m.api_key.is_some() { "set" } else { "none" }),
                ],
                None => vec![fact("model", "not configured (/chat/settings)")],
            },
        },
    ];
    let mut icons = Icons::default();
    let sandbox = sandbox_view(&state, &mut icons);
    let layout = Layout::new(&who.caller, "/settings", "Settings", icons);
    page::html(
        StatusCode::OK,
        &SettingsPage {
            layout,
            groups,
            runtime: format!("{:#?}", config.runtime),
            sandbox_config: format!("{:#?}", config.sandbox),
            turns: format!("{:#?}", config.turns),
            sandbox,
        },
    )
}
