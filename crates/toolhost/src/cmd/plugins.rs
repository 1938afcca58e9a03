//! `toolhost plugins [--json]`: plugins with their origin and gating, their tool sets and
//! tools; then the tool roots' sets and the MCP servers.

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;
use toolhost_toolsets::{Owner, SetEntry};

use crate::output::print_json;
use crate::registry::RegistryArgs;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    host: RegistryArgs,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Seal a credential of a third-party plugin in the store (read from stdin), for
    /// `[plugins.PLUGIN] credentials.KEY = { secret = "NAME" }`.
    Secret(super::plugin_secret::Args),
}

#[derive(Serialize)]
struct SetView {
    id: String,
    name: String,
    category: String,
    description: String,
    icon: Option<String>,
    owner: Owner,
    /// `static` or `factory` (resolved per turn).
    tools_kind: &'static str,
    tools: Vec<String>,
}

#[derive(Serialize)]
struct ServerView {
    name: String,
    transport: String,
}

#[derive(Serialize)]
struct Report<'a> {
    plugins: &'a [toolhost_toolsets::PluginInfo],
    tool_sets: Vec<SetView>,
    mcp_servers: Vec<ServerView>,
}

fn view(e: &SetEntry) -> SetView {
    SetView {
        id: e.set.id.clone(),
        name: e.set.name.clone(),
        category: e.set.category.clone(),
        description: e.set.description.clone(),
        icon: e.set.icon.clone(),
        owner: e.owner.clone(),
        tools_kind: e.set.tools.kind(),
        tools: e.set.known_tools(),
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    if let Some(Command::Secret(secret)) = args.command {
        return super::plugin_secret::run(secret);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let registry = args.host.boot().await?;
        let code = report(&registry, args.json);
        registry.shutdown().await;
        code
    })
}

fn report(registry: &toolhost_toolsets::Registry, json: bool) -> Result<ExitCode> {
    let report = Report {
        plugins: registry.plugins(),
        tool_sets: registry.tool_sets().map(view).collect(),
        mcp_servers: registry
            .external_sources()
            .into_iter()
            .map(|s| ServerView {
                name: s.name().to_string(),
                transport: s.transport(),
            })
            .collect(),
    };
    if json {
        print_json(&report)?;
    } else {
        print_text(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_text(report: &Report) {
    for p in report.plugins {
        let gating = p.gating.describe();
        match (&p.version, p.api_version) {
            (Some(v), Some(api)) => {
                println!("{} {v} ({}, {gating}, plugin API v{api})", p.name, p.origin)
            }
            _ => println!("{} ({}, {gating})", p.name, p.origin),
        }
        if let Some(entry) = &p.entry {
            println!("  from {}", entry.display());
        }
        for note in &p.notes {
            println!("  note: {note}");
        }
        for id in &p.tool_sets {
            if let Some(set) = report.tool_sets.iter().find(|s| &s.id == id) {
                print_set(set);
            }
        }
    }
    let roots: Vec<&SetView> = report
        .tool_sets
        .iter()
        .filter(|s| matches!(s.owner, Owner::Folder { .. }))
        .collect();
    if !roots.is_empty() {
        println!("tool roots");
        for set in roots {
            print_set(set);
        }
    }
    if !report.mcp_servers.is_empty() {
        println!("MCP servers (tools named SERVER__TOOL, listed per turn)");
        for s in &report.mcp_servers {
            println!("  {}  {}", s.name, s.transport);
        }
    }
}

fn print_set(set: &SetView) {
    let icon = set.icon.as_deref().unwrap_or("wrench (no icon)");
    let origin = match &set.owner {
        Owner::Folder { root } => format!(", {}", root.display()),
        _ => String::new(),
    };
    println!(
        "  {}  \"{}\" [{}] icon {icon}, {} tools{origin}",
        set.id, set.name, set.category, set.tools_kind
    );
    if !set.tools.is_empty() {
        println!("    {}", set.tools.join(", "));
    }
}
