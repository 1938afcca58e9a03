//! `toolhost mcp`: an MCP server on stdio for one user (the catalog flags of `list`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use tokio_util::sync::CancellationToken;
use toolhost_mcp::{AgentSource, Caller, CatalogSource, McpServer};
use toolhost_runtime::{Runtime, ToolEnv};

use crate::catalog_args::CatalogArgs;
use crate::config::ConfigFile;
use crate::users::{homes_dir, user_space};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    catalog: CatalogArgs,
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Serve this agent's resolved tool sets (`[agents.ID]` in toolhost.toml: plugins,
    /// tool roots, MCP servers) instead of the catalog.
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = ConfigFile::load(args.config.as_deref())?;
    let caller = Caller {
        space: user_space(args.catalog.data.as_deref(), args.catalog.user.as_deref())?,
    };
    let homes = homes_dir(args.catalog.data.as_deref());
    run_to_end(serving_runtime()?, async move {
        let mut registry = None;
        let server = match &args.agent {
            Some(agent) => {
                let roots = args.catalog.roots_if_any()?;
                let (reg, catalog) = crate::registry::boot(&config, roots)?;
                let reg = Arc::new(reg);
                let runtime =
                    Runtime::new(config.runtime.clone(), tool_env(&config, &catalog, homes))?;
                let server = agent_server(&reg, agent, catalog, runtime, caller)?;
                registry = Some(reg);
                server
            }
            // The catalog already holds this user's root (--user): no per-user overlay.
            None => server(&config, args.catalog.scan()?, None, homes, caller)?,
        };
        let runtime = server.runtime().clone();
        let stop = CancellationToken::new();
        tokio::spawn(cancel_on_signal(stop.clone()));
        toolhost_mcp::serve_stdio(server, stop).await?;
        runtime.shutdown().await;
        if let Some(registry) = registry {
            registry.shutdown().await;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The environment of tools run for the registry's catalog, for users whose homes lie in
/// `homes`.
pub fn tool_env(
    config: &ConfigFile,
    catalog: &std::sync::RwLock<toolhost_catalog::Catalog>,
    homes: PathBuf,
) -> ToolEnv {
    let roots = catalog
        .read()
        .map(|c| c.roots().iter().map(|r| r.path.clone()).collect())
        .unwrap_or_default();
    ToolEnv {
        vars: config.env.clone(),
        resources: config.resources_json(),
        tools_dirs: roots,
        homes: Some(homes),
    }
}

/// An MCP server over `agent`'s resolved tool sets, run by `runtime`.
pub fn agent_server(
    registry: &Arc<toolhost_toolsets::Registry>,
    agent: &str,
    catalog: Arc<std::sync::RwLock<toolhost_catalog::Catalog>>,
    runtime: Runtime,
    default_caller: Caller,
) -> Result<McpServer> {
    if !registry.config().agents.contains_key(agent) {
        anyhow::bail!("no agent `{agent}` in toolhost.toml ([agents.ID])");
    }
    let source = Arc::new(AgentSource::new(Arc::clone(registry), agent, catalog));
    Ok(McpServer::new(source, runtime, default_caller))
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

/// An MCP server over `catalog`, run by a runtime configured from `config`, for users
/// whose homes lie in `homes`. With `data`, each caller's own tools
/// (`DATA_PATH/EMAIL/tools`) override the catalog's for them.
pub fn server(
    config: &ConfigFile,
    catalog: toolhost_catalog::Catalog,
    data: Option<PathBuf>,
    homes: PathBuf,
    default_caller: Caller,
) -> Result<McpServer> {
    let env = ToolEnv {
        vars: config.env.clone(),
        resources: config.resources_json(),
        tools_dirs: catalog.roots().iter().map(|r| r.path.clone()).collect(),
        homes: Some(homes),
    };
    let runtime = Runtime::new(config.runtime.clone(), env)?;
    let source = Arc::new(CatalogSource::new(catalog, data));
    Ok(McpServer::new(source, runtime, default_caller))
}

/// Cancels `stop` on Ctrl-C or SIGTERM, so that running calls are cancelled cleanly.
pub async fn cancel_on_signal(stop: CancellationToken) {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch for SIGTERM");
            let _ = tokio::signal::ctrl_c().await;
            stop.cancel();
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    stop.cancel();
}
