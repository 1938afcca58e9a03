//! Connecting to one MCP server: a stdio child in its own process group (killed as a
//! whole when the connection is dropped), or Streamable HTTP with an optional bearer token.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{
    StreamableHttpClientTransport, TokioChildProcess,
    streamable_http_client::StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;
use toolhost_runtime::NativeContext;

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
}

pub(crate) async fn connect(
    server: &str,
    config: &McpServerConfig,
    bearer: Option<&str>,
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
            let transport = StreamableHttpClientTransport::from_config(cfg);
            handler
                .serve(transport)
                .await
                .map_err(|e| format!("cannot initialize: {e}"))?
        }
        None => {
            let (program, args) = config
                .command
                .split_first()
                .ok_or("neither `command` nor `url` is set")?;
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args).env_clear();
            for key in ["PATH", "HOME", "LANG", "TMPDIR"] {
                if let Some(v) = std::env::var_os(key) {
                    cmd.env(key, v);
                }
            }
            cmd.envs(&config.env);
            if let Some(dir) = &config.cwd {
                cmd.current_dir(dir);
            }
            let mut wrapped = CommandWrap::from(cmd);
            wrapped.wrap(ProcessGroup::leader());
            let (transport, stderr) = TokioChildProcess::builder(wrapped)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start `{program}`: {e}"))?;
            if let Some(stderr) = stderr {
                let server = server.to_string();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        let line: String = line.chars().take(2000).collect();
                        tracing::debug!(target: "toolhost::mcp", server = %server, "{line}");
                    }
                });
            }
            handler
                .serve(transport)
                .await
                .map_err(|e| format!("cannot initialize: {e}"))?
        }
    };
    Ok(Connection { service, routes })
}
