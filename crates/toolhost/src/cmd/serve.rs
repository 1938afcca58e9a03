//! `toolhost serve [--listen ADDR]`: the long-running server, MCP over Streamable HTTP at
//! `/mcp`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio_util::sync::CancellationToken;
use toolhost_mcp::Caller;
use toolhost_mcp::connections::ConnectionLimits;
use toolhost_mcp::http::HttpOptions;
use toolhost_mcp::tokens::Tokens;

use crate::catalog_args::CatalogArgs;
use crate::cmd::mcp::{agent_server, cancel_on_signal, run_to_end, server, serving_runtime};
use crate::config::ConfigFile;
use crate::users::{homes_dir, user_space};

/// Where `serve` listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";

/// How long a shutdown waits for open responses before closing their connections.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Address to listen on (default: `[serve] listen`, else 127.0.0.1:7878). Anything but
    /// loopback needs `[[serve.tokens]]`.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = ConfigFile::load(args.config.as_deref())?;
    let listen = args
        .listen
        .as_deref()
        .or(config.serve.listen.as_deref())
        .unwrap_or(DEFAULT_LISTEN);
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("--listen {listen:?} is not an address such as 127.0.0.1:7878"))?;
    let data = args.catalog.data.clone();
    let mut tokens = Tokens::default();
    for t in &config.serve.tokens {
        let space = user_space(data.as_deref(), Some(&t.user))?;
        tokens.insert(&t.sha256, Caller { space })?;
    }
    if tokens.is_empty() && !addr.ip().is_loopback() {
        bail!(
            "refusing to listen on {addr} without authentication: add [[serve.tokens]] to toolhost.toml, or listen on 127.0.0.1"
        );
    }
    if !tokens.is_empty() && args.catalog.user.is_some() {
        bail!(
            "--user names the one user served without tokens; with [[serve.tokens]] each token names its user"
        );
    }
    let catalog = args.catalog.scan()?;
    let default_caller = Caller {
        space: user_space(data.as_deref(), args.catalog.user.as_deref())?,
    };
    let homes = homes_dir(data.as_deref());
    // Per-user tools come from the data layout, for token users only (the default user's
    // root, with --user, is already in the catalog).
    let overlay = if tokens.is_empty() { None } else { data };
    let mut allowed_hosts = config.serve.allowed_hosts.clone();
    if !addr.ip().is_unspecified() {
        allowed_hosts.push(addr.ip().to_string());
    }
    let roots = catalog.roots().to_vec();
    let connection_limits = fit_fd_limit(config.serve.connection_limits());
    run_to_end(serving_runtime()?, async move {
        let server = server(&config, catalog, overlay, homes, default_caller.clone())?;
        let runtime = server.runtime().clone();
        let settle = server.session();
        let mut endpoints = vec![("/mcp".to_string(), server)];
        // Each agent of toolhost.toml gets its own endpoint, serving its resolved tool sets.
        let mut registry = None;
        if !config.agents.is_empty() {
            let (reg, shared) = crate::registry::boot(&config, roots)?;
            let reg = std::sync::Arc::new(reg);
            for agent in config.agents.keys() {
                let server = agent_server(
                    &reg,
                    agent,
                    std::sync::Arc::clone(&shared),
                    runtime.clone(),
                    default_caller.clone(),
                )?;
                endpoints.push((format!("/agents/{agent}/mcp"), server));
            }
            registry = Some(reg);
        }
        let stop = CancellationToken::new();
        tokio::spawn(cancel_on_signal(stop.clone()));
        let paths: Vec<String> = endpoints.iter().map(|(p, _)| p.clone()).collect();
        let app = toolhost_mcp::http::router_at(
            endpoints,
            HttpOptions {
                tokens,
                allowed_hosts,
                allowed_origins: config.serve.allowed_origins.clone(),
                stop: stop.clone(),
                sessions: config.serve.session_limits(),
            },
        );
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let bound = listener.local_addr()?;
        eprintln!("serving MCP at http://{bound}/mcp (Ctrl-C to stop)");
        for path in paths.iter().skip(1) {
            eprintln!("  and an agent's tools at http://{bound}{path}");
        }
        toolhost_mcp::connections::serve(listener, app, connection_limits, stop, SHUTDOWN_WAIT)
            .await;
        settle.settle_abandoned().await;
        runtime.shutdown().await;
        if let Some(registry) = registry {
            registry.shutdown().await;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Raises the open-file limit as far as allowed, and keeps `[serve] max_connections` below
/// it: connections beyond the limit would fail to be accepted instead of taking an idle
/// connection's place.
fn fit_fd_limit(limits: ConnectionLimits) -> ConnectionLimits {
    let fd_limit = toolhost_mcp::connections::raise_fd_limit();
    let fitted = limits.clone().within_fds(fd_limit);
    if fitted.max_connections < limits.max_connections {
        crate::warn(&format!(
            "[serve] max_connections lowered from {} to {}, to stay below the open-file limit of {fd_limit}",
            limits.max_connections, fitted.max_connections
        ));
    }
    fitted
}
