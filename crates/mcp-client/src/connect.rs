//! Connecting to one MCP server: a stdio server started by the runtime's launcher (in the
//! sandbox unless its configuration turns that off; stopped when the connection is
//! dropped), or Streamable HTTP with an optional bearer token.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{
    StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;
use toolhost_runtime::{Isolation, NativeContext, ServerCommand, ServerHandle, ServerLauncher};

use crate::config::McpServerConfig;

/// Calls waiting for progress, by the token their request carries, with the last
/// progress value passed on.
pub(crate) type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, (NativeContext, f64)>>>;

/// Passes the server's progress notifications to the calls they belong to.
pub(crate) struct Handler {
    routes: ProgressRoutes,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Notifications may be handled out of order; progress only ever increases (the
        // protocol says so), so an older update arriving late is dropped, never reordered.
        let ctx = self.routes.lock().ok().and_then(|mut r| {
            let (ctx, last) = r.get_mut(&params.progress_token)?;
            if params.progress <= *last {
                return None;
            }
            *last = params.progress;
            Some(ctx.clone())
        });
        if let Some(ctx) = ctx {
            let amount = match params.total {
                Some(total) => format!("{}/{total}", params.progress),
                None => format!("{}", params.progress),
            };
            ctx.progress(match params.message {
                Some(m) => format!("{m} ({amount})"),
                None => amount,
            });
        }
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.client_info.name = "toolhost".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }
}

/// A live connection. Dropping the last reference closes it (and kills a stdio server's
/// process group).
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Handler>,
    pub(crate) routes: ProgressRoutes,
    /// A stdio server's process: stopped when the connection is dropped.
    _process: Option<ServerHandle>,
}

/// A stdio server as the runtime's launcher starts it.
fn server_command(name: &str, config: &McpServerConfig) -> ServerCommand {
    ServerCommand {
        name: name.to_string(),
        command: config.command.clone(),
        env: config.env.clone(),
        cwd: config.cwd.clone(),
        isolation: match config.sandbox {
            true => Isolation::Sandbox {
                network: config.network,
                read_only: config.read_only.clone(),
                read_write: config.read_write.clone(),
            },
            false => Isolation::Host,
        },
    }
}

/// The last lines a stdio server wrote on stderr (each also logged at debug level).
#[derive(Clone, Default)]
struct StderrTail {
    lines: Arc<tokio::sync::Mutex<(VecDeque<String>, bool)>>,
    done: Arc<tokio::sync::Notify>,
}

impl StderrTail {
    const KEEP: usize = 40;

    fn follow(&self, server: &str, stderr: tokio::process::ChildStderr) {
        let server = server.to_string();
        let tail = self.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line: String = line.chars().take(500).collect();
                tracing::debug!(target: "toolhost::mcp", server = %server, "{line}");
                let mut kept = tail.lines.lock().await;
                if kept.0.len() == Self::KEEP {
                    kept.0.pop_front();
                }
                kept.0.push_back(line);
            }
            tail.lines.lock().await.1 = true;
            tail.done.notify_waiters();
        });
    }

    /// What it said, once it closed stderr (or after a moment): the first line that
    /// names an error (runtimes print the message before the stack) and the last line;
    /// `None` if it said nothing.
    async fn last(&self) -> Option<String> {
        let notified = self.done.notified();
        if !self.lines.lock().await.1 {
            let _ = tokio::time::timeout(std::time::Duration::from_millis(500), notified).await;
        }
        let kept = self.lines.lock().await;
        let said: Vec<&str> = kept
            .0
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        let last = *said.last()?;
        match said
            .iter()
            .find(|l| l.to_ascii_lowercase().contains("error"))
        {
            Some(first) if *first != last => Some(format!("{first} … {last}")),
            _ => Some(last.to_string()),
        }
    }
}

/// `name: value` as HTTP can carry it, if it can.
pub(crate) fn header(name: &str, value: &str) -> Option<(http::HeaderName, http::HeaderValue)> {
    let name = http::HeaderName::from_bytes(name.as_bytes()).ok()?;
    let value = http::HeaderValue::from_str(value).ok()?;
    Some((name, value))
}

pub(crate) async fn connect(
    server: &str,
    config: &McpServerConfig,
    bearer: Option<&str>,
    launcher: &ServerLauncher,
) -> Result<Connection, String> {
    let routes = ProgressRoutes::default();
    let handler = Handler {
        routes: Arc::clone(&routes),
    };
    let service = match &config.url {
        Some(url) => {
            let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.clone());
            if let Some(token) = bearer {
                cfg = cfg.auth_header(token);
            }
            // Checked when the source was built.
            cfg.custom_headers = config
                .headers
                .iter()
                .filter_map(|(name, value)| header(name, value))
                .collect();
            let transport = StreamableHttpClientTransport::from_config(cfg);
            handler
                .serve(transport)
                .await
                .map_err(|e| format!("cannot initialize: {e}"))?
        }
        None => {
            let process = launcher
                .start(&server_command(server, config))
                .await
                .map_err(|e| format!("cannot start `{}`: {e}", config.command.join(" ")))?;
            let stderr = StderrTail::default();
            stderr.follow(server, process.stderr);
            match handler.serve((process.stdout, process.stdin)).await {
                Ok(service) => {
                    return Ok(Connection {
                        service,
                        routes,
                        _process: Some(process.handle),
                    });
                }
                Err(e) => {
                    // Its own words say why far better than "connection closed".
                    drop(process.handle);
                    return Err(match stderr.last().await {
                        Some(said) => format!("cannot initialize: {e}; its stderr says: {said}"),
                        None => format!("cannot initialize: {e}"),
                    });
                }
            }
        }
    };
    Ok(Connection {
        service,
        routes,
        _process: None,
    })
}
