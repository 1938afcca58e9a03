//! `toolhost serve [--listen ADDR]`: the long-running server, MCP over Streamable HTTP at
//! `/mcp`; with a store, the HTTP API at `/api/v1` and the web console at `/`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;
use toolhost_host::{CatalogView, ConfigFile, Host, HostOptions};
use toolhost_mcp::McpServer;
use toolhost_mcp::connections::ConnectionLimits;
use toolhost_mcp::http::HttpOptions;
use toolhost_store::{Persisted, QueueOptions};

use crate::catalog_args::CatalogArgs;
use crate::cluster_args::ClusterArgs;
use crate::cmd::mcp::{cancel_on_signal, run_to_end, serving_runtime};
use crate::store_args::StoreArgs;

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
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
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
    let mut allowed_hosts = config.serve.allowed_hosts.clone();
    if !addr.ip().is_unspecified() {
        allowed_hosts.push(addr.ip().to_string());
    }
    let with_store = args.store.location(&config)?.is_some();
    let login = args.cluster.login(&config.cluster, "gateway")?;
    let lost_after = args
        .cluster
        .apply(&config.cluster)
        .lost_after
        .unwrap_or(Duration::from_secs(3));
    let clustered = login.is_some();
    if clustered && !with_store {
        anyhow::bail!(
            "a gateway needs the fleet's shared store: --database postgres://… or [store] url"
        );
    }
    if clustered
        && (!args.catalog.tools_dirs.is_empty() || std::env::var_os("PI_TOOLS_DIRS").is_some())
    {
        anyhow::bail!(
            "a gateway serves the fleet's published catalog, not tool roots of its own: \
             publish them with `toolhost cluster publish --tools-dir DIR` (--data names \
             where users' homes and own tools are)"
        );
    }
    toolhost_host::check_exposure(&config, addr, args.catalog.user.is_some(), with_store)?;
    let connection_limits = fit_fd_limit(ConnectionLimits::from_config(&config.serve));
    // First start on a data folder: Officer's standard tools, as Officer's seed sync
    // would put them there (`toolhost init --data` updates them later).
    if let Some(data) = &args.catalog.data
        && !clustered
        && !data.join("tools").exists()
    {
        let items = crate::standard_tools::install(data, false)?;
        tracing::info!(
            "first start: installed {} standard tools into {}",
            items.len(),
            data.join("tools").display()
        );
    }
    let options = HostOptions {
        // A gateway's roots are the published catalog's, materialized below.
        roots: if clustered {
            Vec::new()
        } else {
            args.catalog.roots()?
        },
        data: args.catalog.data.clone(),
        user: args.catalog.user.clone(),
        // Each agent gets its own endpoint, serving its resolved tool sets.
        tool_sets: !config.agents.is_empty() || with_store,
        watch: true,
        store: None,
        fleet: None,
        config,
    };
    let store_args = args.store.clone();
    run_to_end(serving_runtime()?, async move {
        let mut options = options;
        let store = match store_args.open(&options.config).await? {
            Some(store) => {
                let days = options.config.store.call_retention_days.unwrap_or(90);
                let queue = QueueOptions {
                    retention: (days > 0).then(|| Duration::from_secs(days * 24 * 3600)),
                    ..QueueOptions::default()
                };
                let mut persisted = Persisted::start(store, queue);
                if clustered {
                    // A gateway: nothing of the store on the hot path, and the callers it
                    // knows keep working while the store restarts.
                    persisted = persisted
                        .remembering(toolhost_store::Remember::FLEET)
                        .sharing_sessions();
                }
                options.store = Some(Arc::new(persisted.clone()));
                Some(persisted)
            }
            None => None,
        };
        // A gateway: folder tools run on the fleet's runners.
        let gateway = match (login, &store) {
            (Some(login), Some(store)) => {
                let client = login.connect().await?;
                let gateway = toolhost_fleet::Gateway::start(
                    client,
                    toolhost_fleet::gateway::GatewayOptions {
                        node: login.node.clone(),
                        env: toolhost_fleet::wire::CallEnv {
                            vars: options.config.env.clone(),
                            resources: options.config.resources_json(),
                        },
                        lost_after,
                        bundles: toolhost_fleet::Bundles::new(store.store().clone()),
                        inbox_prefix: login.inbox_prefix(),
                    },
                )
                .await
                .context("cannot join the fleet")?;
                options.fleet = Some(Arc::new(gateway.clone()));
                eprintln!("gateway {} of the fleet at {}", login.node, login.url);
                let copy = toolhost_fleet::catalog::Materialized::new(
                    options
                        .config
                        .runtime
                        .cache_dir()
                        .join("fleet")
                        .join(&login.node),
                );
                options.roots = crate::fleet_catalog::serve_published(
                    store.store().clone(),
                    gateway.clone(),
                    copy,
                )
                .await?;
                Some(gateway)
            }
            _ => None,
        };
        // Bound before the host boots: an OAuth access token names the URL clients use,
        // which, without `[serve] public_url`, is the bound address (its port may be 0
        // until now).
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let bound = listener.local_addr()?;
        let public_url = &mut options.config.serve.public_url;
        public_url.get_or_insert_with(|| format!("http://{bound}"));
        let host = Arc::new(Host::boot(options).await?);
        if let Some(fleet) = host.fleet() {
            // Another gateway revoked a token or changed a role: forget what is remembered.
            let (mut changes, tokens) = (fleet.access_changes(), host.tokens());
            tokio::spawn(async move {
                while let Ok(()) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) =
                    changes.recv().await
                {
                    tokens.forget_remembered();
                }
            });
        }
        if let Some(store) = &store {
            crate::store_args::serve_stored_servers(&host, store.store()).await?;
        }
        // Per-user tools come from the data layout, for token users only (the default
        // user's root, with --user, is already in the catalog).
        let view = if host.tokens().is_empty() {
            CatalogView::Shared
        } else {
            CatalogView::PerCaller
        };
        let server = McpServer::for_host(&host, host.endpoint_source(view));
        let settle = server.session();
        let mut endpoints = vec![("/mcp".to_string(), server)];
        let mut agent_sources = Vec::new();
        for agent in host.agents().agent_ids().await? {
            let source = host.agent_source(&agent).await?;
            agent_sources.push(Arc::clone(&source));
            let server = McpServer::for_host(&host, source);
            endpoints.push((format!("/agents/{agent}/mcp"), server));
        }
        let stop = CancellationToken::new();
        cancel_on_signal(stop.clone());
        let paths: Vec<String> = endpoints.iter().map(|(p, _)| p.clone()).collect();
        let mut http = HttpOptions::from_config(&host.config().serve, host.tokens(), stop.clone());
        http.allowed_hosts = allowed_hosts.clone();
        http.shared_sessions = host.mcp_sessions().cloned();
        http.fleet = host.fleet().cloned();
        let mut app = toolhost_mcp::http::router_at(endpoints, http);
        if let Some(store) = &store {
            // The API manages the store: it is there only with one.
            let state =
                toolhost_api::ApiState::new(Arc::clone(&host), store.store().clone(), stop.clone());
            // One Host and Origin policy for both (the console also takes its own origin).
            let allowed = toolhost_host::Allowed {
                hosts: allowed_hosts,
                origins: host.config().serve.allowed_origins.clone(),
            };
            app = app.nest("/api/v1", toolhost_api::router(state, allowed.clone()));
            // The web console, at `/`, over the same store (its sessions live there).
            let secure = host
                .config()
                .serve
                .public_url
                .as_deref()
                .is_some_and(|u| u.starts_with("https://"));
            let console = toolhost_console::ConsoleState::new(
                Arc::clone(&host),
                store.store().clone(),
                secure,
            );
            app = app.merge(toolhost_console::router(console, allowed));
        }
        if let Some(store) = &store {
            let url = format!("http://{bound}/mcp");
            let sign_in = format!("http://{bound}/sign-in");
            crate::store_args::first_start(store.store(), Some(&url), Some(&sign_in)).await?;
        }
        eprintln!("serving MCP at http://{bound}/mcp (Ctrl-C to stop)");
        for path in paths.iter().skip(1) {
            eprintln!("  and an agent's tools at http://{bound}{path}");
        }
        if store.is_some() {
            eprintln!("  and the web console at http://{bound}/");
        }
        toolhost_mcp::connections::serve(listener, app, connection_limits, stop, SHUTDOWN_WAIT)
            .await;
        settle.settle_abandoned().await;
        for source in &agent_sources {
            toolhost_host::ToolSource::close_turns(&**source).await;
        }
        host.shutdown().await;
        drop(gateway);
        if let Some(store) = store {
            // The calls of the last moments are in the queue still.
            if !store.queue().flush(SHUTDOWN_WAIT).await {
                crate::warn("the call log could not write its last rows before shutdown");
            }
            store.store().close().await;
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
