//! `toolhost.toml`: the operator's configuration.
//!
//! Found at `--config PATH`, else `$TOOLHOST_CONFIG`, else `./toolhost.toml`; absent means
//! every default. Sections: `[runtime]` (limits and executables), `[env]` (the variables
//! tools get, such as `OFFICER_APIFY_TOKEN`), `[resources.NAME]` (passed to tools as the
//! JSON object `OFFICER_RESOURCES`), `[sandbox]` (isolation of tool processes), `[serve]`
//! (how `toolhost serve` listens, and its users' tokens); for tool sets (see
//! `toolhost_toolsets::config`): `[agents.ID]`, `[mcp_servers.NAME]`, `[plugins.NAME]`,
//! `[turns]`, `[tool_sets.ID]`.

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
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    #[serde(default)]
    pub plugins: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub turns: TurnSettings,
    #[serde(default)]
    pub tool_sets: BTreeMap<String, SetSettings>,
    #[serde(default)]
    pub serve: ServeConfig,
}

/// `[serve]`: how `toolhost serve` listens and whom it lets in.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    /// `--listen` overrides it.
    pub listen: Option<String>,
    /// `Host` values accepted besides loopback names (for a server behind a hostname).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted besides loopback ones.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// `[[serve.tokens]]`: with none, one default user and loopback only.
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
}

/// One bearer token: only its SHA-256 is stored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// The user (email) requests with this token act as.
    pub user: String,
    /// `toolhost token hash` prints it.
    pub sha256: String,
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
        for (i, t) in config.serve.tokens.iter().enumerate() {
            let at = format!("{}: [[serve.tokens]] #{}", path.display(), i + 1);
            if !toolhost_mcp::tokens::is_token_hash(&t.sha256) {
                bail!(
                    "{at}: sha256 must be 64 hex digits (the token's SHA-256, from `toolhost token hash`), not the token itself"
                );
            }
            toolhost_catalog::validate_user(&t.user).map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
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

    #[test]
    fn serve_tokens_hold_hashes_of_valid_users() {
        let hash = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let ok = format!(
            "[serve]\nlisten = \"0.0.0.0:7878\"\n[[serve.tokens]]\nuser = \"ada@example.com\"\nsha256 = \"{hash}\"\n"
        );
        let c = ConfigFile::parse(Path::new("t.toml"), &ok).unwrap();
        assert_eq!(c.serve.tokens[0].user, "ada@example.com");
        let plain = ok.replace(hash, "abc");
        let e = ConfigFile::parse(Path::new("t.toml"), &plain).unwrap_err();
        assert!(e.to_string().contains("#1: sha256 must be 64 hex"), "{e}");
        let escape = ok.replace("ada@example.com", "../etc");
        assert!(ConfigFile::parse(Path::new("t.toml"), &escape).is_err());
        // F4: the user `tools` would own the global tool root, whatever its case.
        for reserved in ["tools", "Tools."] {
            let e = ConfigFile::parse(
                Path::new("t.toml"),
                &ok.replace("ada@example.com", reserved),
            )
            .unwrap_err();
            assert!(e.to_string().contains("#1: user name"), "{e}");
        }
    }
}
