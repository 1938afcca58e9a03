//! Where every tool process starts, so that all of them get the same treatment: only the
//! environment `ToolEnv` builds, their own process group (so they and everything they
//! start can be killed at once), killed when their handle is dropped, stdout and stderr
//! piped, and, unless the operator turned it off, the sandbox around them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::{Child, Command};

use crate::RuntimeError;
use crate::cache::Caches;
use crate::config::{ToolEnv, UserSpace};
use crate::tool_user::Ids;
use toolhost_sandbox::{
    CacheView, Launch, LaunchArg, Lease, Mount, Refill, Sandbox, SandboxError, View, Watched,
};

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
    /// Directories the process reads at their own paths (a plugin package and the
    /// `node_modules` folders it resolves from).
    pub read_only: Vec<PathBuf>,
}

/// Where tool processes start: with or without the sandbox.
#[derive(Clone, Debug)]
pub(crate) struct Launcher {
    pub sandbox: Option<Arc<Sandbox>>,
    pub caches: Caches,
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
    /// The home quota's watch over the sandbox: drop once the process has been reaped.
    /// When it says the sandbox was stopped, that is the error its calls end with.
    pub watched: Option<Watched>,
}

impl Launcher {
    pub(crate) async fn start(&self, p: ToolProcess<'_>) -> Result<Started, RuntimeError> {
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
        crate::home::prepare(p.space, p.env, &self.caches.root)?;
        let roots = p.env.roots_for(p.space);
        let transpiled = self.transpiled_dir(&p.space.user)?;
        let cache = CacheView {
            harness: &self.caches.harness,
            transpiled: &transpiled,
        };
        let view = View::new(&p.space.home, &roots, &cache, p.env.email_db());
        let extra: Vec<_> = p
            .extra
            .into_iter()
            .map(|(source, target)| Mount {
                source,
                target,
                writable: true,
            })
            .chain(p.read_only.into_iter().map(|dir| Mount {
                source: dir.clone(),
                target: dir,
                writable: false,
            }))
            .collect();
        let in_sandbox_terms = |e: SandboxError| sandbox_terms(e, &view, &extra, sandbox);
        let left = sandbox.admit(&p.space.home, &roots).await?;
        sandbox
            .prepare_home(&p.space.home, &p.space.user, &roots)
            .map_err(in_sandbox_terms)?;
        let mut env = p.env.for_view(&view);
        env.extend(p.extra_env);
        let mut spec = sandbox
            .spec(
                Launch {
                    program: p.program,
                    search_path: crate::config::TOOL_PATH,
                    args: p.args,
                    cwd: p.cwd,
                    user: &p.space.user,
                    view: &view,
                    extra: extra.clone(),
                    network: p.network,
                    per_call: p.per_call,
                },
                env,
            )
            .map_err(in_sandbox_terms)?;
        // No one file may take more than what is left of the home's quota.
        if let Some(left) = left {
            spec.limits.file_size = Some(spec.limits.file_size.map_or(left, |f| f.min(left)));
        }
        let (mut child, lease, refill) = sandbox.start(spec).await.map_err(in_sandbox_terms)?;
        if !p.stdin {
            // EOF right after the spec: the tool reads nothing.
            drop(child.stdin.take());
        }
        let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        let watched = sandbox.watch(&p.space.home, pgid);
        Ok(Started {
            child,
            pgid,
            lease,
            view: Some(view),
            refill: Some(refill),
            watched,
        })
    }

    /// Whether a call for `space` may start, by its home's quota (see [`Sandbox::admit`]);
    /// always without a sandbox.
    pub(crate) async fn admit(&self, space: &UserSpace, env: &ToolEnv) -> Result<(), RuntimeError> {
        match &self.sandbox {
            Some(sandbox) => sandbox
                .admit(&space.home, &env.roots_for(space))
                .await
                .map(drop)
                .map_err(RuntimeError::from),
            None => Ok(()),
        }
    }
}

/// A long-lived server to start (a stdio MCP server); paths are host paths. Its stdin,
/// stdout and stderr are piped: they are how the host talks to it.
pub(crate) struct ServerStart<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub env: Vec<(String, String)>,
    /// In the sandbox: the uid's name, what it sees, and whether it has the network.
    pub sandbox: Option<(&'a Arc<Sandbox>, ServerSandbox<'a>)>,
}

/// How a server's sandbox is built.
pub(crate) struct ServerSandbox<'a> {
    pub user: &'a str,
    pub view: &'a View,
    pub network: bool,
}

/// Starts a server. Errors keep host paths: they are the operator's to read.
pub(crate) async fn start_server(s: ServerStart<'_>) -> Result<Started, RuntimeError> {
    let Some((sandbox, how)) = s.sandbox else {
        let args: Vec<std::ffi::OsString> = s.args.iter().map(Into::into).collect();
        return spawn(Path::new(s.program), &args, s.env, s.cwd, Stdio::piped());
    };
    sandbox.prepare_home(how.view.home(), how.user, &[])?;
    let spec = sandbox.spec(
        Launch {
            program: Path::new(s.program),
            search_path: crate::config::TOOL_PATH,
            args: s.args.iter().cloned().map(LaunchArg::Text).collect(),
            cwd: s.cwd,
            user: how.user,
            view: how.view,
            extra: Vec::new(),
            network: how.network,
            per_call: false,
        },
        s.env,
    )?;
    let (child, lease, refill) = sandbox.start(spec).await?;
    let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    Ok(Started {
        child,
        pgid,
        lease,
        view: None,
        refill: Some(refill),
        watched: None,
    })
}

/// A failure to set a sandbox up, as the tool's caller gets it: host paths become the
/// paths the sandbox shows (the helper itself is just `toolhost`). The operator's log
/// keeps the original.
fn sandbox_terms(e: SandboxError, view: &View, extra: &[Mount], sandbox: &Sandbox) -> RuntimeError {
    let original = e.to_string();
    let mut text = original.clone();
    let mut mounts: Vec<(String, String)> = view
        .mounts()
        .iter()
        .chain(extra)
        .filter(|m| m.source.components().count() > 1)
        .map(|m| {
            (
                m.source.display().to_string(),
                m.target.display().to_string(),
            )
        })
        .collect();
    mounts.push((sandbox.helper().display().to_string(), "toolhost".into()));
    // Longest first, so a tool root inside the home becomes its own path, not the home's.
    mounts.sort_by_key(|(source, _)| std::cmp::Reverse(source.len()));
    for (source, target) in &mounts {
        text = text.replace(source.as_str(), target);
    }
    if text != original {
        tracing::warn!("setting up a sandbox failed: {original}");
    }
    RuntimeError::Sandbox(text)
}

impl Launcher {
    /// `user`'s own directory of transpiled code, created if missing, readable by that
    /// user's sandboxes only.
    pub(crate) fn transpiled_dir(&self, user: &str) -> Result<PathBuf, RuntimeError> {
        let group = self.tool_user(user)?.map(|ids| ids.gid);
        self.caches
            .ensure_transpiled(user, group)
            .map_err(|e| RuntimeError::io(&self.caches.transpiled(user), e))
    }

    /// Who the host acts as when it reads `user`'s tool code: that user's sandbox uid on a
    /// root host with the sandbox on; the host itself otherwise (`None`: an unprivileged
    /// host's tools run as its own uid anyway, and without a sandbox there is no boundary).
    /// `Err` when the sandbox cannot name that uid (then nothing may be read for the tool).
    pub(crate) fn tool_user(&self, user: &str) -> Result<Option<Ids>, RuntimeError> {
        let Some(sandbox) = self.sandbox.as_ref() else {
            return Ok(None);
        };
        if !rustix::process::getuid().is_root() {
            return Ok(None);
        }
        let uid = sandbox.uid_for(user)?;
        Ok(Some(Ids { uid, gid: uid }))
    }

    /// Gives `paths` to the uid `user`'s sandboxed tools run as, so they can use them
    /// (a worker's socket). Nothing to do without a sandbox or on an unprivileged host.
    pub(crate) fn hand_over(&self, user: &str, paths: &[&Path]) -> Result<(), RuntimeError> {
        let Some(sandbox) = &self.sandbox else {
            return Ok(());
        };
        if !rustix::process::getuid().is_root() {
            return Ok(());
        }
        let uid = sandbox.uid_for(user)?;
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
        watched: None,
    })
}

/// What `PROGRAM --version` prints, for the Node.js the operator configured (run once, at
/// start, as the host: it is Toolhost's own executable, never a tool's).
pub(crate) fn version_of(program: &Path) -> Option<String> {
    std::process::Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
}
