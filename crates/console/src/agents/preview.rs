//! The live effective-tools panel: the turn an agent's caller would get with the form as
//! it stands (saved or not), resolved by the host exactly as the API's effective tools
//! (`Host::agent_turn`): the tools and the set that won each, collisions, resolution
//! warnings, what the rules kept out, and a warning above `[console] warn_tools_above`.
//! htmx posts the form to `POST /agents/preview` on every change and swaps the panel in.

use askama::Template;
use axum::Form;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use toolhost_host::Caller;
use toolhost_store::AgentSpec;
use toolhost_toolsets::Claim;

use super::fields::{self, layer_value};
use crate::icons::Icons;
use crate::session::Signed;
use crate::{ConsoleState, page};

/// The id a turn is resolved under for an agent that has none yet.
const UNSAVED: &str = "unsaved-agent";

pub(crate) struct PanelTool {
    pub(crate) name: String,
    pub(crate) icon: &'static str,
    pub(crate) set: String,
    pub(crate) layer: &'static str,
}

pub(crate) struct Panel {
    /// The panel's own icons, under `p-` ids (it is swapped in without the page's sprite).
    pub(crate) sprite: String,
    /// Whether this host resolves turns at all.
    pub(crate) available: bool,
    pub(crate) tools: Vec<PanelTool>,
    pub(crate) threshold: usize,
    pub(crate) collisions: Vec<String>,
    pub(crate) warnings: Vec<String>,
    pub(crate) excluded: Vec<String>,
}

impl Panel {
    pub(crate) fn over(&self) -> bool {
        self.tools.len() > self.threshold
    }
}

fn claim(c: &Claim) -> String {
    if c.layer == toolhost_toolsets::Layer::Session {
        format!("`{}`", c.set)
    } else {
        format!("`{}` ({} layer)", c.set, layer_value(c.layer))
    }
}

/// The panel for `spec`, resolved for `caller`.
pub(crate) async fn build(
    state: &ConsoleState,
    caller: &Caller,
    id: &str,
    spec: &AgentSpec,
) -> Panel {
    let threshold = state.host.config().console.warn_tools_above();
    let mut icons = Icons::default();
    let id = if id.is_empty() { UNSAVED } else { id };
    let Some(turn) = state
        .host
        .agent_turn(id, &spec.to_config(), caller.user(), None, None)
        .await
    else {
        return Panel {
            sprite: String::new(),
            available: false,
            tools: Vec::new(),
            threshold,
            collisions: Vec::new(),
            warnings: Vec::new(),
            excluded: Vec::new(),
        };
    };
    let tools = turn
        .tools
        .iter()
        .map(|t| PanelTool {
            name: t.name.clone(),
            icon: icons.take(Some(&t.icon)),
            set: t.claim.set.clone(),
            layer: layer_value(t.claim.layer),
        })
        .collect();
    let collisions = turn
        .collisions
        .iter()
        .map(|c| {
            format!(
                "`{}`: {} shadows {}",
                c.name,
                claim(&c.winner),
                claim(&c.shadowed)
            )
        })
        .collect();
    let warnings = turn
        .warnings
        .iter()
        .map(|w| format!("{}: {}", w.source, w.message))
        .collect();
    let excluded = turn
        .excluded
        .iter()
        .map(|e| format!("`{}` of `{}`: {}", e.name, e.set, e.reason))
        .collect();
    turn.end().await;
    icons.take(Some("triangle-alert"));
    Panel {
        sprite: icons.sprite_with("p-"),
        available: true,
        tools,
        threshold,
        collisions,
        warnings,
        excluded,
    }
}

#[derive(Template)]
#[template(path = "agent_panel.html")]
struct PanelPart {
    panel: Panel,
}

/// `POST /agents/preview`: the panel for the posted form, as a fragment.
pub(crate) async fn panel(
    State(state): State<ConsoleState>,
    who: Signed,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let posted = fields::parse(&pairs);
    let panel = build(&state, &who.caller, &posted.id, &posted.spec).await;
    page::html(StatusCode::OK, &PanelPart { panel })
}
