//! Where every tool process starts, so that all of them get the same treatment: only the
//! environment `ToolEnv` builds, their own process group (so they and everything they
//! start can be killed at once), killed when their handle is dropped, stdout and stderr
//! piped, and, unless the operator turned it off, the sandbox around them.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::RuntimeError;
use crate::config::{ToolEnv, UserSpace};
use crate::sandbox::{Launch, LaunchArg, Lease, Refill, Sandbox, View};

/// One tool process to start; paths are host paths.
pub(crate) struct ToolProcess<'a> {
    pub program: &'a Path,
    pub args: Vec<LaunchArg>,
    pub cwd: &'a Path,
    pub space: &'a UserSpace,
    pub env: &'a ToolEnv,
    pub extra_env: Vec<(String, String)>,
    /// Whether the caller writes to the process's stdin (else it reads nothing).
    pub stdin: bool,
    pub network: bool,
    /// One process per call (Python, Bash), as opposed to a long-lived worker.
    pub per_call: bool,
    /// Read-write directories the process needs besides the user's view (a worker's
    /// socket directory), mounted at the given path.
    pub extra: Vec<(PathBuf, PathBuf)>,
}

/// Where tool processes start: with or without the sandbox.
#[derive(Clone, Debug)]
pub(crate) struct Launcher {
    pub sandbox: Option<std::sync::Arc<Sandbox>>,
    pub cache_dir: PathBuf,
}

pub(crate) struct Started {
    pub child: Child,
    pub pgid: i32,
    /// The sandbox's cgroups: drop once the process has been reaped.
    pub lease: Option<Lease>,
    /// How host paths appear to the process (none without a sandbox: as they are).
    pub view: Option<View>,
    /// Drop once the call that needed the process is done: then the sandbox replaces
    /// the spare helper it used.
    pub refill: Option<Refill>,
}

impl Launcher {
    pub async fn start(&self, p: ToolProcess<'_>) -> Result<Started, RuntimeError> {
        let Some(sandbox) = &self.sandbox else {
            let mut env = p.env.for_user(p.space);
            env.extend(p.extra_env);
            let args: Vec<std::ffi::OsString> = p
                .args
                .into_iter()
                .map(|a| match a {
                    LaunchArg::Text(t) => t.into(),
                    LaunchArg::Path(p) => p.into_os_string(),
                })
                .collect();
            let stdin = if p.stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            };
            return spawn(p.program, &args, env, p.cwd, stdin);
        };
        // Before anything is mounted or handed to the user's uid.
        crate::home::prepare(p.space, p.env, &self.cache_dir)?;
        let roots = p.env.roots_for(p.space);
        let view = View::new(&p.space.home, &roots, &self.cache_dir, p.env.email_db());
        sandbox.prepare_home(&p.space.home, &p.space.user, &roots)?;
        let mut env = p.env.for_view(&view);
        env.extend(p.extra_env);
        let spec = sandbox.spec(
            Launch {
                program: p.program,
                args: p.args,
                cwd: p.cwd,
                user: &p.space.user,
                view: &view,
                extra: p
                    .extra
                    .into_iter()
                    .map(|(source, target)| crate::sandbox::layout::rw(source, target))
                    .collect(),
                network: p.network,
                per_call: p.per_call,
            },
            env,
        )?;
        let (mut child, lease, refill) = sandbox.start(spec).await?;
        if !p.stdin {
            // EOF right after the spec: the tool reads nothing.
            drop(child.stdin.take());
        }
        let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        Ok(Started {
            child,
            pgid,
            lease,
            view: Some(view),
            refill: Some(refill),
        })
    }
}

impl Launcher {
    /// Gives `paths` to the uid `user`'s sandboxed tools run as, so they can use them
    /// (a worker's socket). Nothing to do without a sandbox or on an unprivileged host.
    pub fn hand_over(&self, user: &str, paths: &[&Path]) -> Result<(), RuntimeError> {
        let Some(sandbox) = &self.sandbox else {
            return Ok(());
        };
        if !rustix::process::getuid().is_root() {
            return Ok(());
        }
        let uid = sandbox.uid_for(user);
        for p in paths {
            std::os::unix::fs::chown(p, Some(uid), Some(uid))
                .map_err(|e| RuntimeError::io(p, e))?;
        }
        Ok(())
    }
}

fn spawn(
    program: &Path,
    args: &[std::ffi::OsString],
    env: Vec<(String, String)>,
    cwd: &Path,
    stdin: Stdio,
) -> Result<Started, RuntimeError> {
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
    Ok(Started {
        child,
        pgid,
        lease: None,
        view: None,
        refill: None,
    })
}
