//! Where every tool process starts, so that all of them get the same treatment.

use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::RuntimeError;

/// Starts `program args…` as a tool process: only the given environment, the given
/// working directory, its own process group (so it and everything it starts can be
/// killed at once), killed if its handle is dropped, stdout and stderr piped. The
/// sandbox, when it lands, wraps this one function.
pub(crate) fn start_tool_process(
    program: &Path,
    args: &[&std::ffi::OsStr],
    env: impl IntoIterator<Item = (String, String)>,
    cwd: &Path,
    stdin: Stdio,
) -> Result<(Child, i32), RuntimeError> {
    let child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| RuntimeError::Spawn {
            program: program.to_path_buf(),
            source: e,
        })?;
    let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    Ok((child, pgid))
}
