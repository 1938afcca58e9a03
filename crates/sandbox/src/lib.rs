//! The embedded sandbox: every tool process starts inside it.
//!
//! The host never forks in its multi-threaded state to build a sandbox. It runs its own
//! binary in a hidden helper mode instead ([`helper_main`]), in two stages:
//!
//! 1. `__sandbox-exec` ([`stage1`]): joins the cgroups, opens the mount sources while it
//!    still can, drops to the user's uid, creates the namespaces and maps the uid.
//! 2. [`stage2`], forked by the first: PID 1 of the new PID namespace. Builds the new root
//!    ([`layout`]), pivots into it, applies limits, Landlock, capabilities and seccomp
//!    ([`confine`]), starts the tool and reaps until it exits.
//!
//! A networked tool gets its own network namespace too; the first stage stays on the
//! host's network and connects for it, where [`egress`] allows ([`supervise`], [`dns`]).
//!
//! [`host`] is the host's side: probing the machine, checking the configuration's
//! requirements, and turning a launch into a helper invocation ([`spec`]).

mod cgroup;
mod config;
mod confine;
mod dns;
pub mod egress;
mod fds;
mod filter;
mod handoff;
mod host;
pub mod layout;
mod notify;
mod probe;
mod quota;
mod spares;
mod spec;
mod stage1;
mod stage2;
mod supervise;
mod usage;

use std::process::ExitCode;

pub(crate) use cgroup::Lease;
pub use config::{NetworkPolicy, Requirement, SandboxConfig};
pub use host::Sandbox;
pub(crate) use host::{Launch, LaunchArg, Refill};
pub use layout::{CacheView, View};
pub use probe::{Layer, probe_here};
pub(crate) use quota::Watched;
pub(crate) use spec::Mount;

/// The hidden argument that probes the machine in a fresh, single-threaded process.
pub const PROBE_MODE: &str = "__sandbox-probe";

/// Marks every descriptor this process inherited above stderr close-on-exec, so that no
/// process it starts (a tool, sandboxed or not, or an MCP server) inherits what the host's
/// own parent left open. Call it early in `main`, after [`helper_main`].
pub fn keep_inherited_descriptors() -> Result<(), String> {
    fds::cloexec_from_3()
}

/// Runs the helper mode named by the process's first argument, if any. A binary that
/// hosts the runtime calls this first thing in `main`, before any thread starts:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     if let Some(code) = toolhost_runtime::sandbox::helper_main() {
///         return code;
///     }
///     // … the program proper …
///     std::process::ExitCode::SUCCESS
/// }
/// ```
pub fn helper_main() -> Option<ExitCode> {
    let mode = std::env::args_os().nth(1)?;
    if matches!(mode.to_str(), Some(PROBE_MODE | spec::EXEC_MODE))
        && let Err(why) = fds::close_from_3()
    {
        eprintln!("toolhost sandbox: cannot close inherited descriptors: {why}");
        return Some(ExitCode::from(spec::SETUP_FAILED as u8));
    }
    let run = match mode.to_str()? {
        PROBE_MODE => {
            return Some(match serde_json::to_string(&probe_here()) {
                Ok(json) => {
                    println!("{json}");
                    ExitCode::SUCCESS
                }
                Err(_) => ExitCode::FAILURE,
            });
        }
        spec::EXEC_MODE => stage1::run,
        _ => return None,
    };
    // Work that needs no spec first: a spare helper does it before it is needed.
    let ahead = stage1::Ahead::prepare();
    // Tells the host this helper is started: the first byte of its stdout, before the
    // tool's.
    if let Err(e) = rustix::io::write(rustix::stdio::stdout(), &[spec::READY]) {
        eprintln!("toolhost sandbox: cannot signal readiness: {e}");
        return Some(ExitCode::from(spec::SETUP_FAILED as u8));
    }
    let json = match spec::read_frame() {
        Ok(json) => json,
        Err(why) => {
            eprintln!("toolhost sandbox: {why}");
            return Some(ExitCode::from(spec::SETUP_FAILED as u8));
        }
    };
    Some(match run(&json, ahead) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(why) => {
            eprintln!("toolhost sandbox: {why}");
            ExitCode::from(spec::SETUP_FAILED as u8)
        }
    })
}
