//! `toolhost doctor --agent ID --tool NAME`: why a tool is or is not visible to an agent.

use std::process::ExitCode;

use anyhow::Result;

use crate::cmd::resolve::TurnArgs;
use crate::output::print_json;
use crate::registry::RegistryArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The agent (`[agents.ID]` in toolhost.toml).
    #[arg(long)]
    agent: String,
    /// The tool name the model should see.
    #[arg(long)]
    tool: String,
    #[command(flatten)]
    turn: TurnArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    host: RegistryArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let req = args.turn.request(&args.host.catalog);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let diagnosis = rt.block_on(async {
        let registry = args.host.boot().await?;
        let diagnosis = registry.doctor(&args.agent, &args.tool, &req).await;
        registry.shutdown().await;
        anyhow::Ok(diagnosis)
    })?;
    if args.json {
        print_json(&diagnosis)?;
    } else {
        for s in &diagnosis.steps {
            println!(
                "{} {:<11} {}",
                if s.ok { "ok " } else { "no " },
                s.check,
                s.detail
            );
        }
        println!(
            "`{}` is {}visible to agent `{}`",
            diagnosis.tool,
            if diagnosis.visible { "" } else { "NOT " },
            diagnosis.agent
        );
    }
    Ok(if diagnosis.visible {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
