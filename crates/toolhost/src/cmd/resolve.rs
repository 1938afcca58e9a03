//! `toolhost resolve --agent ID [--workspace W --user U ...] [--json]`: the tools an agent
//! sees this turn, their owners, and the warnings and collisions of the resolution.

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;
use toolhost_toolsets::TurnRequest;

use crate::catalog_args::CatalogArgs;
use crate::output::{plural, print_json};
use crate::registry::RegistryArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The agent (`[agents.ID]` in toolhost.toml).
    #[arg(long)]
    agent: String,
    #[command(flatten)]
    turn: TurnArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    host: RegistryArgs,
}

/// The turn's context (`--user` is the catalog flag: the same user).
#[derive(clap::Args)]
pub struct TurnArgs {
    /// The workspace the turn runs in.
    #[arg(long, value_name = "ID")]
    workspace: Option<String>,
    /// The organisation.
    #[arg(long, value_name = "ID")]
    org: Option<String>,
    /// The frontend's URL (for links tools put in their results).
    #[arg(long, value_name = "URL")]
    frontend_url: Option<String>,
}

impl TurnArgs {
    pub fn request(&self, catalog: &CatalogArgs) -> TurnRequest {
        TurnRequest {
            workspace_id: self.workspace.clone(),
            org_id: self.org.clone(),
            user_id: catalog.user.clone(),
            frontend_url: self.frontend_url.clone(),
        }
    }
}

#[derive(Serialize)]
struct ToolView<'a> {
    #[serde(flatten)]
    tool: &'a toolhost_toolsets::ResolvedTool,
    description: String,
    input_schema: serde_json::Value,
    annotations: &'a toolhost_toolsets::Annotations,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let req = args.turn.request(&args.host.catalog);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let registry = args.host.boot().await?;
        let turn = registry.resolve(&args.agent, &req).await?;
        if args.json {
            let tools: Vec<ToolView> = turn
                .tools
                .iter()
                .map(|t| ToolView {
                    tool: t,
                    description: t.description(),
                    input_schema: t.input_schema(),
                    annotations: t.annotations(),
                })
                .collect();
            print_json(&serde_json::json!({
                "agent": turn.agent,
                "tools": tools,
                "warnings": turn.warnings,
                "collisions": turn.collisions,
                "excluded": turn.excluded,
            }))?;
        } else {
            for t in &turn.tools {
                let also = if t.also_in.is_empty() {
                    String::new()
                } else {
                    format!(" (also in {})", t.also_in.join(", "))
                };
                println!(
                    "{}  {} ({}){also}  icon {}",
                    t.name, t.claim.set, t.claim.owner, t.icon
                );
            }
            for w in &turn.warnings {
                eprintln!("warning: {}: {}", w.source, w.message);
            }
            for c in &turn.collisions {
                eprintln!(
                    "collision: `{}`: {} ({}, {:?} layer) shadows {} ({}, {:?} layer)",
                    c.name,
                    c.winner.set,
                    c.winner.owner,
                    c.winner.layer,
                    c.shadowed.set,
                    c.shadowed.owner,
                    c.shadowed.layer
                );
            }
            eprintln!(
                "agent `{}`: {}, {}, {}",
                turn.agent,
                plural(turn.tools.len(), "tool"),
                plural(turn.warnings.len(), "warning"),
                plural(turn.collisions.len(), "collision")
            );
        }
        turn.end().await;
        registry.shutdown().await;
        Ok(ExitCode::SUCCESS)
    })
}
