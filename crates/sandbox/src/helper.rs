//! The helper modes: what the binary hosting the sandbox runs before anything else.

use std::process::ExitCode;

use crate::{PROBE_MODE, SandboxError, fds, probe_here, spec, stage1};

/// Marks every descriptor this process inherited above stderr close-on-exec, so that no
/// process it starts (a tool, sandboxed or not, or an MCP server) inherits what the host's
/// own parent left open. Call it early in `main`, after [`helper_main`].
pub fn keep_inherited_descriptors() -> Result<(), SandboxError> {
    fds::cloexec_from_3().map_err(SandboxError::Inherited)
}

/// Runs the helper mode named by the process's first argument, if any. A binary that
/// hosts the runtime calls this first thing in `main`, before any thread starts:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     if let Some(code) = toolhost_sandbox::helper_main() {
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
