//! `toolhost sandbox status [--json]`: which isolation layers this machine offers, which
//! the configuration requires, and whether tools can run.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;
use toolhost_sandbox::Sandbox;

use toolhost_host::ConfigFile;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Show which layers are active on this machine, and why any is missing. Exit status
    /// 1 when the configuration requires a layer that is missing (tools would not run).
    Status {
        /// Print `{"enabled", "ready", "error", "layers": [{"name", "available", "detail"}]}`.
        #[arg(long)]
        json: bool,
        /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Command::Status { json, config } = args.command;
    let config = ConfigFile::load(config.as_deref())?;
    let enabled = config.sandbox.enabled;
    let sandbox = Sandbox::new(config.sandbox);
    let ready = sandbox.ready();
    let error = match (&ready, enabled) {
        (_, false) => Some("the sandbox is disabled by the configuration ([sandbox] enabled = false): tools run unconfined".to_string()),
        (Err(e), true) => Some(e.to_string()),
        (Ok(()), true) => None,
    };
    let code = if ready.is_ok() || !enabled {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if json {
        crate::output::print_json(&json!({
            "enabled": enabled,
            "ready": enabled && ready.is_ok(),
            "error": error,
            "layers": sandbox.layers(),
        }))?;
        return Ok(code);
    }
    let width = sandbox
        .layers()
        .iter()
        .map(|l| l.name.len())
        .max()
        .unwrap_or(0);
    for l in sandbox.layers() {
        let mark = if l.available { "yes" } else { "NO " };
        println!("{:width$}  {mark}  {}", l.name, l.detail);
    }
    match error {
        Some(e) if !enabled => println!("\nWARNING: {e}"),
        Some(e) => println!("\n{e}"),
        None => println!("\nready: every tool process runs in the sandbox"),
    }
    Ok(code)
}
