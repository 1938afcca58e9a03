//! What differs between two versions of an agent, in sentences: what the conflict banner
//! shows (the other person's change, and how the form's edits differ from it), so that
//! neither change is lost without the user seeing it.

use std::collections::BTreeSet;

use toolhost_store::{AgentSpec, GrantSpec, Rule};

use super::fields::{Source, layer_value};

fn quoted(v: Option<&str>) -> String {
    match v {
        Some(v) if !v.is_empty() => format!("“{v}”"),
        _ => "none".to_string(),
    }
}

fn rule_word(r: Rule) -> &'static str {
    match r {
        Rule::Allow => "allowed",
        Rule::Deny => "denied",
    }
}

/// The first grant of each source (the form shows one per source).
fn by_source(spec: &AgentSpec) -> Vec<(Source, &GrantSpec)> {
    let mut seen = BTreeSet::new();
    spec.grants
        .iter()
        .filter_map(|g| Source::of(g).map(|s| (s, g)))
        .filter(|(s, _)| seen.insert(s.clone()))
        .collect()
}

/// The changes that turn `from` into `to`, one sentence each, fields first.
pub(crate) fn changes(from: &AgentSpec, to: &AgentSpec) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |label: &str, a: Option<&str>, b: Option<&str>| {
        if a.unwrap_or("") != b.unwrap_or("") {
            out.push(format!("{label}: {} → {}", quoted(a), quoted(b)));
        }
    };
    field("Name", Some(&from.name), Some(&to.name));
    field("Icon", from.icon.as_deref(), to.icon.as_deref());
    field(
        "Workspace",
        from.workspace.as_deref(),
        to.workspace.as_deref(),
    );
    field("Organisation", from.org.as_deref(), to.org.as_deref());
    if from.description != to.description {
        out.push(format!(
            "Description: now {}",
            quoted(Some(&to.description))
        ));
    }
    let before = by_source(from);
    let after = by_source(to);
    for (source, _) in &before {
        if !after.iter().any(|(s, _)| s == source) {
            out.push(format!("No longer grants {}", source.describe()));
        }
    }
    for (source, g) in &after {
        let Some((_, old)) = before.iter().find(|(s, _)| s == source) else {
            let denied: Vec<&str> = g
                .rules
                .iter()
                .filter(|(_, r)| **r == Rule::Deny)
                .map(|(k, _)| k.as_str())
                .collect();
            let mut line = format!("Grants {}", source.describe());
            if !denied.is_empty() {
                line.push_str(&format!(" (denied: {})", denied.join(", ")));
            }
            out.push(line);
            continue;
        };
        let what = source.describe();
        if old.layer != g.layer {
            out.push(format!(
                "{what}: layer {} → {}",
                layer_value(old.layer),
                layer_value(g.layer)
            ));
        }
        if old.default != g.default {
            out.push(format!(
                "{what}: tools without a rule now {}",
                rule_word(g.default)
            ));
        }
        let keys: BTreeSet<&String> = old.rules.keys().chain(g.rules.keys()).collect();
        for key in keys {
            let was = old.rules.get(key).copied().unwrap_or(old.default);
            let now = g.rules.get(key).copied().unwrap_or(g.default);
            if was != now {
                out.push(format!("{what}: `{key}` now {}", rule_word(now)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use toolhost_toolsets::Layer;

    use super::*;

    fn set(id: &str) -> GrantSpec {
        GrantSpec {
            tool_set: Some(id.into()),
            ..GrantSpec::default()
        }
    }

    #[test]
    fn fields_grants_layers_and_rules() {
        let base = AgentSpec {
            name: "Helper".into(),
            icon: Some("bot".into()),
            grants: vec![set("time"), set("units")],
            ..AgentSpec::default()
        };
        let mut theirs = base.clone();
        theirs.name = "Helper 2".into();
        theirs.description = "Tells the time".into();
        theirs.grants[0].rules = BTreeMap::from([("now".into(), Rule::Deny)]);
        theirs.grants[0].layer = Layer::Search;
        theirs.grants.remove(1);
        theirs.grants.push(GrantSpec {
            mcp_server: Some("srv".into()),
            rules: BTreeMap::from([("srv__x".into(), Rule::Deny)]),
            ..GrantSpec::default()
        });
        assert_eq!(
            changes(&base, &theirs),
            [
                "Name: “Helper” → “Helper 2”",
                "Description: now “Tells the time”",
                "No longer grants tool set `units`",
                "tool set `time`: layer session → search",
                "tool set `time`: `now` now denied",
                "Grants MCP server `srv` (denied: srv__x)",
            ]
        );
        assert!(changes(&theirs, &theirs).is_empty());
        // A rule equal to the default is no change.
        let mut same = base.clone();
        same.grants[1].rules = BTreeMap::from([("x".into(), Rule::Allow)]);
        assert!(changes(&base, &same).is_empty());
    }
}
