//! `toolhost.toml`: the operator's configuration.
//!
//! Found at `--config PATH`, else `$TOOLHOST_CONFIG`, else `./toolhost.toml`; absent means
//! every default. Sections: `[runtime]` (limits and executables), `[env]` (the variables
//! tools get, such as `OFFICER_APIFY_TOKEN`), `[resources.NAME]` (passed to tools as the
//! JSON object `OFFICER_RESOURCES`), `[sandbox]` (isolation of tool processes), `[serve]`
//! (how `toolhost serve` listens, and its users' tokens), `[store]`, `[console]` (the web
//! console's settings); for tool sets (see
//! `toolhost_toolsets::ToolsetsConfig`): `[agents.ID]`, `[plugins.NAME]`, `[turns]`,
//! `[tool_sets.ID]`; and `[mcp_servers.NAME]`, which belongs to the MCP client
//! (`toolhost_mcp_client::McpServerConfig`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toolhost_mcp_client::McpServerConfig;
use toolhost_runtime::RuntimeConfig;
use toolhost_sandbox::SandboxConfig;
use toolhost_toolsets::{AgentConfig, SetSettings, ToolsetsConfig, TurnSettings};

/// What is wrong with a configuration file, and where.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not TOML of the expected shape.
    #[error("{}{at}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// `:LINE:COLUMN` when the parser knows where, else empty.
        at: String,
        /// The parser's message.
        message: String,
    },
    /// The file parses, but a value is not allowed.
    #[error("{}: {what}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The section and key at fault, and what is wrong with them.
        what: String,
    },
}

type Result<T> = std::result::Result<T, ConfigError>;

/// Every section of `toolhost.toml`; absent sections take their defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[runtime]`: limits and executables.
    #[serde(default)]
    pub runtime: RuntimeConfig,
    /// `[env]`: the variables tools get.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `[resources.NAME]`: passed to tools as the JSON object `OFFICER_RESOURCES`.
    #[serde(default)]
    pub resources: toml::Table,
    /// `[sandbox]`: isolation of tool processes.
    #[serde(default)]
    pub sandbox: SandboxConfig,
    /// `[agents.ID]`: what each agent is granted.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// `[mcp_servers.NAME]`: external MCP servers as tool sources.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `[plugins.NAME]`: each plugin's settings.
    #[serde(default)]
    pub plugins: BTreeMap<String, serde_json::Value>,
    /// `[turns]`: per-turn resolution limits.
    #[serde(default)]
    pub turns: TurnSettings,
    /// `[tool_sets.ID]`: per-tool-set settings.
    #[serde(default)]
    pub tool_sets: BTreeMap<String, SetSettings>,
    /// `[serve]`: how the HTTP surfaces listen and whom they let in.
    #[serde(default)]
    pub serve: ServeConfig,
    /// `[store]`: where agents, tokens, secrets and the call log persist.
    #[serde(default)]
    pub store: StoreConfig,
    /// `[console]`: the web console's settings.
    #[serde(default)]
    pub console: ConsoleConfig,
    /// `[cluster]`: this node's place in a fleet (gateways and runners on NATS).
    #[serde(default)]
    pub cluster: crate::cluster::ClusterConfig,
}

/// `[console]`: the web console's settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleConfig {
    /// The agent form warns when an agent would get more tools than this (default 40:
    /// models choose worse among many tools).
    pub warn_tools_above: Option<usize>,
}

impl ConsoleConfig {
    /// The agent form's tool-count threshold.
    pub fn warn_tools_above(&self) -> usize {
        self.warn_tools_above.unwrap_or(40)
    }
}

/// `[store]`: the persistent store. `--database` and `TOOLHOST_DATABASE_URL` override
/// `url`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// A `postgres://` URL, or an SQLite file (created on first use).
    pub url: Option<String>,
    /// The key that seals secrets (32 bytes, base64, mode 0600): default beside an
    /// SQLite file (`FILE.key`), else `DATA_HOME/store.key`. `TOOLHOST_SECRET_KEY`
    /// overrides it.
    pub key_file: Option<PathBuf>,
    /// Days the call log keeps a call (default 90; 0 keeps them all).
    pub call_retention_days: Option<u64>,
}

/// `[serve]`: how the HTTP surfaces listen and whom they let in. Unset limits take the
/// surface's defaults.
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
    /// The URL clients reach `serve` at (`https://tools.example.com`, behind a proxy):
    /// the base of each endpoint's canonical URI, the audience of OAuth access tokens.
    /// Kept in canonical form; `serve` sets it from the bound address when unset.
    pub public_url: Option<String>,
    /// `[serve.oauth]`: the OAuth issuers whose access tokens are accepted.
    #[serde(default)]
    pub oauth: crate::oauth::OAuthConfig,
    /// Connections open at once; a newcomer beyond takes an idle one's place.
    pub max_connections: Option<usize>,
    /// Connections open at once from one client address (an IPv6 /64).
    pub max_connections_per_ip: Option<usize>,
    /// Seconds from a request's first byte to the end of its headers.
    #[serde(default, with = "toolhost_spec::seconds::opt_secs")]
    pub header_timeout: Option<Duration>,
    /// Seconds from the end of a request's headers to the end of its body.
    #[serde(default, with = "toolhost_spec::seconds::opt_secs")]
    pub body_timeout: Option<Duration>,
    /// Seconds a connection stays open without a request.
    #[serde(default, with = "toolhost_spec::seconds::opt_secs")]
    pub idle_timeout: Option<Duration>,
    /// 2025-11-25 sessions of all users together.
    pub max_sessions: Option<usize>,
    /// Sessions of one user; a new one ends their least recently used.
    pub max_sessions_per_user: Option<usize>,
    /// Seconds after which a session without requests ends.
    #[serde(default, with = "toolhost_spec::seconds::opt_secs")]
    pub session_idle_timeout: Option<Duration>,
}

impl ServeConfig {
    /// The limits that are zero (none may be).
    fn zero_limits(&self) -> Vec<&'static str> {
        let counts = [
            ("max_connections", self.max_connections),
            ("max_connections_per_ip", self.max_connections_per_ip),
            ("max_sessions", self.max_sessions),
            ("max_sessions_per_user", self.max_sessions_per_user),
        ];
        let times = [
            ("header_timeout", self.header_timeout),
            ("body_timeout", self.body_timeout),
            ("idle_timeout", self.idle_timeout),
            ("session_idle_timeout", self.session_idle_timeout),
        ];
        counts
            .into_iter()
            .filter(|(_, v)| *v == Some(0))
            .map(|(k, _)| k)
            .chain(
                times
                    .into_iter()
                    .filter(|(_, v)| v.is_some_and(|d| d.is_zero()))
                    .map(|(k, _)| k),
            )
            .collect()
    }
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
    /// Reads `explicit`, else `$TOOLHOST_CONFIG`, else `./toolhost.toml` if it exists;
    /// none of them means every default.
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
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        Self::parse(&path, &text)
    }

    /// Parses and checks `text`, read from `path` (named in every error).
    pub fn parse(path: &Path, text: &str) -> Result<ConfigFile> {
        let invalid = |what: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            what,
        };
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
            ConfigError::Syntax {
                path: path.to_path_buf(),
                at,
                message: e.message().to_string(),
            }
        })?;
        for key in config.env.keys() {
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                return Err(invalid(format!(
                    "[env] has an invalid variable name {key:?}"
                )));
            }
        }
        check_environment_size(path, &config)?;
        if let Some(key) = config.serve.zero_limits().first() {
            return Err(invalid(format!("[serve] {key} must be more than 0")));
        }
        crate::oauth::check(&mut config.serve.public_url, &config.serve.oauth).map_err(invalid)?;
        for (i, t) in config.serve.tokens.iter().enumerate() {
            let at = format!("[[serve.tokens]] #{}", i + 1);
            if !crate::tokens::is_token_hash(&t.sha256) {
                return Err(invalid(format!(
                    "{at}: sha256 must be 64 hex digits (the token's SHA-256, from `toolhost token hash`), not the token itself"
                )));
            }
            toolhost_catalog::validate_user(&t.user).map_err(|e| invalid(format!("{at}: {e}")))?;
        }
        config.runtime.sandbox = config.sandbox.clone();
        config
            .runtime
            .validate()
            .map_err(|e| invalid(e.to_string()))?;
        Ok(config)
    }

    /// The tool-set sections, for booting a `Registry` (`[mcp_servers]` is not one: the
    /// MCP client builds its sources from it).
    pub fn toolsets(&self) -> ToolsetsConfig {
        ToolsetsConfig {
            agents: self.agents.clone(),
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

/// The kernel refuses to start a process with an environment string over 128 KiB
/// (`MAX_ARG_STRLEN`), and the whole environment shares `execve`'s argument space: too
/// large an `[env]` would fail every call with an obscure error, so it is refused here.
const MAX_ENV_STRING: usize = 128 * 1024;
const MAX_ENV_TOTAL: usize = 1024 * 1024;

fn check_environment_size(path: &Path, config: &ConfigFile) -> Result<()> {
    let resources = serde_json::Value::Object(config.resources_json()).to_string();
    let strings = config
        .env
        .iter()
        .map(|(k, v)| (format!("[env] {k}"), k.len() + v.len() + 2))
        .chain(std::iter::once((
            "[resources] (as OFFICER_RESOURCES)".to_string(),
            "OFFICER_RESOURCES".len() + resources.len() + 2,
        )));
    let mut total = 0;
    for (what, bytes) in strings {
        if bytes > MAX_ENV_STRING {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                what: format!(
                    "{what} is {bytes} bytes; one environment variable may hold at most {MAX_ENV_STRING} bytes (put large data in a file the tool reads)"
                ),
            });
        }
        total += bytes;
    }
    if total > MAX_ENV_TOTAL {
        return Err(ConfigError::Invalid {
            path: path.to_path_buf(),
            what: format!(
                "[env] and [resources] hold {total} bytes in all; tools' environment may hold at most {MAX_ENV_TOTAL} bytes"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
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
        assert_eq!(c.mcp_servers["docs"].timeout.unwrap().as_millis(), 2500);
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

    #[test]
    fn serve_oauth_lists_issuers_and_the_public_url_is_canonical() {
        let c = ConfigFile::parse(
            Path::new("t.toml"),
            r#"
[serve]
public_url = "https://Tools.Example.com/"

[serve.oauth]
resource_name = "Our tools"

[[serve.oauth.issuers]]
issuer = "https://id.example.com/realms/t1"
audience = "api://toolhost"
user_claim = "email"
role = "operator"
role_claim = "roles"
algorithms = ["RS256", "ES256"]

[[serve.oauth.issuers]]
issuer = "http://127.0.0.1:9000"
jwks_uri = "http://127.0.0.1:9000/keys"
"#,
        )
        .unwrap();
        assert_eq!(
            c.serve.public_url.as_deref(),
            Some("https://tools.example.com")
        );
        let [first, second] = &c.serve.oauth.issuers[..] else {
            panic!("{:?}", c.serve.oauth.issuers);
        };
        assert_eq!(first.user_claim, "email");
        assert_eq!(first.role, crate::Role::Operator);
        assert_eq!(second.user_claim, "sub");
        assert_eq!(second.role, crate::Role::Viewer);
        assert_eq!(
            second.jwks_uri.as_deref(),
            Some("http://127.0.0.1:9000/keys")
        );
        for (bad, says) in [
            ("[serve]\npublic_url = \"tools\"\n", "[serve] public_url"),
            (
                "[[serve.oauth.issuers]]\nissuer = \"http://id.example.com\"\n",
                "[[serve.oauth.issuers]] #1: issuer",
            ),
            (
                "[[serve.oauth.issuers]]\nissuer = \"https://a.example\"\nalgorithms = [\"HS256\"]\n",
                "shared secret",
            ),
            (
                "[[serve.oauth.issuers]]\nissuer = \"https://a.example\"\nrole = \"root\"\n",
                "unknown variant",
            ),
        ] {
            let e = ConfigFile::parse(Path::new("t.toml"), bad).unwrap_err();
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn serve_limits_default_and_refuse_zero() {
        let c = ConfigFile::parse(
            Path::new("t.toml"),
            "[serve]\nmax_connections = 16\nheader_timeout = 0.5\nmax_sessions_per_user = 3\n",
        )
        .unwrap();
        assert_eq!(c.serve.max_connections, Some(16));
        assert_eq!(c.serve.header_timeout.unwrap().as_millis(), 500);
        assert_eq!(c.serve.idle_timeout, None);
        assert_eq!(c.serve.max_sessions_per_user, Some(3));
        for bad in ["max_sessions = 0", "idle_timeout = 0", "body_timeout = -1"] {
            let e =
                ConfigFile::parse(Path::new("t.toml"), &format!("[serve]\n{bad}\n")).unwrap_err();
            let key = bad.split(' ').next().unwrap();
            assert!(
                e.to_string().contains(key) || e.to_string().contains("negative"),
                "{e}"
            );
        }
    }
}
