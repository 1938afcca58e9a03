//! `toolhost`: the one binary. Each subcommand lives in `cmd/`.

mod catalog_args;
mod cluster_args;
mod cmd;
mod fleet_catalog;
mod output;
mod registry;
mod standard_tools;
mod store_args;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use clap::{Parser, Subcommand};

// Discovery and request handling allocate many small objects across threads; mimalloc
// makes a cold scan of 10,000 tools about a third faster than glibc's allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "toolhost",
    version,
    about = "Hosts the tools that AI agents call.",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Append logs to this file instead of stderr (`TOOLHOST_LOG` sets the level).
    #[arg(long, global = true, env = "TOOLHOST_LOG_FILE", value_name = "PATH")]
    log_file: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Check tool folders and report problems like a compiler.
    Check(cmd::check::Args),
    /// List the tools of the resolved catalog.
    List(cmd::list::Args),
    /// Copy seed tools into a target directory when the seed's version is higher.
    Sync(cmd::sync::Args),
    /// Install or update Officer's standard tools in DATA_PATH/tools, by version.
    Init(cmd::init::Args),
    /// Scaffold a new tool folder that passes `check`.
    New(cmd::new::Args),
    /// Call a tool and print its result (progress goes to stderr).
    Call(cmd::call::Args),
    /// Inspect the embedded sandbox.
    Sandbox(cmd::sandbox::Args),
    /// List plugins (origin, gating), their tool sets and tools, tool roots, MCP servers.
    Plugins(cmd::plugins::Args),
    /// Resolve a turn for an agent: its tools, owners, warnings and collisions.
    Resolve(cmd::resolve::Args),
    /// Explain why a tool is or is not visible to an agent.
    Doctor(cmd::doctor::Args),
    /// Serve the catalog to one MCP client on stdin/stdout (for a client's config).
    Mcp(cmd::mcp::Args),
    /// Run the server: MCP over Streamable HTTP at /mcp (127.0.0.1:7878 by default).
    Serve(cmd::serve::Args),
    /// The fleet: publish its catalog, show its gateways and runners.
    Cluster(cmd::cluster::Args),
    /// Run tool calls for a fleet's gateways (`serve` with `[cluster] nats`).
    Runner(cmd::runner::Args),
    /// Make and hash bearer tokens for `serve`.
    Token(cmd::token::Args),
    /// Print the store's agents and MCP servers as toolhost.toml sections.
    Export(cmd::transfer::ExportArgs),
    /// Store the agents and MCP servers of a TOML file (toolhost.toml's sections).
    Import(cmd::transfer::ImportArgs),
}

fn main() -> ExitCode {
    // The sandbox's helper modes run before anything could start a thread (unshare and
    // the uid change need a single-threaded process).
    if let Some(code) = toolhost_sandbox::helper_main() {
        return code;
    }
    // Descriptors our own parent left open are not for the tools we start.
    if let Err(why) = toolhost_sandbox::keep_inherited_descriptors() {
        eprintln!("warning: {why}");
    }
    let cli = Cli::parse();
    if let Err(e) = init_logging(cli.log_file.as_deref()) {
        eprintln!("error: {}", describe(&e));
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::List(args) => cmd::list::run(args),
        Command::Sync(args) => cmd::sync::run(args),
        Command::Init(args) => cmd::init::run(args),
        Command::New(args) => cmd::new::run(args),
        Command::Call(args) => cmd::call::run(args),
        Command::Sandbox(args) => cmd::sandbox::run(args),
        Command::Plugins(args) => cmd::plugins::run(args),
        Command::Resolve(args) => cmd::resolve::run(args),
        Command::Doctor(args) => cmd::doctor::run(args),
        Command::Mcp(args) => cmd::mcp::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Runner(args) => cmd::runner::run(args),
        Command::Cluster(args) => cmd::cluster::run(args),
        Command::Token(args) => cmd::token::run(args),
        Command::Export(args) => cmd::transfer::export(args),
        Command::Import(args) => cmd::transfer::import(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", describe(&e));
            ExitCode::from(2)
        }
    }
}

/// Set when logs go to `--log-file`: warnings then go there too.
static LOGS_TO_FILE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A warning for the operator: on stderr, or in the log file when there is one.
pub(crate) fn warn(text: &str) {
    if LOGS_TO_FILE.load(std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!("{text}");
    } else {
        eprintln!("warning: {text}");
    }
}

/// Logs go to stderr or to `--log-file`, never to stdout (command output, and the MCP
/// stdio stream).
///
/// `TOOLHOST_LOG` sets the level of Toolhost's own logs, which never hold a `sensitive`
/// input (the runtime logs each call's arguments redacted). Other libraries' logs are
/// capped at `warn` whatever it says: at `debug` and `trace` they print what they carry,
/// such as rmcp's every request with its tool arguments.
fn init_logging(file: Option<&Path>) -> anyhow::Result<()> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{Layer, filter};

    // rmcp logs every JSON-RPC error response (unknown tool, cancelled call) as a warning;
    // those are answers to clients, not problems of the host.
    let levels = filter::EnvFilter::try_from_env("TOOLHOST_LOG")
        .unwrap_or_else(|_| filter::EnvFilter::new("warn,rmcp=error"));
    let capped = filter::filter_fn(|meta| {
        let target = meta.target();
        target.starts_with("toolhost")
            || *meta.level() <= tracing::Level::ERROR
            || (*meta.level() <= tracing::Level::WARN && !target.starts_with("rmcp"))
    });
    let logs = tracing_subscriber::fmt::layer().with_target(false);
    let logs = match file {
        None => logs.with_writer(std::io::stderr).boxed(),
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open the log file {}", path.display()))?;
            LOGS_TO_FILE.store(true, std::sync::atomic::Ordering::Relaxed);
            logs.with_writer(std::sync::Mutex::new(file))
                .with_ansi(false)
                .boxed()
        }
    };
    tracing_subscriber::registry()
        .with(logs.with_filter(capped).with_filter(levels))
        .try_init()
        .context("cannot start logging")?;
    Ok(())
}

/// The error and its causes, `: `-joined as `{:#}` does, but without a cause the message
/// already ends with: many errors (ours and libraries') put their source in their own
/// message too, and "Not a directory (os error 20): Not a directory (os error 20)" says
/// nothing twice.
fn describe(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.is_empty() {
            text = part;
        } else if !text.ends_with(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
    }
    text
}
