//! `toolhost sync SEED_DIR TARGET_DIR [--dry-run] [--json]`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use toolhost_catalog::sync::{SyncAction, SyncItem, SyncOptions, sync};

use crate::output::{print_diagnostics, print_json};

#[derive(clap::Args)]
pub struct Args {
    /// Folder of seed tools (each subfolder is one tool).
    seed_dir: PathBuf,
    /// Folder to sync into (created if missing), such as DATA_PATH/tools.
    target_dir: PathBuf,
    /// Show what would happen without changing anything.
    #[arg(long)]
    dry_run: bool,
    /// Print `[{"name", "action", "seed_version", "target_version"}]`.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let opts = SyncOptions {
        dry_run: args.dry_run,
        ..Default::default()
    };
    let items = sync(&args.seed_dir, &args.target_dir, &opts)?;
    if args.json {
        print_json(&items)?;
    } else {
        print_items(&items, args.dry_run)?;
    }
    Ok(exit_code(&items))
}

/// Failure when any tool was invalid or could not be copied.
pub fn exit_code(items: &[SyncItem]) -> ExitCode {
    let failed = items
        .iter()
        .any(|i| matches!(i.action, SyncAction::Invalid | SyncAction::Failed));
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// One line per tool, with its notes and diagnostics.
pub fn print_items(items: &[SyncItem], dry_run: bool) -> Result<()> {
    let name_w = items.iter().map(|i| i.name.len()).max().unwrap_or(0);
    for item in items {
        let version = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        let what = match (item.action, dry_run) {
            (SyncAction::Copied, true) => "would copy",
            (SyncAction::Copied, false) => "copied",
            (SyncAction::UpToDate, _) => "up to date",
            (SyncAction::KeptNewer, _) => "kept (target newer)",
            (SyncAction::Invalid, _) => "invalid",
            (SyncAction::Failed, _) => "failed",
        };
        println!(
            "{:name_w$}  {what:19}  seed {} → target {}",
            item.name,
            version(item.seed_version),
            version(item.target_version)
        );
        for note in &item.notes {
            let level = if item.action == SyncAction::UpToDate {
                "warning"
            } else {
                "note"
            };
            println!("  {level}: {note}");
        }
        print_diagnostics(&mut std::io::stdout().lock(), &item.diagnostics)?;
    }
    Ok(())
}
