//! `toolhost cluster`: the fleet's catalog and state.
//!
//! - `publish [--watch]`: bundles the tool roots into the shared store as a new catalog
//!   epoch (when something changed) and tells the gateways; with `--watch`, again after
//!   every edit.
//! - `status`: the gateways and runners announcing themselves, their load and versions.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use futures::StreamExt;
use toolhost_fleet::catalog::PublishOutcome;
use toolhost_fleet::members::Members;
use toolhost_fleet::wire;
use toolhost_host::ConfigFile;

use crate::catalog_args::CatalogArgs;
use crate::cluster_args::ClusterArgs;
use crate::cmd::mcp::{cancel_on_signal, run_to_end, serving_runtime};
use crate::store_args::StoreArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Publish the tool roots to the fleet's store as its catalog, and tell the gateways.
    Publish(PublishArgs),
    /// Show the gateways and runners of the fleet: their load and versions.
    Status(StatusArgs),
}

#[derive(clap::Args)]
struct PublishArgs {
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Keep watching the roots and publish again after every edit.
    #[arg(long)]
    watch: bool,
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
}

#[derive(clap::Args)]
struct StatusArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(flatten)]
    cluster: ClusterArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    match args.command {
        Command::Publish(args) => publish(args),
        Command::Status(args) => status(args),
    }
}

fn publish(args: PublishArgs) -> Result<ExitCode> {
    let config = ConfigFile::load(args.config.as_deref())?;
    let roots = args.catalog.roots()?;
    if roots.is_empty() {
        anyhow::bail!(
            "nothing to publish: name the tool roots (--tools-dir DIR or --data DATA_PATH)"
        );
    }
    let login = args.cluster.login(&config.cluster, "gateway")?;
    run_to_end(serving_runtime()?, async move {
        let store = args
            .store
            .open(&config)
            .await?
            .context("publishing needs the fleet's store: --database postgres://…")?;
        let client = match &login {
            Some(login) => Some(login.connect_within(Duration::ZERO).await?),
            None => None,
        };
        let publisher = login
            .as_ref()
            .map_or_else(|| "toolhost".to_string(), |l| l.node.clone());
        let bundles = toolhost_fleet::Bundles::new(store.clone());
        let once = || async {
            let outcome = toolhost_fleet::catalog::publish(&store, &bundles, &roots, &publisher)
                .await
                .map_err(anyhow::Error::msg)?;
            match outcome {
                PublishOutcome::Published { epoch, folders } => {
                    eprintln!("published the catalog's epoch {epoch} ({folders} tool folders)");
                    if let Some(client) = &client {
                        toolhost_fleet::gateway::publish_catalog_change(client, epoch).await?;
                    }
                }
                PublishOutcome::Unchanged { epoch } => {
                    eprintln!("the catalog is unchanged (epoch {epoch})");
                }
            }
            anyhow::Ok(())
        };
        once().await?;
        if !args.watch {
            return Ok(ExitCode::SUCCESS);
        }
        // Any file: an edit to a tool's code changes its bundle, not only its TOOL.md.
        let mut edits = toolhost_fleet::catalog::watch(&roots, Duration::from_millis(50))
            .map_err(anyhow::Error::msg)?;
        let stop = tokio_util::sync::CancellationToken::new();
        cancel_on_signal(stop.clone());
        eprintln!("watching the tool roots; publishing after every edit (Ctrl-C to stop)");
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                edit = edits.recv() => {
                    if edit.is_none() {
                        break;
                    }
                    if let Err(e) = once().await {
                        crate::warn(&format!("publishing failed: {e:#}"));
                    }
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn status(args: StatusArgs) -> Result<ExitCode> {
    let config = ConfigFile::load(args.config.as_deref())?;
    let Some(login) = args.cluster.login(&config.cluster, "gateway")? else {
        anyhow::bail!("which fleet? --nats URL or [cluster] nats");
    };
    run_to_end(serving_runtime()?, async move {
        let client = login.connect_within(Duration::ZERO).await?;
        let (runners, gateways) = (Members::default(), Members::default());
        let mut heard = client
            .subscribe(wire::RUNNERS)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut heard_gateways = client
            .subscribe(wire::GATEWAYS)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        // Every node announces itself each second.
        let until = tokio::time::Instant::now() + Duration::from_millis(1500);
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(until) => break,
                Some(m) = heard.next() => {
                    if let Ok(a) = serde_json::from_slice(&m.payload) { runners.heard(a); }
                }
                Some(m) = heard_gateways.next() => {
                    if let Ok(a) = serde_json::from_slice(&m.payload) { gateways.heard(a); }
                }
            }
        }
        let (gateways, runners) = (gateways.announcements(), runners.announcements());
        if args.json {
            println!(
                "{}",
                serde_json::json!({"gateways": gateways, "runners": runners})
            );
            return Ok(ExitCode::SUCCESS);
        }
        println!(
            "{:<24} {:<8} {:<10} {:>8} {:>6} {:>10} {:>8} {:>6}",
            "NODE", "ROLE", "VERSION", "RUNNING", "SLOTS", "FINISHED", "WORKERS", "EPOCH"
        );
        for a in gateways.iter().chain(&runners) {
            println!(
                "{:<24} {:<8} {:<10} {:>8} {:>6} {:>10} {:>8} {:>6}",
                a.node, a.role, a.version, a.running, a.slots, a.finished, a.workers, a.epoch
            );
        }
        if runners.is_empty() {
            eprintln!("no runner announced itself: calls to folder tools cannot run");
        }
        Ok(ExitCode::SUCCESS)
    })
}
