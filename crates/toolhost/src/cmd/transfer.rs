//! `toolhost export` and `toolhost import`: the store's agents and MCP servers as TOML in
//! toolhost.toml's own format (`[agents.ID]`, `[mcp_servers.NAME]`), so that they move
//! between the store and the configuration file, or from one store to another.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use toolhost_host::ConfigFile;
use toolhost_mcp_client::McpServerConfig;
use toolhost_runtime::ServerLauncher;
use toolhost_store::{AgentSpec, Store, StoreError};
use toolhost_toolsets::AgentConfig;

use crate::store_args::StoreArgs;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// Write secrets (MCP servers' bearer tokens, header and env values) in clear. Without
    /// it they are written as "" and must be filled in before the file is used.
    #[arg(long)]
    include_secrets: bool,
    /// The configuration file (for [store]).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// The TOML file (`-` for stdin): `[agents.ID]` and `[mcp_servers.NAME]` sections, as
    /// in toolhost.toml or as `export` writes them.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Replace stored agents and servers of the same name (without it they are errors).
    #[arg(long)]
    replace: bool,
    /// Check the file and say what would change, changing nothing.
    #[arg(long)]
    dry_run: bool,
    /// The configuration file (for [store], and the names it already defines).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

/// What moves: toolhost.toml's two sections.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Transfer {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    agents: BTreeMap<String, AgentConfig>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    mcp_servers: BTreeMap<String, McpServerConfig>,
}

fn open(store: &StoreArgs, config: &ConfigFile) -> Result<(tokio::runtime::Runtime, Store)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let Some(store) = runtime.block_on(store.open(config))? else {
        bail!("--no-store: there is nothing to export or import into");
    };
    Ok((runtime, store))
}

pub fn export(args: ExportArgs) -> Result<ExitCode> {
    let config = ConfigFile::load(args.config.as_deref())?;
    let (runtime, store) = open(&args.store, &config)?;
    let transfer = runtime.block_on(async {
        let mut transfer = Transfer::default();
        let mut after = String::new();
        loop {
            let page = store.agents(Some(&after), 500).await?;
            for agent in &page.items {
                transfer
                    .agents
                    .insert(agent.id.clone(), agent.spec.to_config());
            }
            match page.next {
                Some(next) => after = next,
                None => break,
            }
        }
        for server in store.mcp_servers().await? {
            let mut c = server.config;
            if !args.include_secrets {
                if c.bearer_token.is_some() {
                    c.bearer_token = Some(String::new());
                }
                c.headers.values_mut().for_each(String::clear);
                c.env.values_mut().for_each(String::clear);
            }
            transfer.mcp_servers.insert(server.name, c);
        }
        store.close().await;
        Ok::<_, StoreError>(transfer)
    })?;
    let text = toml::to_string_pretty(&transfer).context("cannot write the TOML")?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "# Agents and MCP servers of the store at {}, as toolhost.toml sections.",
        store.location().shown()
    )?;
    if !args.include_secrets && !transfer.mcp_servers.is_empty() {
        writeln!(
            out,
            "# Secrets (bearer_token, headers and env values) are left empty: fill them in, or \
             export with --include-secrets."
        )?;
    }
    write!(out, "{text}")?;
    Ok(ExitCode::SUCCESS)
}

pub fn import(args: ImportArgs) -> Result<ExitCode> {
    let config = ConfigFile::load(args.config.as_deref())?;
    let text = if args.file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        std::fs::read_to_string(&args.file)
            .with_context(|| format!("cannot read {}", args.file.display()))?
    };
    let shown = args.file.display().to_string();
    let transfer: Transfer = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    // Everything is checked before anything is written.
    let launcher = ServerLauncher::new(&config.runtime);
    toolhost_mcp_client::sources(&transfer.mcp_servers, &launcher)
        .with_context(|| format!("{shown}: [mcp_servers]"))?;
    let mut specs = Vec::new();
    for (id, agent) in &transfer.agents {
        let spec = AgentSpec::from_config(id, agent);
        spec.validate()
            .with_context(|| format!("{shown}: [agents.{id}]"))?;
        specs.push((id.clone(), spec));
    }
    for id in transfer.agents.keys() {
        if config.agents.contains_key(id) {
            bail!("{shown}: agent `{id}` is defined by toolhost.toml already");
        }
    }
    for name in transfer.mcp_servers.keys() {
        if config.mcp_servers.contains_key(name) {
            bail!("{shown}: MCP server `{name}` is defined by toolhost.toml already");
        }
    }
    let (runtime, store) = open(&args.store, &config)?;
    let actor = "toolhost import";
    let mut out = std::io::stdout().lock();
    let result: Result<()> = runtime.block_on(async {
        for (id, spec) in specs {
            let existing = store.agent(&id).await?;
            let verb = match (&existing, args.replace) {
                (Some(_), false) => {
                    bail!("agent `{id}` is stored already: pass --replace to replace it")
                }
                (Some(_), true) => "replace",
                (None, _) => "create",
            };
            writeln!(out, "{verb} agent {id}")?;
            if args.dry_run {
                continue;
            }
            match existing {
                Some(a) => drop(store.update_agent(actor, &id, spec, a.version).await?),
                None => drop(store.create_agent(actor, &id, spec).await?),
            }
        }
        for (name, server) in transfer.mcp_servers {
            let existing = store.mcp_server(&name).await?;
            let verb = match (&existing, args.replace) {
                (Some(_), false) => {
                    bail!("MCP server `{name}` is stored already: pass --replace to replace it")
                }
                (Some(_), true) => "replace",
                (None, _) => "create",
            };
            writeln!(out, "{verb} MCP server {name}")?;
            if args.dry_run {
                continue;
            }
            match existing {
                Some(s) => drop(
                    store
                        .update_mcp_server(actor, &name, server, s.version)
                        .await?,
                ),
                None => drop(store.create_mcp_server(actor, &name, server).await?),
            }
        }
        Ok(())
    });
    runtime.block_on(store.close());
    result?;
    if args.dry_run {
        writeln!(out, "(dry run: nothing changed)")?;
    }
    Ok(ExitCode::SUCCESS)
}
