//! `toolhost.toml`: the operator's configuration.
//!
//! Found at `--config PATH`, else `$TOOLHOST_CONFIG`, else `./toolhost.toml`; absent means
//! every default. Sections: `[runtime]` (limits and executables), `[env]` (the variables
//! tools get, such as `OFFICER_APIFY_TOKEN`), `[resources.NAME]` (passed to tools as the
//! JSON object `OFFICER_RESOURCES`), `[sandbox]` (isolation of tool processes); for tool
//! sets (see `toolhost_toolsets::config`): `[agents.ID]`, `[mcp_servers.NAME]`,
//! `[plugins.NAME]`, `[turns]`, `[tool_sets.ID]`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use toolhost_runtime::RuntimeConfig;
use toolhost_runtime::sandbox::SandboxConfig;
use toolhost_toolsets::{AgentConfig, McpServerConfig, SetSettings, ToolsetsConfig, TurnSettings};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub runtime: RuntimeConfig,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub resources: toml::Table,
    #[serde(default)]
    pub sandbox: SandboxConfig,
    pub agents: BTreeMap<String, AgentConfig>,
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    #[serde(default)]
    pub plugins: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub turns: TurnSettings,
    #[serde(default)]
    pub tool_sets: BTreeMap<String, SetSettings>,
}

impl ConfigFile {
    pub fn load(explicit: Option<&Path>) -> Result<ConfigFile> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => std::env::var_os("TOOLHOST_CONFIG")
                .map(PathBuf::from)
                .or_else(|| Some(PathBuf::from("toolhost.toml")).filter(|p| p.is_file())),
        };
        let Some(path) = path else {
            return Ok(ConfigFile::default());
        };
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<ConfigFile> {
        let mut config: ConfigFile = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let before = &text[..s.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                    format!(":{line}:{col}")
                })
                .unwrap_or_default();
            anyhow::anyhow!("{}{at}: {}", path.display(), e.message())
        })?;
        for key in config.env.keys() {
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                bail!(
                    "{}: [env] has an invalid variable name {key:?}",
                    path.display()
                );
            }
        }
        config.runtime.sandbox = config.sandbox.clone();
        Ok(config)
    }

    /// The tool-set sections, for booting a `Registry`.
    pub fn toolsets(&self) -> ToolsetsConfig {
        ToolsetsConfig {
            agents: self.agents.clone(),
            mcp_servers: self.mcp_servers.clone(),
            plugins: self.plugins.clone(),
            turns: self.turns.clone(),
            tool_sets: self.tool_sets.clone(),
        }
    }

    /// `[resources]` as the JSON object tools read from `OFFICER_RESOURCES`.
    pub fn resources_json(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(&self.resources) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_section_and_reports_errors_with_lines() {
        let c = ConfigFile::parse(
            Path::new("t.toml"),
            "[runtime]\ntimeout = 30\nmax_workers = 2\n\n[env]\nPI_SEARXNG_URL = \"http://127.0.0.1:8888\"\n\n[resources.ocr]\nendpoint = \"http://x\"\n",
        )
        .unwrap();
        assert_eq!(c.runtime.timeout.as_secs(), 30);
        assert_eq!(c.runtime.max_workers, 2);
        assert_eq!(c.env["PI_SEARXNG_URL"], "http://127.0.0.1:8888");
        assert_eq!(c.resources_json()["ocr"]["endpoint"], "http://x");
        let e =
            ConfigFile::parse(Path::new("t.toml"), "[runtime]\ntimeout = \"soon\"\n").unwrap_err();
        assert!(e.to_string().starts_with("t.toml:2:11: "), "{e}");
        let e = ConfigFile::parse(Path::new("t.toml"), "[runtme]\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `runtme`"), "{e}");
    }

    #[test]
    fn parses_agents_servers_plugins_and_turns() {
        let c = ConfigFile::parse(
            Path::new("t.toml"),
            r#"
[agents.helper]
grants = [
  { tool_set = "time" },
  { mcp_server = "docs", layer = "search", deny = ["docs__delete"] },
]

[mcp_servers.docs]
command = ["node", "server.mjs"]
timeout = 2.5

[plugins.web]
allow_private = true

[turns]
resolve_timeout = 5

[tool_sets.time]
resolve_timeout = 1
"#,
        )
        .unwrap();
        let t = c.toolsets();
        let g = &t.agents["helper"].grants;
        assert_eq!(g[0], toolhost_toolsets::Grant::tool_set("time"));
        assert_eq!(g[1].layer, toolhost_toolsets::Layer::Search);
        assert_eq!(g[1].deny, ["docs__delete"]);
        assert_eq!(t.mcp_servers["docs"].timeout.unwrap().as_millis(), 2500);
        assert_eq!(t.plugins["web"]["allow_private"], true);
        assert_eq!(t.turns.resolve_timeout.as_secs(), 5);
        assert_eq!(t.tool_sets["time"].resolve_timeout.unwrap().as_secs(), 1);
        let e = ConfigFile::parse(
            Path::new("t.toml"),
            "[agents.a]\ngrants = [{ tool_set = \"x\", mcp_server = \"y\" }]\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("exactly one of"), "{e}");
    }
}
