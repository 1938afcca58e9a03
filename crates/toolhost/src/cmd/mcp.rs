//! `toolhost mcp`: an MCP server on stdio for one user (the catalog flags of `list`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use tokio_util::sync::CancellationToken;
use toolhost_host::{CatalogView, ConfigFile, Host, HostOptions};
use toolhost_mcp::McpServer;

use crate::catalog_args::CatalogArgs;
use crate::store_args::{close_persisted, named_persisted, serve_stored_servers};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    catalog: CatalogArgs,
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Serve this agent's resolved tool sets (`[agents.ID]` in toolhost.toml, or a stored
    /// agent with --database: plugins, tool roots, MCP servers) instead of the catalog.
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
    /// A store whose agents and MCP servers join toolhost.toml's and whose call log
    /// records every call (a postgres:// URL or an SQLite file; default:
    /// $TOOLHOST_DATABASE_URL, else [store] url, else none).
    #[arg(long, value_name = "URL")]
    database: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = ConfigFile::load(args.config.as_deref())?;
    let roots = match &args.agent {
        // An agent may be served from plugins alone.
        Some(_) => args.catalog.roots_if_any()?,
        None => args.catalog.roots()?,
    };
    let options = HostOptions {
        config,
        roots,
        data: args.catalog.data.clone(),
        user: args.catalog.user.clone(),
        tool_sets: args.agent.is_some(),
        watch: true,
        store: None,
        fleet: None,
    };
    run_to_end(serving_runtime()?, async move {
        let mut options = options;
        let persisted = named_persisted(args.database.clone(), &options.config).await?;
        options.store = persisted
            .clone()
            .map(|p| Arc::new(p) as Arc<dyn toolhost_host::Persistence>);
        let host = Host::boot(options).await?;
        if let (Some(p), Some(_)) = (&persisted, &args.agent) {
            serve_stored_servers(&host, p.store()).await?;
        }
        let source: std::sync::Arc<dyn toolhost_host::ToolSource> = match &args.agent {
            Some(agent) => host.agent_source(agent).await?,
            // The catalog already holds this user's root (--user): no per-user overlay.
            None => host.catalog_source(CatalogView::Shared),
        };
        let server = McpServer::for_host(&host, Arc::clone(&source));
        let stop = CancellationToken::new();
        cancel_on_signal(stop.clone());
        toolhost_mcp::serve_stdio(server, stop).await?;
        // The last turn's closers run before the workers they may need stop.
        source.close_turns().await;
        host.shutdown().await;
        close_persisted(persisted).await;
        Ok(ExitCode::SUCCESS)
    })
}

/// The runtime `mcp` and `serve` run on.
pub fn serving_runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// How long a stopping command waits for blocking tasks still running on its runtime.
const BLOCKING_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `work` to completion on `runtime`, then shuts the runtime down without waiting for
/// blocking tasks longer than a moment: a host step stuck in a system call (a slow file
/// system, say) must not keep the process alive once the command is done. (Dropping a
/// Tokio runtime instead waits for every blocking task, however long it takes.)
pub fn run_to_end<T>(
    runtime: tokio::runtime::Runtime,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let out = runtime.block_on(work);
    runtime.shutdown_timeout(BLOCKING_GRACE);
    out
}

/// Cancels `stop` on Ctrl-C or SIGTERM, so that running calls are cancelled cleanly. The
/// handlers are in place when this returns (a signal that came before would kill the
/// process instead), so call it before announcing that the server is up.
pub fn cancel_on_signal(stop: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let signals = signal(SignalKind::terminate())
        .and_then(|term| Ok((term, signal(SignalKind::interrupt())?)));
    let (mut term, mut int) = match signals {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch for SIGTERM and SIGINT");
            return;
        }
    };
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        stop.cancel();
    });
}
