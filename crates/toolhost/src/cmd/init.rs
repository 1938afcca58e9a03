//! `toolhost init --data DATA_PATH [--dry-run] [--json]`: installs or updates Officer's
//! standard tools in `DATA_PATH/tools`, by version (as `sync` does from a seed folder).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::cmd::sync::{exit_code, print_items};
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    /// The data directory: the tools go into DATA_PATH/tools (created if missing).
    #[arg(long, value_name = "DATA_PATH")]
    data: PathBuf,
    /// Show what would happen without changing anything.
    #[arg(long)]
    dry_run: bool,
    /// Print `[{"name", "action", "seed_version", "target_version"}]`.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let items = crate::standard_tools::install(&args.data, args.dry_run)?;
    if args.json {
        print_json(&items)?;
    } else {
        print_items(&items, args.dry_run)?;
    }
    Ok(exit_code(&items))
}
