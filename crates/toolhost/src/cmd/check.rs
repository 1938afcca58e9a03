//! `toolhost check [PATH ...]`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use serde::Serialize;
use toolhost_catalog::check::{CheckReport, check_folder, check_root, is_tool_folder};
use toolhost_catalog::{Root, RootOrigin};

use crate::catalog_args::CatalogArgs;
use crate::output::{Tally, plural, print_diagnostics, print_json};
use toolhost_host::ConfigFile;

#[derive(clap::Args)]
pub struct Args {
    /// Tool folders, or roots of tool folders (default: the catalog's roots); or Platypus
    /// plugins (a package folder or its entry file), checked as boot would load them.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Print a JSON report instead of text.
    #[arg(long)]
    json: bool,
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
}

/// An icon name Lucide does not have (it shows as the wrench).
#[derive(Serialize)]
struct UnknownIcon {
    icon: String,
    tool_set: String,
    /// Empty for the tool set's own icon.
    #[serde(skip_serializing_if = "String::is_empty")]
    tool: String,
}

/// A tool whose chat icon falls back to the wrench.
#[derive(Serialize)]
struct Wrench {
    tool: String,
    tool_set: String,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(flatten)]
    report: &'a CheckReport,
    #[serde(flatten)]
    tally: Tally,
    /// Why the tool sets did not boot (counted in `errors`).
    #[serde(skip_serializing_if = "Option::is_none")]
    boot_error: Option<String>,
    /// Tools whose icon falls back to the wrench (not an error: a nudge to map them).
    wrench_icons: Vec<Wrench>,
    /// Icon names that are not Lucide's (each shows as the wrench; a warning).
    unknown_icons: Vec<UnknownIcon>,
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
    // Platypus plugins are checked as boot loads them.
    if !targets.is_empty() && targets.iter().all(|p| super::check_plugin::is_plugin(p)) {
        let config = ConfigFile::load(args.config.as_deref())?;
        return super::check_plugin::run(&targets, &config, args.json);
    }
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
    let mut tally = Tally::of(&report.diagnostics);
    // The same roots as tool sets, with the core plugins: boot problems are check errors.
    let roots = targets
        .iter()
        .filter_map(|p| {
            let root = if is_tool_folder(p) { p.parent()? } else { p };
            Some(Root {
                path: root.to_path_buf(),
                origin: RootOrigin::Flag,
            })
        })
        .collect();
    let config = ConfigFile::load(args.config.as_deref())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (wrench, unknown, boot_error) = rt.block_on(async {
        match crate::registry::boot(&config, roots, None, None).await {
            Ok(registry) => {
                let found = (registry.wrench_tools(), registry.unknown_icons(), None);
                registry.shutdown().await;
                found
            }
            Err(e) => (Vec::new(), Vec::new(), Some(e)),
        }
    });
    // A tool folder's whole root boots with it: name only the tools that were checked.
    let checked: std::collections::HashSet<&str> = report
        .folders
        .iter()
        .filter_map(|f| f.name.as_deref())
        .collect();
    let wrench: Vec<Wrench> = wrench
        .into_iter()
        .filter(|(tool, _)| checked.contains(tool.as_str()))
        .map(|(tool, tool_set)| Wrench { tool, tool_set })
        .collect();
    // As with the wrench: only the sets of the tools checked (or the set of a root).
    let unknown: Vec<UnknownIcon> = unknown
        .into_iter()
        .filter(|(_, _, tool)| tool.is_empty() || checked.contains(tool.as_str()))
        .map(|(icon, tool_set, tool)| UnknownIcon {
            icon,
            tool_set,
            tool,
        })
        .collect();
    tally.warnings += unknown.len();
    let boot_error = boot_error.map(|e| format!("{e:#}"));
    if let Some(e) = &boot_error {
        tally.errors += 1;
        eprintln!("error: {e}");
    }
    if args.json {
        print_json(&JsonReport {
            report: &report,
            tally,
            boot_error: boot_error.clone(),
            wrench_icons: wrench,
            unknown_icons: unknown,
        })?;
    } else {
        print_diagnostics(&mut std::io::stdout().lock(), &report.diagnostics)?;
        for u in &unknown {
            let whose = if u.tool.is_empty() {
                format!("tool set `{}`", u.tool_set)
            } else {
                format!("tool `{}` (tool set `{}`)", u.tool, u.tool_set)
            };
            eprintln!(
                "warning: {whose} names the icon `{}`, which is not a Lucide icon: it shows as the wrench (see lucide.dev/icons)",
                u.icon
            );
        }
        for w in &wrench {
            eprintln!(
                "note: `{}` (tool set `{}`) falls back to the wrench icon: give the set an `icon` or the tool an override",
                w.tool, w.tool_set
            );
        }
        let ok = report.folders.iter().filter(|f| f.ok).count();
        eprintln!(
            "checked {}: {} ok, {}, {}",
            plural(report.folders.len(), "tool"),
            ok,
            plural(tally.errors, "error"),
            plural(tally.warnings, "warning")
        );
    }
    Ok(if report.has_errors() || boot_error.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
