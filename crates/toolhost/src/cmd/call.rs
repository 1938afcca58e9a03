//! `toolhost call NAME [--agent ID] [--args JSON] [KEY=VALUE ...] [--json] [--timeout SECS]`

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use toolhost_host::{CallTrace, ConfigFile, Host, HostOptions};
use toolhost_runtime::{CallEvent, Target, ToolRef};

use crate::catalog_args::CatalogArgs;
use crate::store_args::{close_persisted, named_persisted};

#[derive(clap::Args)]
pub struct Args {
    /// The tool to call.
    name: String,
    /// Call it as this agent's tool (`[agents.ID]` or a stored agent): among the tools its
    /// tool sets give it this turn (plugins' and MCP servers' too), instead of the catalog.
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
    /// Parameters as `KEY=VALUE` (a string; numbers and booleans are coerced to the
    /// tool's schema) or `KEY:=JSON` (any JSON value).
    #[arg(value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// All parameters as one JSON object (KEY=VALUE pairs are applied on top).
    #[arg(long, value_name = "JSON")]
    args: Option<String>,
    /// Print the whole result as JSON: {"content": [...], "isError": bool}.
    #[arg(long)]
    json: bool,
    /// Deadline in seconds (default: the tool's `timeout`, else the configuration's).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// The configuration file (default: $TOOLHOST_CONFIG, else ./toolhost.toml if present).
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Record the call in the call log of this store (a postgres:// URL or an SQLite file;
    /// default: $TOOLHOST_DATABASE_URL, else [store] url, else none: a call from the
    /// command line is recorded only in a store that is named).
    #[arg(long, value_name = "URL")]
    database: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut config = ConfigFile::load(args.config.as_deref())?;
    // First: a name that breaks the user-name rule must not reach anything.
    let user =
        toolhost_host::user_space(args.catalog.data.as_deref(), args.catalog.user.as_deref())?;
    let params = parse_params(args.args.as_deref(), &args.params)?;
    let timeout = match args.timeout {
        Some(s) if s > 0.0 => match Duration::try_from_secs_f64(s) {
            Ok(d) => Some(d),
            Err(_) => bail!("--timeout {s} is too large (at most {} seconds)", u64::MAX),
        },
        Some(_) => bail!("--timeout must be a positive number of seconds"),
        None => None,
    };
    // One call, then exit: helpers started ahead of need would only cost.
    config.runtime.sandbox.spares = 0;
    let options = HostOptions {
        config,
        roots: args.catalog.roots()?,
        data: args.catalog.data.clone(),
        user: Some(user.user),
        tool_sets: args.agent.is_some(),
        watch: false,
        store: None,
        fleet: None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    crate::cmd::mcp::run_to_end(rt, async move {
        let mut options = options;
        let persisted = named_persisted(args.database.clone(), &options.config).await?;
        options.store = persisted
            .clone()
            .map(|p| Arc::new(p) as Arc<dyn toolhost_host::Persistence>);
        let host = Host::boot(options).await?;
        let mut caller = host.default_caller().clone();
        // The call log names the agent a call was made as.
        if let Some(agent) = &args.agent {
            caller.agent = Some(agent.clone());
        }
        // As an agent: this turn's tools; the turn ends (its closers run) after the call.
        let mut turn = None;
        let target = match &args.agent {
            Some(agent) => {
                let found = agent_target(&host, agent, caller.user(), &args.name).await;
                match found {
                    Ok((target, t)) => {
                        turn = Some(t);
                        target
                    }
                    Err(e) => {
                        host.shutdown().await;
                        return Err(e);
                    }
                }
            }
            None => {
                let found = host
                    .catalog()
                    .read()
                    .get(&args.name)
                    .map(|t| Arc::clone(&t.tool));
                let Some(tool) = found else {
                    let hint = did_you_mean(&host, &args.name);
                    host.shutdown().await;
                    bail!("{hint}");
                };
                Target::new(ToolRef::Folder(tool))
            }
        };
        let mut trace = CallTrace::begin(
            host.call_log(),
            &caller,
            &args.name,
            "cli",
            &params,
            &target,
        );
        let mut request = target.request(params, caller.space.clone());
        request.timeout = timeout;
        let mut call = host.runtime().call(request);
        let canceller = call.canceller();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ncancelling…");
                canceller.cancel();
            }
        });
        let mut status = StatusLine::new();
        let result = loop {
            match call.next().await {
                Some(CallEvent::Progress(p)) => status.show(&p.text()),
                Some(CallEvent::Done(r)) => break r,
                None => bail!("the call ended without a result"),
            }
        };
        status.clear();
        trace.finish(&result);
        drop(trace);
        if let Some(turn) = turn {
            let report = turn.end().await;
            for (set, e) in &report.failed {
                eprintln!("warning: a closer of tool set `{set}` failed: {e}");
            }
            for set in &report.timed_out {
                eprintln!("warning: the closers of tool set `{set}` did not finish in time");
            }
        }
        host.shutdown().await;
        close_persisted(persisted).await;
        let mut out = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut out, &result)?;
            writeln!(out)?;
        } else {
            let text = result.joined_text();
            if result.is_error {
                writeln!(std::io::stderr(), "error: {text}")?;
            } else {
                write!(out, "{text}")?;
                if !text.ends_with('\n') {
                    writeln!(out)?;
                }
            }
        }
        Ok(if result.is_error {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        })
    })
}

/// "No tool named …", with the nearest name in the catalog.
/// Tool `name` of `agent`'s turn for `user` now, and the turn (to end after the call).
async fn agent_target(
    host: &Host,
    agent: &str,
    user: &str,
    name: &str,
) -> Result<(Target, toolhost_toolsets::Turn)> {
    let Some(config) = host.agents().agent(agent).await? else {
        bail!(
            "no agent `{agent}`: toolhost.toml has no [agents.{agent}], and no stored agent has that id"
        );
    };
    let Some(turn) = host.agent_turn(agent, &config, user, None, None).await else {
        bail!("this host serves no tool sets");
    };
    for w in &turn.warnings {
        eprintln!("warning: {}: {}", w.source, w.message);
    }
    match turn.tool(name) {
        Some(t) => Ok((t.target(), turn)),
        None => {
            let names: Vec<String> = turn.tools.iter().map(|t| t.name.clone()).collect();
            turn.end().await;
            bail!(
                "agent `{agent}` has no tool `{name}` this turn (it has: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
        }
    }
}

fn did_you_mean(host: &Host, name: &str) -> String {
    let catalog = host.catalog().read();
    let mut names: Vec<&str> = catalog
        .tools()
        .map(|t| t.tool.manifest.name.as_str())
        .collect();
    names.sort_by_key(|n| strsim(n, name));
    let hint = names
        .first()
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default();
    format!(
        "no tool named `{name}` in the catalog ({} tools: see `toolhost list`){hint}",
        catalog.len()
    )
}

/// `--args` then `KEY=VALUE` / `KEY:=JSON` pairs.
fn parse_params(json: Option<&str>, pairs: &[String]) -> Result<Value> {
    let mut map = match json {
        Some(text) => match serde_json::from_str(text).context("--args is not valid JSON")? {
            Value::Object(map) => map,
            _ => bail!("--args must be a JSON object, such as '{{\"query\": \"rust\"}}'"),
        },
        None => Map::new(),
    };
    for pair in pairs {
        if let Some((key, raw)) = pair.split_once(":=") {
            let value = serde_json::from_str(raw)
                .with_context(|| format!("{key}:= needs a JSON value, got {raw:?}"))?;
            map.insert(key.to_string(), value);
        } else if let Some((key, value)) = pair.split_once('=') {
            map.insert(key.to_string(), Value::String(value.to_string()));
        } else {
            bail!("parameter {pair:?} is not KEY=VALUE or KEY:=JSON");
        }
    }
    Ok(Value::Object(map))
}

/// Edit distance, for "did you mean".
fn strsim(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Progress on stderr: one live line on a terminal, plain lines otherwise.
struct StatusLine {
    live: bool,
    shown: bool,
}

impl StatusLine {
    fn new() -> Self {
        StatusLine {
            live: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn show(&mut self, text: &str) {
        let mut err = std::io::stderr().lock();
        let line = text.lines().last().unwrap_or_default();
        if self.live {
            let width = 100;
            let line: String = line.chars().take(width).collect();
            let _ = write!(err, "\r\x1b[2K⠿ {line}");
            self.shown = true;
        } else {
            let _ = writeln!(err, "progress: {}", text.replace('\n', "\n          "));
        }
        let _ = err.flush();
    }

    fn clear(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
