//! `toolhost list [--json] [--watch]`

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, RwLock};

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use toolhost_catalog::{Catalog, ResolvedTool, watch};

use crate::catalog_args::CatalogArgs;
use crate::output::{Tally, plural, print_json};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Print JSON instead of a table (with --watch: one line, then one line per change).
    #[arg(long)]
    json: bool,
    /// Keep running and print each change as tool folders are added, edited or removed.
    #[arg(long)]
    watch: bool,
}

/// The `list --json` shape; scripts depend on these field names.
#[derive(Serialize)]
struct ListedTool<'a> {
    name: &'a str,
    label: &'a str,
    description: &'a str,
    version: u64,
    language: &'a str,
    path: &'a Path,
    root: &'a Path,
    entry: &'a str,
    input_schema: &'a Value,
    sensitive_inputs: Vec<&'a str>,
    shadows: &'a [std::path::PathBuf],
    hash: String,
}

impl<'a> From<&'a ResolvedTool> for ListedTool<'a> {
    fn from(r: &'a ResolvedTool) -> Self {
        let t = &r.tool;
        ListedTool {
            name: &t.manifest.name,
            label: &t.manifest.label,
            description: &t.manifest.description,
            version: t.manifest.version,
            language: t.manifest.language.as_str(),
            path: &t.dir,
            root: &t.root,
            entry: t.entry.file_name,
            input_schema: t.input_schema(),
            sensitive_inputs: t.manifest.sensitive_inputs().collect(),
            shadows: &r.shadows,
            hash: t.hash.to_hex(),
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let catalog = args.catalog.scan()?;
    print_catalog(&catalog, args.json, args.watch)?;
    if !args.watch {
        return Ok(ExitCode::SUCCESS);
    }
    let catalog = Arc::new(RwLock::new(catalog));
    let watcher = watch::watch(Arc::clone(&catalog))?;
    let mut events = watcher.subscribe();
    eprintln!(
        "watching {} for changes (Ctrl-C to stop)",
        plural(catalog_roots(&catalog), "root")
    );
    loop {
        let event = match events.blocking_recv() {
            Ok(event) => event,
            Err(RecvError::Lagged(n)) => {
                // The catalog itself is current; only these notifications were dropped.
                eprintln!(
                    "warning: {n} change notifications were dropped; run `toolhost list` for the current catalog"
                );
                continue;
            }
            Err(RecvError::Closed) => break,
        };
        let mut out = std::io::stdout().lock();
        if args.json {
            let c = catalog.read().unwrap_or_else(|e| e.into_inner());
            let tool = c.get(&event.name).map(ListedTool::from);
            serde_json::to_writer(
                &mut out,
                &serde_json::json!({"kind": event.kind, "name": event.name, "tool": tool}),
            )?;
            writeln!(out)?;
        } else {
            let kind = serde_json::to_value(event.kind)?;
            writeln!(out, "{} {}", kind.as_str().unwrap_or("changed"), event.name)?;
        }
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

fn catalog_roots(catalog: &RwLock<Catalog>) -> usize {
    catalog
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .roots()
        .len()
}

fn print_catalog(catalog: &Catalog, json: bool, watch: bool) -> Result<()> {
    let tools: Vec<ListedTool> = catalog.tools().map(ListedTool::from).collect();
    if json && watch {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &tools)?;
        writeln!(out)?;
        out.flush()?;
    } else if json {
        print_json(&tools)?;
    } else {
        print_table(&tools)?;
    }
    let tally = Tally::of(&catalog.diagnostics());
    let mut summary = format!(
        "{} from {}",
        plural(tools.len(), "tool"),
        plural(catalog.roots().len(), "root")
    );
    if tally.errors > 0 {
        summary += &format!(
            "; {} in tool folders left tools out (run `toolhost check`)",
            plural(tally.errors, "error")
        );
    }
    eprintln!("{summary}");
    Ok(())
}

fn print_table(tools: &[ListedTool]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let name_w = tools.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    writeln!(
        out,
        "{:name_w$}  {:>7}  {:10}  PATH",
        "NAME", "VERSION", "LANGUAGE"
    )?;
    for t in tools {
        write!(
            out,
            "{:name_w$}  {:>7}  {:10}  {}",
            t.name,
            t.version,
            t.language,
            t.path.display()
        )?;
        for s in t.shadows {
            write!(out, "  (overrides {})", s.display())?;
        }
        writeln!(out)?;
    }
    Ok(())
}
