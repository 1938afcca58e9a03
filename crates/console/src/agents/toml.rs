//! An agent as TOML in toolhost.toml's own shape (`[agents.ID]`, the resolver's
//! `AgentConfig`, as `toolhost export` writes it): exported from any agent, imported into
//! the new-agent form (never saved until the user saves).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolhost_store::AgentSpec;
use toolhost_toolsets::AgentConfig;

/// The document: toolhost.toml's `[agents]` section and nothing else.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    agents: BTreeMap<String, AgentConfig>,
}

/// `[agents.ID]` of `spec`, with a comment saying where it came from.
pub(crate) fn export(id: &str, spec: &AgentSpec) -> Result<String, String> {
    let doc = Doc {
        agents: BTreeMap::from([(id.to_string(), spec.to_config())]),
    };
    let text = toml::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    Ok(format!(
        "# Agent `{id}` as a toolhost.toml section: paste it into toolhost.toml, or import it\n\
         # in the console (Agents → New agent) or with `toolhost import`.\n{text}"
    ))
}

/// Why a text is not one agent: the message, and where (line and column, from 1).
#[derive(Debug, PartialEq)]
pub(crate) struct ImportError {
    pub(crate) message: String,
    pub(crate) at: Option<(usize, usize)>,
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some((line, col)) => write!(f, "line {line}, column {col}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

fn whole(message: impl Into<String>) -> ImportError {
    ImportError {
        message: message.into(),
        at: None,
    }
}

/// The one `[agents.ID]` of `text`: its id and the agent as the form edits it.
pub(crate) fn import(text: &str) -> Result<(String, AgentSpec), ImportError> {
    let doc: Doc = toml::from_str(text).map_err(|e| ImportError {
        message: e.message().trim().to_string(),
        at: e.span().map(|s| {
            let before = &text[..s.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            (line, col)
        }),
    })?;
    let mut agents = doc.agents.into_iter();
    match (agents.next(), agents.next()) {
        (Some((id, config)), None) => {
            let spec = AgentSpec::from_config(&id, &config);
            Ok((id, spec))
        }
        (None, _) => Err(whole("there is no [agents.ID] section")),
        (Some(_), Some(_)) => Err(whole(
            "there is more than one [agents.ID] section: import one agent at a time",
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use toolhost_host::ConfigFile;
    use toolhost_store::{GrantSpec, Rule};
    use toolhost_toolsets::Layer;

    use super::*;

    #[test]
    fn an_export_is_toolhost_toml_and_imports_back() {
        let spec = AgentSpec {
            name: "Helper \"quoted\"".into(),
            description: "Tells the time.\nAnd more.".into(),
            icon: Some("clock".into()),
            workspace: Some("w1".into()),
            org: None,
            grants: vec![
                GrantSpec {
                    tool_set: Some("time".into()),
                    layer: Layer::Search,
                    rules: BTreeMap::from([("now".into(), Rule::Deny)]),
                    ..GrantSpec::default()
                },
                GrantSpec {
                    mcp_server: Some("srv".into()),
                    default: Rule::Deny,
                    rules: BTreeMap::from([("srv__a".into(), Rule::Allow)]),
                    ..GrantSpec::default()
                },
            ],
        };
        let text = export("helper", &spec).unwrap();
        // toolhost.toml's own parser takes it as the agent.
        let config = ConfigFile::parse(Path::new("toolhost.toml"), &text).unwrap();
        let parsed = AgentSpec::from_config("helper", &config.agents["helper"]);
        assert_eq!(parsed, spec, "{text}");
        assert_eq!(import(&text).unwrap(), ("helper".to_string(), spec));
    }

    #[test]
    fn import_errors_say_where() {
        let e = import(
            "[agents.a]\nname = \"A\"\ngrants = [{ tool_set = \"x\", mcp_server = \"y\" }]\n",
        )
        .unwrap_err();
        assert_eq!(e.at.map(|a| a.0), Some(3), "{e}");
        let e = import("[agents.a]\nnmae = \"A\"\n").unwrap_err();
        assert_eq!(e.at, Some((2, 1)), "{e}");
        assert!(e.message.contains("nmae"), "{e}");
        assert!(import("").is_err());
        let e = import("[agents]\n").unwrap_err();
        assert!(e.message.contains("no [agents.ID]"), "{e}");
        let e = import("[agents.a]\n[agents.b]\n").unwrap_err();
        assert!(e.message.contains("more than one"), "{e}");
    }
}
