//! `toolhost sandbox status [--json]`: which isolation layers this machine offers.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use toolhost_runtime::sandbox::probe_here;

/// The hidden argument that runs the probe in a fresh, single-threaded process.
pub const PROBE_MODE: &str = "__sandbox-probe";

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Show which layers are active on this machine, and why any is missing.
    Status {
        /// Print `[{"name", "available", "detail"}]`.
        #[arg(long)]
        json: bool,
    },
}

/// The probe mode: unshares namespaces in this process, so it runs before anything starts
/// a thread, prints JSON and exits.
pub fn probe_mode() -> ExitCode {
    match serde_json::to_string(&probe_here()) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(_) => ExitCode::FAILURE,
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Command::Status { json } = args.command;
    let exe = std::env::current_exe().context("cannot find the toolhost executable")?;
    let out = std::process::Command::new(&exe)
        .arg(PROBE_MODE)
        .output()
        .context("cannot run the sandbox probe")?;
    if !out.status.success() {
        bail!(
            "the sandbox probe failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let layers: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).context("the sandbox probe printed no JSON")?;
    if json {
        crate::output::print_json(&layers)?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = layers
        .iter()
        .filter_map(|l| l["name"].as_str())
        .map(str::len)
        .max()
        .unwrap_or(0);
    for l in &layers {
        let mark = if l["available"] == true { "yes" } else { "NO " };
        println!(
            "{:width$}  {mark}  {}",
            l["name"].as_str().unwrap_or_default(),
            l["detail"].as_str().unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}
