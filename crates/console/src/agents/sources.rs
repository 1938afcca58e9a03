//! What the agent form offers: every tool set and MCP server the host has, by category
//! (A→Z, "Uncategorized" last, as the catalog shows them), each merged with the agent's
//! grant of it (switch, layer, a row per tool allowed or denied); sources the agent grants
//! that the host does not have (now) come last, so that saving keeps them.

use std::collections::{BTreeSet, HashSet};

use toolhost_store::{AgentSpec, GrantSpec};
use toolhost_toolsets::Owner;

use super::fields::{Source, allows, layer_value};
use crate::ConsoleState;
use crate::icons::Icons;

const UNCATEGORIZED: &str = "Uncategorized";
const MCP_SERVERS: &str = "MCP servers";
const MISSING: &str = "Granted, but not on this host now";

pub(crate) struct ToolRow {
    pub(crate) key: String,
    pub(crate) allowed: bool,
}

pub(crate) struct Card {
    /// For element ids: its place on the page.
    pub(crate) n: usize,
    /// The form's key of its source (`tool_set:ID`).
    pub(crate) key: String,
    pub(crate) kind: &'static str,
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) icon: &'static str,
    pub(crate) granted: bool,
    pub(crate) layer: &'static str,
    pub(crate) default_deny: bool,
    /// Its place among the agent's grants, when granted.
    pub(crate) pos: Option<usize>,
    pub(crate) tools: Vec<ToolRow>,
    /// Its tools are made per turn (none may be known now).
    pub(crate) factory: bool,
    pub(crate) enabled: usize,
}

pub(crate) struct Category {
    pub(crate) n: usize,
    pub(crate) name: String,
    pub(crate) cards: Vec<Card>,
    pub(crate) granted: usize,
}

/// The layers a grant may take, as the select offers them.
pub(crate) const LAYERS: &[(&str, &str)] = &[
    ("session", "Session"),
    ("search", "Search"),
    ("sub-agent", "Sub-agent"),
];

struct Offered {
    source: Source,
    name: String,
    category: String,
    description: String,
    icon: Option<String>,
    tools: Vec<String>,
    factory: bool,
}

async fn offered(state: &ConsoleState) -> Vec<Offered> {
    let Some(registry) = state.host.registry() else {
        return Vec::new();
    };
    // MCP servers' tools are known from a listing only: each listed concurrently, under
    // its own deadline (a failing one answers from its last good listing, or with none).
    let servers = registry.external_sources();
    let listings = futures::future::join_all(servers.iter().map(|s| s.list())).await;
    let mut all: Vec<Offered> = registry
        .tool_sets()
        .map(|e| Offered {
            source: match &e.owner {
                Owner::McpServer { name } => Source::McpServer(name.clone()),
                _ => Source::ToolSet(e.set.id.clone()),
            },
            name: e.set.name.clone(),
            category: if e.set.category.trim().is_empty() {
                UNCATEGORIZED.to_string()
            } else {
                e.set.category.clone()
            },
            description: e.set.description.clone(),
            icon: e.set.icon.clone(),
            tools: e.set.known_tools(),
            factory: matches!(e.set.tools, toolhost_toolsets::Tools::Factory(_)),
        })
        .collect();
    for (server, listing) in servers.iter().zip(listings) {
        let source = Source::McpServer(server.name().to_string());
        if all.iter().any(|o| o.source == source) {
            continue;
        }
        let mut tools: Vec<String> = listing.tools.keys().map(str::to_string).collect();
        tools.sort();
        all.push(Offered {
            source,
            name: server.name().to_string(),
            category: MCP_SERVERS.to_string(),
            description: match listing.warning {
                Some(w) => format!("{}: {w}", server.transport()),
                None => server.transport(),
            },
            icon: server.icon().map(str::to_string),
            tools,
            factory: true,
        });
    }
    all.sort_by_key(|o| {
        (
            o.category == UNCATEGORIZED,
            o.category.to_lowercase(),
            o.name.to_lowercase(),
        )
    });
    all
}

/// The form's categories for `spec`, and the grants it cannot show (a source granted
/// again in another layer), as JSON for a hidden field.
pub(crate) async fn categories(
    state: &ConsoleState,
    spec: &AgentSpec,
    icons: &mut Icons,
) -> (Vec<Category>, String) {
    let mut first: Vec<(Source, usize, &GrantSpec)> = Vec::new();
    let mut extra: Vec<&GrantSpec> = Vec::new();
    let mut seen = HashSet::new();
    for (i, g) in spec.grants.iter().enumerate() {
        match Source::of(g) {
            Some(s) if seen.insert(s.clone()) => first.push((s, i, g)),
            _ => extra.push(g),
        }
    }
    let mut offered = offered(state).await;
    for (source, _, _) in &first {
        if !offered.iter().any(|o| &o.source == source) {
            offered.push(Offered {
                name: source.id().to_string(),
                source: source.clone(),
                category: MISSING.to_string(),
                description: "The host has no such source now: it is kept while granted."
                    .to_string(),
                icon: Some("circle-alert".to_string()),
                tools: Vec::new(),
                factory: false,
            });
        }
    }
    let mut out: Vec<Category> = Vec::new();
    for (n, o) in offered.into_iter().enumerate() {
        let grant = first.iter().find(|(s, _, _)| *s == o.source);
        let mut keys: BTreeSet<String> = o.tools.into_iter().collect();
        if let Some((_, _, g)) = grant {
            keys.extend(g.rules.keys().cloned());
        }
        let tools: Vec<ToolRow> = keys
            .into_iter()
            .map(|key| ToolRow {
                allowed: grant.is_none_or(|(_, _, g)| allows(g, &key)),
                key,
            })
            .collect();
        let enabled = if grant.is_some() {
            tools.iter().filter(|t| t.allowed).count()
        } else {
            0
        };
        let card = Card {
            n,
            key: o.source.key(),
            kind: match o.source {
                Source::ToolSet(_) => "tool set",
                Source::McpServer(_) => "MCP server",
            },
            id: o.source.id().to_string(),
            name: o.name,
            description: o.description,
            icon: icons.take(o.icon.as_deref()),
            granted: grant.is_some(),
            layer: grant.map_or("session", |(_, _, g)| layer_value(g.layer)),
            default_deny: grant.is_some_and(|(_, _, g)| g.default == toolhost_store::Rule::Deny),
            pos: grant.map(|(_, i, _)| *i),
            tools,
            factory: o.factory,
            enabled,
        };
        match out.last_mut() {
            Some(c) if c.name == o.category => c.cards.push(card),
            _ => out.push(Category {
                n: out.len(),
                name: o.category,
                cards: vec![card],
                granted: 0,
            }),
        }
    }
    for c in &mut out {
        c.granted = c.cards.iter().filter(|s| s.granted).count();
    }
    let extra = if extra.is_empty() {
        String::new()
    } else {
        serde_json::to_string(&extra).unwrap_or_default()
    };
    (out, extra)
}
