//! `toolhost runner`: runs tool calls for a fleet's gateways, in the sandbox, on warm
//! workers. It needs NATS and the users' homes; never the database.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;
use toolhost_fleet::{Runner, RunnerOptions};
use toolhost_host::ConfigFile;

use crate::cluster_args::ClusterArgs;
use crate::cmd::mcp::{cancel_on_signal, run_to_end, serving_runtime};

/// How long a stopping runner lets its calls finish.
const DRAIN: Duration = Duration::from_secs(30);

#[derive(clap::Args)]
pub struct Args {
    /// Where users' homes are (`DATA_PATH`): the same folder the gateways see, shared.
    #[arg(long, value_name = "DATA_PATH")]
    data: Option<PathBuf>,
    /// Calls at once (default: `[cluster] slots`, else twice `[runtime] max_workers`).
    #[arg(long, value_name = "N")]
    slots: Option<usize>,
    /// Serve `/metrics` (Prometheus) and `/healthz` here, without authentication: an
    /// address the operator's monitoring reaches, such as 0.0.0.0:9464 inside a cluster.
    #[arg(long, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(flatten)]
    cluster: ClusterArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = ConfigFile::load(args.config.as_deref())?;
    let Some(login) = args.cluster.login(&config.cluster, "runner")? else {
        anyhow::bail!("a runner needs the fleet's NATS server: --nats URL or [cluster] nats");
    };
    let cluster = args.cluster.apply(&config.cluster);
    let slots = args
        .slots
        .or(cluster.slots)
        // Calls beyond the workers wait for one on the runner, as they would on one
        // server; beyond twice as many, the gateway tries another runner.
        .unwrap_or(config.runtime.max_workers.saturating_mul(2));
    let homes = toolhost_host::homes_dir(args.data.as_deref());
    let homes = toolhost_host::absolute_path(&homes);
    let bundles = config.runtime.cache_dir().join("bundles").join(&login.node);
    run_to_end(serving_runtime()?, async move {
        let client = login.connect().await?;
        let runner = Runner::start(
            client.clone(),
            RunnerOptions {
                node: login.node.clone(),
                slots,
                runtime: config.runtime.clone(),
                homes,
                bundles,
            },
        )
        .await
        .context("cannot join the fleet")?;
        let stop = CancellationToken::new();
        cancel_on_signal(stop.clone());
        let runner = std::sync::Arc::new(runner);
        if let Some(addr) = args.listen {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            eprintln!("metrics at http://{}/metrics", listener.local_addr()?);
            let app = axum::Router::new()
                .route(
                    "/metrics",
                    axum::routing::get({
                        let runner = std::sync::Arc::clone(&runner);
                        move || async move {
                            let text = runner.metrics().await;
                            (
                                [(
                                    axum::http::header::CONTENT_TYPE,
                                    "text/plain; version=0.0.4",
                                )],
                                text,
                            )
                        }
                    }),
                )
                .route("/healthz", axum::routing::get(|| async { "ok" }));
            let stop = stop.clone();
            tokio::spawn(async move {
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(stop.cancelled_owned())
                    .await;
            });
        }
        eprintln!(
            "runner {} taking up to {slots} calls at once from the fleet at {}",
            login.node, login.url
        );
        stop.cancelled().await;
        eprintln!(
            "stopping: letting running calls finish (at most {} s)",
            DRAIN.as_secs()
        );
        runner.drain(DRAIN).await;
        drop(runner);
        let _ = client.drain().await;
        Ok(ExitCode::SUCCESS)
    })
}
