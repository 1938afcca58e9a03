//! `/`: what the host serves (tools, tool sets, agents, MCP servers), the calls of the
//! last 24 hours and their errors, the latest calls, and the sandbox's status.

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use toolhost_host::Role;
use toolhost_store::{CallFilter, Outcome};

use crate::icons::Icons;
use crate::layout::Layout;
use crate::session::Signed;
use crate::{ConsoleState, page, time};

/// How many of the latest calls the overview lists.
const LATEST: usize = 10;

pub(crate) struct Card {
    pub(crate) label: &'static str,
    pub(crate) value: String,
    pub(crate) icon: &'static str,
    pub(crate) href: Option<&'static str>,
    pub(crate) alert: bool,
}

pub(crate) struct CallView {
    pub(crate) tool: String,
    pub(crate) icon: &'static str,
    pub(crate) when: String,
    pub(crate) duration: String,
    pub(crate) outcome: &'static str,
    pub(crate) ok: bool,
    pub(crate) user: String,
    pub(crate) agent: String,
    pub(crate) transport: String,
    pub(crate) error: String,
}

pub(crate) struct LayerView {
    pub(crate) name: String,
    pub(crate) available: bool,
    pub(crate) detail: String,
}

pub(crate) struct SandboxView {
    /// `ready`, `off` or `unavailable`.
    pub(crate) state: &'static str,
    pub(crate) icon: &'static str,
    pub(crate) summary: String,
    pub(crate) layers: Vec<LayerView>,
}

/// A node of the fleet, as the overview lists it.
pub(crate) struct NodeView {
    pub(crate) node: String,
    pub(crate) role: String,
    pub(crate) version: String,
    pub(crate) load: String,
    pub(crate) finished: u64,
    pub(crate) workers: usize,
    pub(crate) epoch: i64,
    pub(crate) since: String,
    pub(crate) this: bool,
}

#[derive(Template)]
#[template(path = "overview.html")]
struct OverviewPage {
    layout: Layout,
    cards: Vec<Card>,
    calls: Vec<CallView>,
    own_calls_only: bool,
    sandbox: SandboxView,
    /// The fleet this server is a gateway of: its gateways, then its runners.
    fleet: Option<Vec<NodeView>>,
    /// Whether a runner of the fleet is live.
    runners: bool,
}

/// The fleet's nodes, when this server is one of its gateways.
fn fleet_view(state: &ConsoleState) -> Option<Vec<NodeView>> {
    let status = state.host.fleet()?.status();
    let me = status.node.clone();
    Some(
        status
            .gateways
            .into_iter()
            .chain(status.runners)
            .map(|n| NodeView {
                load: if n.role == "runner" {
                    format!("{} of {}", n.running, n.slots)
                } else {
                    n.running.to_string()
                },
                this: n.node == me && n.role == "gateway",
                since: time::utc(i64::try_from(n.started_at).unwrap_or(0)),
                node: n.node,
                role: n.role,
                version: n.version,
                finished: n.finished,
                workers: n.workers,
                epoch: n.epoch,
            })
            .collect(),
    )
}

pub(crate) async fn page(State(state): State<ConsoleState>, who: Signed) -> Response {
    let caller = &who.caller;
    let mut icons = Icons::default();
    let tools = state.endpoint.tools(caller).await.len();
    let registry = state.host.registry();
    let sets = registry.map_or(0, |r| r.tool_sets().count());
    let servers = registry.map_or(0, |r| r.external_sources().len());
    let agents = match state.host.agents().agent_ids().await {
        Ok(ids) => ids.len(),
        Err(e) => return page::store_error(e),
    };
    // As in the API's call log: an admin sees everyone's calls, anyone else their own.
    let own_calls_only = caller.role < Role::Admin;
    let principal = own_calls_only.then(|| caller.user().to_string());
    let since = time::now_ms() - 24 * 3600 * 1000;
    let counts = match state.store.call_counts(since, principal.as_deref()).await {
        Ok(c) => c,
        Err(e) => return page::store_error(e),
    };
    let total: i64 = counts.iter().map(|(_, n)| n).sum();
    let errors: i64 = counts
        .iter()
        .filter(|(o, _)| matches!(o, Outcome::Error | Outcome::Timeout))
        .map(|(_, n)| n)
        .sum();
    let filter = CallFilter {
        principal,
        ..CallFilter::default()
    };
    let latest = match state.store.calls(&filter, None, LATEST).await {
        Ok(page) => page.items,
        Err(e) => return page::store_error(e),
    };
    let set_icons: std::collections::HashMap<String, Option<String>> = registry
        .map(|r| {
            r.tool_sets()
                .map(|e| (e.set.id.clone(), e.set.icon.clone()))
                .collect()
        })
        .unwrap_or_default();
    let calls = latest
        .into_iter()
        .map(|c| CallView {
            icon: icons.take(
                c.tool_set
                    .as_ref()
                    .and_then(|s| set_icons.get(s))
                    .and_then(|i| i.as_deref()),
            ),
            tool: c.tool,
            when: time::utc(c.started_at),
            duration: time::duration(c.duration_ms),
            outcome: c.outcome.as_str(),
            ok: c.outcome == Outcome::Success,
            user: c.principal,
            agent: c.agent_id.unwrap_or_default(),
            transport: c.transport,
            error: c.error.unwrap_or_default(),
        })
        .collect();
    let card = |icons: &mut Icons, label, value: usize, icon, href| Card {
        label,
        value: value.to_string(),
        icon: icons.take(Some(icon)),
        href,
        alert: false,
    };
    let mut cards = vec![
        card(&mut icons, "Tools", tools, "wrench", Some("/catalog")),
        card(&mut icons, "Tool sets", sets, "boxes", Some("/catalog")),
        card(&mut icons, "Agents", agents, "bot", None),
        card(&mut icons, "MCP servers", servers, "server", None),
    ];
    cards.push(Card {
        label: "Calls, last 24 h",
        value: total.to_string(),
        icon: icons.take(Some("activity")),
        href: None,
        alert: false,
    });
    cards.push(Card {
        label: "Errors, last 24 h",
        value: errors.to_string(),
        icon: icons.take(Some("triangle-alert")),
        href: None,
        alert: errors > 0,
    });
    let sandbox = sandbox_view(&state, &mut icons);
    let fleet = fleet_view(&state);
    let layout = Layout::new(caller, "/", "Overview", icons);
    page::html(
        StatusCode::OK,
        &OverviewPage {
            layout,
            cards,
            calls,
            own_calls_only,
            sandbox,
            runners: fleet
                .as_ref()
                .is_some_and(|n| n.iter().any(|n| n.role == "runner")),
            fleet,
        },
    )
}

pub(crate) fn sandbox_view(state: &ConsoleState, icons: &mut Icons) -> SandboxView {
    let Some(sandbox) = state.host.runtime().sandbox() else {
        return SandboxView {
            state: "off",
            icon: icons.take(Some("shield-off")),
            summary: "Turned off by the configuration ([sandbox] enabled = false): tools run \
                      unconfined."
                .into(),
            layers: Vec::new(),
        };
    };
    let layers = sandbox
        .layers()
        .iter()
        .map(|l| LayerView {
            name: l.name.clone(),
            available: l.available,
            detail: l.detail.clone(),
        })
        .collect();
    let starts = state.host.runtime().sandbox_starts().unwrap_or(0);
    match sandbox.ready() {
        Ok(()) => SandboxView {
            state: "ready",
            icon: icons.take(Some("shield-check")),
            summary: format!(
                "Ready: every tool process runs in the sandbox ({starts} started so far)."
            ),
            layers,
        },
        Err(e) => SandboxView {
            state: "unavailable",
            icon: icons.take(Some("shield-alert")),
            summary: format!("Tools cannot run: {e}"),
            layers,
        },
    }
}
