//! `/plugins`: where the tools come from: the plugins (loaded or not, and why), the tool
//! roots with their tool counts, the MCP servers with their health, and every finding the
//! catalog has about the tool folders (a tool kept out, and why).

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use toolhost_catalog::RootOrigin;
use toolhost_toolsets::Gating;

use crate::catalog::{HealthView, health};
use crate::icons::Icons;
use crate::layout::Layout;
use crate::session::Signed;
use crate::{ConsoleState, page};

/// Findings listed at most (the rest are counted).
const MAX_FINDINGS: usize = 200;

pub(crate) fn routes() -> Router<ConsoleState> {
    Router::new().route("/plugins", get(index))
}

pub(crate) struct PluginView {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) api_version: String,
    pub(crate) origin: &'static str,
    /// A third-party plugin's entry file (empty for a core plugin).
    pub(crate) entry: String,
    /// What boot noticed (tools left out, contributions that are not tool sets).
    pub(crate) notes: Vec<String>,
    pub(crate) gating: &'static str,
    pub(crate) loaded: bool,
    pub(crate) tool_sets: Vec<String>,
}

pub(crate) struct RootView {
    pub(crate) path: String,
    pub(crate) origin: String,
    pub(crate) tools: usize,
}

pub(crate) struct SourceView {
    pub(crate) name: String,
    pub(crate) transport: String,
    pub(crate) health: HealthView,
}

pub(crate) struct FindingView {
    pub(crate) severity: String,
    pub(crate) code: String,
    pub(crate) text: String,
}

#[derive(Template)]
#[template(path = "sources.html")]
struct SourcesPage {
    layout: Layout,
    plugins: Vec<PluginView>,
    roots: Vec<RootView>,
    servers: Vec<SourceView>,
    findings: Vec<FindingView>,
    more_findings: usize,
}

fn origin(o: &RootOrigin) -> String {
    match o {
        RootOrigin::Flag => "--tools-dir".into(),
        RootOrigin::Env => "PI_TOOLS_DIRS".into(),
        RootOrigin::DataGlobal => "DATA_PATH/tools".into(),
        RootOrigin::DataUser { user } => format!("{user}'s own tools"),
    }
}

async fn index(State(state): State<ConsoleState>, who: Signed) -> Response {
    let mut icons = Icons::default();
    for name in ["puzzle", "folder", "server", "triangle-alert"] {
        icons.take(Some(name));
    }
    let (plugins, servers) = match state.host.registry() {
        Some(registry) => (
            registry
                .plugins()
                .iter()
                .map(|p| PluginView {
                    name: p.name.clone(),
                    version: p.version.clone().unwrap_or_default(),
                    api_version: p.api_version.map(|v| v.to_string()).unwrap_or_default(),
                    origin: p.origin,
                    entry: p
                        .entry
                        .as_ref()
                        .map(|e| e.display().to_string())
                        .unwrap_or_default(),
                    notes: p.notes.clone(),
                    gating: match p.gating {
                        Gating::AlwaysOn => "always on",
                        Gating::Enabled => "named in TOOLHOST_PLUGINS",
                        Gating::Disabled => "not named in TOOLHOST_PLUGINS: not loaded",
                    },
                    loaded: !matches!(p.gating, Gating::Disabled),
                    tool_sets: p.tool_sets.clone(),
                })
                .collect(),
            registry
                .external_sources()
                .into_iter()
                .map(|s| SourceView {
                    name: s.name().to_string(),
                    transport: s.transport(),
                    health: health(s.health()),
                })
                .collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    let (roots, findings, more_findings) = {
        let catalog = state.host.catalog().read();
        let roots = catalog
            .roots()
            .iter()
            .enumerate()
            .map(|(i, r)| RootView {
                path: r.path.display().to_string(),
                origin: origin(&r.origin),
                tools: catalog.tools_in_root(i).count(),
            })
            .collect();
        let all = catalog.diagnostics();
        let more = all.len().saturating_sub(MAX_FINDINGS);
        let findings = all
            .into_iter()
            .take(MAX_FINDINGS)
            .map(|d| FindingView {
                severity: d.severity.to_string(),
                code: d.code.to_string(),
                text: d.to_string(),
            })
            .collect();
        (roots, findings, more)
    };
    let layout = Layout::new(&who.caller, "/plugins", "Plugins and sources", icons);
    page::html(
        StatusCode::OK,
        &SourcesPage {
            layout,
            plugins,
            roots,
            servers,
            findings,
            more_findings,
        },
    )
}
