//! `toolhost`: the one binary. Each subcommand lives in `cmd/`.

mod catalog_args;
mod cmd;
mod config;
mod output;
mod registry;
mod users;

use std::process::ExitCode;

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
}

#[derive(Subcommand)]
enum Command {
    /// Check tool folders and report problems like a compiler.
    Check(cmd::check::Args),
    /// List the tools of the resolved catalog.
    List(cmd::list::Args),
    /// Copy seed tools into a target directory when the seed's version is higher.
    Sync(cmd::sync::Args),
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
    /// Make and hash bearer tokens for `serve`.
    Token(cmd::token::Args),
}

fn main() -> ExitCode {
    // The sandbox's helper modes run before anything could start a thread (unshare and
    // the uid change need a single-threaded process).
    if let Some(code) = toolhost_runtime::sandbox::helper_main() {
        return code;
    }
    init_logging();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::List(args) => cmd::list::run(args),
        Command::Sync(args) => cmd::sync::run(args),
        Command::New(args) => cmd::new::run(args),
        Command::Call(args) => cmd::call::run(args),
        Command::Sandbox(args) => cmd::sandbox::run(args),
        Command::Plugins(args) => cmd::plugins::run(args),
        Command::Resolve(args) => cmd::resolve::run(args),
        Command::Doctor(args) => cmd::doctor::run(args),
        Command::Mcp(args) => cmd::mcp::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Token(args) => cmd::token::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Logs go to stderr (stdout carries command output, and later the MCP stdio stream).
fn init_logging() {
    // rmcp logs every JSON-RPC error response (unknown tool, cancelled call) as a warning;
    // those are answers to clients, not problems of the host.
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=error"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}
