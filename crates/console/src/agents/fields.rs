//! The agent form's fields, as posted: plain names a form without JavaScript submits, read
//! back into an `AgentSpec`. A source (tool set or MCP server) is keyed `tool_set:ID` or
//! `mcp_server:NAME`; per source the form sends whether it is granted (`grant`), its
//! layer, its default rule and original place (hidden), every tool row it listed
//! (`tool:KEY`, hidden) and the rows left allowed (`allow:KEY`, checkboxes): a row not
//! sent back as allowed is denied, so an unchecked box means something.

use std::collections::{BTreeMap, HashMap, HashSet};

use toolhost_store::{AgentSpec, GrantSpec, Rule};
use toolhost_toolsets::Layer;

/// A grant's source, as the form keys it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Source {
    /// A tool set, by id.
    ToolSet(String),
    /// An MCP server, by name.
    McpServer(String),
}

impl Source {
    /// `tool_set:ID` or `mcp_server:NAME`.
    pub(crate) fn key(&self) -> String {
        match self {
            Source::ToolSet(id) => format!("tool_set:{id}"),
            Source::McpServer(name) => format!("mcp_server:{name}"),
        }
    }

    pub(crate) fn parse(key: &str) -> Option<Source> {
        match key.split_once(':')? {
            ("tool_set", id) if !id.is_empty() => Some(Source::ToolSet(id.to_string())),
            ("mcp_server", name) if !name.is_empty() => Some(Source::McpServer(name.to_string())),
            _ => None,
        }
    }

    pub(crate) fn of(grant: &GrantSpec) -> Option<Source> {
        match (&grant.tool_set, &grant.mcp_server) {
            (Some(id), None) => Some(Source::ToolSet(id.clone())),
            (None, Some(name)) => Some(Source::McpServer(name.clone())),
            _ => None,
        }
    }

    /// The tool set's id or the server's name.
    pub(crate) fn id(&self) -> &str {
        match self {
            Source::ToolSet(id) | Source::McpServer(id) => id,
        }
    }

    /// How people read it: "tool set `time`".
    pub(crate) fn describe(&self) -> String {
        match self {
            Source::ToolSet(id) => format!("tool set `{id}`"),
            Source::McpServer(name) => format!("MCP server `{name}`"),
        }
    }

    fn grant(&self) -> GrantSpec {
        let (tool_set, mcp_server) = match self {
            Source::ToolSet(id) => (Some(id.clone()), None),
            Source::McpServer(name) => (None, Some(name.clone())),
        };
        GrantSpec {
            tool_set,
            mcp_server,
            ..GrantSpec::default()
        }
    }
}

/// A layer's form value.
pub(crate) fn layer_value(layer: Layer) -> &'static str {
    match layer {
        Layer::Session => "session",
        Layer::Search => "search",
        Layer::SubAgent => "sub-agent",
    }
}

fn parse_layer(text: &str) -> Layer {
    match text {
        "search" => Layer::Search,
        "sub-agent" => Layer::SubAgent,
        _ => Layer::Session,
    }
}

/// Whether `rule` (a tool's own, else the grant's default) lets `tool` through.
pub(crate) fn allows(grant: &GrantSpec, tool: &str) -> bool {
    grant.rules.get(tool).copied().unwrap_or(grant.default) == Rule::Allow
}

/// The form as posted.
#[derive(Debug, Default)]
pub(crate) struct Posted {
    /// The id field (a new agent's; an existing one's is its path).
    pub(crate) id: String,
    /// The version the form was loaded at (absent for a new agent).
    pub(crate) version: Option<i64>,
    /// The agent as the form was loaded (JSON), to tell on a conflict what changed since.
    pub(crate) base: Option<AgentSpec>,
    /// What the form says now.
    pub(crate) spec: AgentSpec,
}

/// Reads the posted pairs. Never fails: the store validates what is saved, and the form
/// shows its complaints beside the fields.
pub(crate) fn parse(pairs: &[(String, String)]) -> Posted {
    let mut one: HashMap<&str, &str> = HashMap::new();
    let mut granted: Vec<&str> = Vec::new();
    let mut listed: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut allowed: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (k, v) in pairs {
        let (k, v) = (k.as_str(), v.as_str());
        if k == "grant" {
            if !granted.contains(&v) {
                granted.push(v);
            }
        } else if let Some(src) = k.strip_prefix("tool:") {
            listed.entry(src).or_default().push(v);
        } else if let Some(src) = k.strip_prefix("allow:") {
            allowed.entry(src).or_default().insert(v);
        } else {
            // The first value of a single field wins.
            one.entry(k).or_insert(v);
        }
    }
    let text = |k: &str| one.get(k).map(|v| v.trim().to_string()).unwrap_or_default();
    let optional = |k: &str| Some(text(k)).filter(|v| !v.is_empty());
    let mut grants: Vec<(usize, usize, GrantSpec)> = Vec::new();
    for (i, key) in granted.into_iter().enumerate() {
        let Some(source) = Source::parse(key) else {
            continue;
        };
        let mut grant = source.grant();
        grant.layer = parse_layer(one.get(format!("layer:{key}").as_str()).unwrap_or(&""));
        grant.default = match one.get(format!("default:{key}").as_str()) {
            Some(&"deny") => Rule::Deny,
            _ => Rule::Allow,
        };
        let on = allowed.get(key);
        let mut rules = BTreeMap::new();
        for tool in listed.get(key).into_iter().flatten() {
            let allow = on.is_some_and(|s| s.contains(tool));
            // Only what differs from the default is a rule: the same turn, fewer rules.
            match (grant.default, allow) {
                (Rule::Allow, false) => drop(rules.insert((*tool).to_string(), Rule::Deny)),
                (Rule::Deny, true) => drop(rules.insert((*tool).to_string(), Rule::Allow)),
                _ => {}
            }
        }
        grant.rules = rules;
        // A source keeps its place among the grants it was loaded with (precedence);
        // new ones follow, in the form's order.
        let pos = one
            .get(format!("pos:{key}").as_str())
            .and_then(|p| p.parse::<usize>().ok())
            .unwrap_or(usize::MAX);
        grants.push((pos, i, grant));
    }
    grants.sort_by_key(|(pos, i, _)| (*pos, *i));
    let mut spec = AgentSpec {
        name: text("name"),
        description: one
            .get("description")
            .map(|d| d.trim_end().to_string())
            .unwrap_or_default(),
        icon: optional("icon"),
        workspace: optional("workspace"),
        org: optional("org"),
        grants: grants.into_iter().map(|(_, _, g)| g).collect(),
    };
    // Grants the form cannot show (a source granted twice, in other layers) ride along.
    if let Some(extra) = one
        .get("extra")
        .and_then(|e| serde_json::from_str::<Vec<GrantSpec>>(e).ok())
    {
        spec.grants.extend(extra);
    }
    Posted {
        id: text("id"),
        version: one.get("version").and_then(|v| v.trim().parse().ok()),
        base: one
            .get("base")
            .and_then(|b| serde_json::from_str::<AgentSpec>(b).ok()),
        spec,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn unchecked_rows_are_denied_and_places_are_kept() {
        let p = parse(&pairs(&[
            ("id", " helper "),
            ("name", "Helper"),
            ("icon", ""),
            ("version", "3"),
            ("grant", "tool_set:new"),
            ("grant", "tool_set:time"),
            ("pos:tool_set:time", "0"),
            ("layer:tool_set:time", "search"),
            ("tool:tool_set:time", "now"),
            ("tool:tool_set:time", "convert"),
            ("allow:tool_set:time", "now"),
            ("grant", "mcp_server:srv"),
            ("default:mcp_server:srv", "deny"),
            ("tool:mcp_server:srv", "srv__a"),
            ("tool:mcp_server:srv", "srv__b"),
            ("allow:mcp_server:srv", "srv__b"),
            ("tool:tool_set:off", "x"),
            ("grant", "bogus"),
        ]));
        assert_eq!((p.id.as_str(), p.version), ("helper", Some(3)));
        assert_eq!(p.spec.icon, None);
        let g = &p.spec.grants;
        assert_eq!(g.len(), 3, "{g:?}");
        assert_eq!(g[0].tool_set.as_deref(), Some("time"));
        assert_eq!(g[0].layer, Layer::Search);
        assert_eq!(g[0].rules, BTreeMap::from([("convert".into(), Rule::Deny)]));
        assert_eq!(g[1].tool_set.as_deref(), Some("new"));
        assert_eq!(g[2].mcp_server.as_deref(), Some("srv"));
        assert_eq!(g[2].default, Rule::Deny);
        assert_eq!(g[2].rules, BTreeMap::from([("srv__b".into(), Rule::Allow)]));
        assert!(allows(&g[2], "srv__b") && !allows(&g[2], "srv__a"));
    }
}
