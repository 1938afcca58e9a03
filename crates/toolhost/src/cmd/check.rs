//! `toolhost check [PATH ...]`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use serde::Serialize;
use toolhost_catalog::check::{CheckReport, check_folder, check_root, is_tool_folder};

use crate::catalog_args::CatalogArgs;
use crate::output::{Tally, plural, print_diagnostics, print_json};

#[derive(clap::Args)]
pub struct Args {
    /// Tool folders, or roots of tool folders (default: the catalog's roots).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Print a JSON report instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(flatten)]
    report: &'a CheckReport,
    #[serde(flatten)]
    tally: Tally,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let targets: Vec<PathBuf> = if args.paths.is_empty() {
        args.catalog.roots()?.into_iter().map(|r| r.path).collect()
    } else {
        if !args.catalog.is_empty() {
            bail!("give either PATHs or catalog flags (--tools-dir, --data, --user), not both");
        }
        args.paths
    };
    let mut report = CheckReport::default();
    for path in &targets {
        if !path.exists() {
            bail!("{} does not exist", path.display());
        }
        if !path.is_dir() {
            bail!(
                "{} is not a directory: pass a tool folder or a folder of tools",
                path.display()
            );
        }
        let part = if is_tool_folder(path) {
            check_folder(path)
        } else {
            check_root(path)
        };
        report.folders.extend(part.folders);
        report.diagnostics.extend(part.diagnostics);
    }
    let tally = Tally::of(&report.diagnostics);
    if args.json {
        print_json(&JsonReport {
            report: &report,
            tally,
        })?;
    } else {
        print_diagnostics(&mut std::io::stdout().lock(), &report.diagnostics)?;
        let ok = report.folders.iter().filter(|f| f.ok).count();
        eprintln!(
            "checked {}: {} ok, {}, {}",
            plural(report.folders.len(), "tool"),
            ok,
            plural(tally.errors, "error"),
            plural(tally.warnings, "warning")
        );
    }
    Ok(if report.has_errors() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
