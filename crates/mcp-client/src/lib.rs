//! External MCP servers as tool sources: each configured server is the tool set named
//! after it, with tools named `<server>__<tool>`.
//!
//! A turn connects (once; the connection is kept) and lists under the server's deadline.
//! A server that fails, hangs or is unreachable costs only its own tools, with a warning;
//! its last good listing is served for `stale_for`; after a failure it is skipped for a
//! back-off window that doubles per failure (up to 5 minutes).
//!
//! Each [`McpSource`] is a [`toolhost_toolsets::ExternalSource`]: the host builds them from
//! `[mcp_servers]` ([`sources`]) and hands them to `Registry::boot`.
#![warn(missing_docs, unreachable_pub)]

mod config;
mod connect;
mod error;
mod tool;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde_json::Value;
use toolhost_runtime::{ServerLauncher, ToolRef};
use toolhost_toolsets::{
    Annotations, ExternalSource, Listing, SourceHealth, Tool, ToolMap, fingerprint,
    is_valid_tool_name,
};

pub use config::McpServerConfig;
use connect::Connection;
pub use error::{Problem, ServerConfigError};

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_STALE_FOR: Duration = Duration::from_secs(300);
const DEFAULT_BACKOFF: Duration = Duration::from_secs(5);
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Every server of `[mcp_servers]`, checked, as the external sources boot takes. Stdio
/// servers start through `launcher` (the runtime's [`toolhost_runtime::Runtime::servers`]).
pub fn sources(
    servers: &BTreeMap<String, McpServerConfig>,
    launcher: &ServerLauncher,
) -> Result<Vec<Arc<dyn ExternalSource>>, ServerConfigError> {
    servers
        .iter()
        .map(|(name, config)| {
            let source: Arc<dyn ExternalSource> =
                Arc::new(McpSource::new(name, config.clone(), launcher.clone())?);
            Ok(source)
        })
        .collect()
}

/// A tool a server lists, as [`probe`] reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbedTool {
    /// The server's own name for it.
    pub name: String,
    /// What the server says it does.
    pub description: String,
}

/// Why [`probe`] found no tools.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The configuration is wrong: nothing was started.
    #[error(transparent)]
    Config(#[from] ServerConfigError),
    /// The server could not be reached, started or listed.
    #[error("{0}")]
    Failed(String),
}

/// Connects to server `name` as `config` says (starting a stdio one through `launcher`),
/// lists its tools and disconnects, calling none: an operator's "test connection". Bounded
/// by the server's `timeout`.
pub async fn probe(
    name: &str,
    config: McpServerConfig,
    launcher: &ServerLauncher,
) -> Result<Vec<ProbedTool>, ProbeError> {
    let source = McpSource::new(name, config, launcher.clone())?;
    let deadline = source.deadline();
    let mut state = State::default();
    let listed = tokio::time::timeout(deadline, source.connect_and_list(&mut state)).await;
    // The protocol's shutdown; a stdio server's process group goes with it.
    *source.state.lock().await = state;
    source.disconnect().await;
    let tools = match listed {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => return Err(ProbeError::Failed(e)),
        Err(_) => {
            return Err(ProbeError::Failed(format!(
                "no answer within {} s",
                deadline.as_secs_f64()
            )));
        }
    };
    Ok(tools
        .iter()
        .map(|(key, t)| ProbedTool {
            name: key
                .strip_prefix(&format!("{name}__"))
                .unwrap_or(key)
                .to_string(),
            description: t.description(),
        })
        .collect())
}

/// One configured MCP server.
pub(crate) struct McpSource {
    name: String,
    config: McpServerConfig,
    bearer: Option<String>,
    launcher: ServerLauncher,
    state: tokio::sync::Mutex<State>,
    /// What the last listing found (read without waiting for a listing under way).
    health: std::sync::Mutex<SourceHealth>,
}

#[derive(Default)]
struct State {
    connection: Option<Arc<Connection>>,
    last_good: Option<(Instant, ToolMap)>,
    failures: u32,
    skip_until: Option<Instant>,
}

impl McpSource {
    /// Checks the configuration (boot is strict about it).
    pub(crate) fn new(
        name: &str,
        config: McpServerConfig,
        launcher: ServerLauncher,
    ) -> Result<McpSource, ServerConfigError> {
        let fail = |problem| ServerConfigError {
            server: name.into(),
            problem,
        };
        if !is_valid_tool_name(name) || name.contains("__") {
            return Err(fail(Problem::InvalidName));
        }
        match (&config.url, config.command.is_empty()) {
            (Some(_), false) => return Err(fail(Problem::BothTransports)),
            (None, true) => return Err(fail(Problem::NoTransport)),
            (Some(url), true) => {
                let parsed = url::Url::parse(url).map_err(|e| fail(Problem::InvalidUrl(e)))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(fail(Problem::NotHttp));
                }
            }
            (None, false) => {}
        }
        if config.url.is_some()
            && let Some(key) = config.sandbox_keys().first()
        {
            return Err(fail(Problem::StdioOnly(key)));
        }
        if config.url.is_none() && !config.headers.is_empty() {
            return Err(fail(Problem::HeadersNeedUrl));
        }
        for (name, value) in &config.headers {
            if connect::header(name, value).is_none() {
                return Err(fail(Problem::InvalidHeader(name.clone())));
            }
        }
        for (key, paths) in [
            ("read_only", &config.read_only),
            ("read_write", &config.read_write),
        ] {
            if let Some(path) = paths.iter().find(|p| !p.is_absolute()) {
                return Err(fail(Problem::RelativePath {
                    key,
                    path: path.clone(),
                }));
            }
        }
        if !config.sandbox && config.sandbox_keys().len() > 1 {
            tracing::warn!(
                server = %name,
                "MCP server `{name}` runs outside the sandbox (`sandbox = false`): `network`, \
                 `read_only` and `read_write` do not apply; it has the host's files and network"
            );
        }
        let bearer = match (&config.bearer_token, &config.bearer_token_env) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(var)) => {
                Some(std::env::var(var).map_err(|_| fail(Problem::BearerTokenUnset(var.clone())))?)
            }
            (None, None) => None,
        };
        // reqwest (Streamable HTTP) is built without a bundled crypto provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Ok(McpSource {
            name: name.into(),
            config,
            bearer,
            launcher,
            state: tokio::sync::Mutex::new(State::default()),
            health: std::sync::Mutex::new(SourceHealth::NotContacted),
        })
    }

    /// `stdio `node server.mjs`` or `streamable HTTP URL`, for listings.
    pub(crate) fn transport_description(&self) -> String {
        match &self.config.url {
            Some(url) => format!("streamable HTTP {url}"),
            None => format!("stdio `{}`", self.config.command.join(" ")),
        }
    }

    fn deadline(&self) -> Duration {
        self.config.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// This turn's tools of the server. Never fails: problems become a warning.
    pub(crate) async fn list(&self) -> Listing {
        let deadline = self.deadline();
        let started = Instant::now();
        let Ok(mut state) = tokio::time::timeout(deadline, self.state.lock()).await else {
            return Listing::failed(format!(
                "no answer within {} s (another turn is still connecting)",
                deadline.as_secs_f64()
            ));
        };
        if let Some(until) = state.skip_until
            && Instant::now() < until
        {
            let wait = until.saturating_duration_since(Instant::now());
            return self.stale_or_nothing(
                &state,
                format!(
                    "skipped after {} failure(s); retrying in {} s",
                    state.failures,
                    wait.as_secs()
                ),
            );
        }
        let remaining = deadline.saturating_sub(started.elapsed());
        let outcome = tokio::time::timeout(remaining, self.connect_and_list(&mut state)).await;
        let error = match outcome {
            Ok(Ok(tools)) => {
                self.set_health(SourceHealth::Live);
                state.failures = 0;
                state.skip_until = None;
                state.last_good = Some((Instant::now(), tools.clone()));
                return Listing {
                    tools,
                    warning: None,
                };
            }
            Ok(Err(e)) => e,
            Err(_) => format!("no answer within {} s", deadline.as_secs_f64()),
        };
        // Drop the connection: a stdio server's process group is killed with it.
        state.connection = None;
        state.failures += 1;
        let backoff = self
            .config
            .backoff
            .unwrap_or(DEFAULT_BACKOFF)
            .saturating_mul(1 << state.failures.saturating_sub(1).min(16))
            .min(MAX_BACKOFF);
        state.skip_until = Some(Instant::now() + backoff);
        let stale_for = self.config.stale_for.unwrap_or(DEFAULT_STALE_FOR);
        self.set_health(SourceHealth::Failing {
            error: error.clone(),
            failures: state.failures,
            serving_stale: state
                .last_good
                .as_ref()
                .is_some_and(|(at, _)| at.elapsed() <= stale_for),
        });
        tracing::warn!(server = %self.name, "MCP server failed: {error}; skipping it for {} s", backoff.as_secs());
        self.stale_or_nothing(&state, error)
    }

    fn set_health(&self, health: SourceHealth) {
        *self.health.lock().unwrap_or_else(|e| e.into_inner()) = health;
    }

    fn stale_or_nothing(&self, state: &State, why: String) -> Listing {
        let stale_for = self.config.stale_for.unwrap_or(DEFAULT_STALE_FOR);
        match &state.last_good {
            Some((at, tools)) if at.elapsed() <= stale_for => Listing {
                tools: tools.clone(),
                warning: Some(format!(
                    "{why}; serving its tools as listed {} s ago",
                    at.elapsed().as_secs()
                )),
            },
            _ => Listing::failed(format!("{why}; its tools are left out of this turn")),
        }
    }

    async fn connect_and_list(&self, state: &mut State) -> Result<ToolMap, String> {
        // A kept connection may have died since the last turn: then reconnect once.
        if let Some(conn) = state.connection.clone() {
            match conn.service.peer().list_all_tools().await {
                Ok(tools) => return Ok(self.tool_map(&conn, tools)),
                Err(e) => {
                    tracing::info!(server = %self.name, "kept connection failed ({e}); reconnecting");
                    state.connection = None;
                }
            }
        }
        let conn = Arc::new(
            connect::connect(
                &self.name,
                &self.config,
                self.bearer.as_deref(),
                &self.launcher,
            )
            .await?,
        );
        state.connection = Some(Arc::clone(&conn));
        let tools = conn
            .service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        Ok(self.tool_map(&conn, tools))
    }

    fn tool_map(&self, conn: &Arc<Connection>, tools: Vec<rmcp::model::Tool>) -> ToolMap {
        let mut map = ToolMap::new();
        for t in tools {
            let name = format!("{}__{}", self.name, t.name);
            let description = t.description.as_deref().unwrap_or("").to_string();
            let schema = Value::Object((*t.input_schema).clone());
            let identity = format!(
                "mcp:{}:{}:{}",
                self.name,
                t.name,
                fingerprint(&description, &schema)
            );
            let annotations = t
                .annotations
                .as_ref()
                .map(|a| Annotations {
                    read_only: a.read_only_hint,
                    destructive: a.destructive_hint,
                    idempotent: a.idempotent_hint,
                    open_world: a.open_world_hint,
                    timeout: None,
                })
                .unwrap_or_default();
            let native = tool::McpTool {
                name: name.clone(),
                remote: t.name.to_string(),
                description,
                schema,
                connection: Arc::downgrade(conn),
            };
            let mut tool =
                Tool::with_ref(ToolRef::Native(Arc::new(native)), identity).annotated(annotations);
            // A server added while serving has no place in the boot-time icon maps.
            if let Some(icon) = &self.config.icon {
                tool = tool.with_icon(icon.clone());
            }
            // Inserted under the prefixed name even when invalid: resolution leaves it
            // out with a warning instead of silently truncating it.
            map.insert(name, tool);
        }
        map
    }

    /// Closes the connection: a stdio server gets the protocol's shutdown (stdin closed,
    /// then SIGTERM, then SIGKILL to its process group). A call still running keeps the
    /// connection until it ends; dropping it then kills the group.
    pub(crate) async fn disconnect(&self) {
        let Some(conn) = self.state.lock().await.connection.take() else {
            return;
        };
        if let Ok(conn) = Arc::try_unwrap(conn) {
            let _ = tokio::time::timeout(Duration::from_secs(10), conn.service.cancel()).await;
        }
    }
}

impl ExternalSource for McpSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn transport(&self) -> String {
        self.transport_description()
    }

    fn icon(&self) -> Option<&str> {
        self.config.icon.as_deref()
    }

    fn list(&self) -> BoxFuture<'_, Listing> {
        Box::pin(McpSource::list(self))
    }

    fn health(&self) -> SourceHealth {
        self.health
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.disconnect())
    }
}
