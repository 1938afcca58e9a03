//! Long-lived servers the host talks to over stdio: stdio MCP servers. They start where
//! tools start (the launcher) and, unless the operator turns it off per server, in the
//! sandbox: their own uid and home, the host paths their configuration grants (each at
//! its own path, read-only or read-write), the network only when granted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::oneshot;
use toolhost_sandbox::{Mount, Sandbox, SandboxConfig, View};

use crate::RuntimeError;
use crate::config::RuntimeConfig;
use crate::launch::{ServerSandbox, ServerStart, start_server};
use crate::node::signal_group;

/// How long a server asked to stop gets after SIGTERM before its group is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Host paths no server may be granted: the sandbox builds its own.
const NOT_GRANTABLE: &[&str] = &["/proc", "/dev", "/sys"];

/// Starts servers. Cheap to clone; shares the runtime's sandbox.
#[derive(Clone, Debug)]
pub struct ServerLauncher {
    sandbox: SandboxSource,
    /// Each server's home is `homes/NAME`.
    homes: PathBuf,
}

#[derive(Clone, Debug)]
enum SandboxSource {
    /// The runtime's (none: the sandbox is off).
    Shared(Option<Arc<Sandbox>>),
    /// Its own, probed when the first server starts: a command that boots the registry
    /// only to list tools should not pay for a probe it may not need.
    Own(Arc<(SandboxConfig, OnceLock<Arc<Sandbox>>)>),
}

impl SandboxSource {
    fn get(&self) -> Option<Arc<Sandbox>> {
        match self {
            SandboxSource::Shared(s) => s.clone(),
            SandboxSource::Own(own) => {
                let (config, cell) = &**own;
                Some(Arc::clone(
                    cell.get_or_init(|| Arc::new(Sandbox::new(config.clone()))),
                ))
            }
        }
    }
}

/// One server to start.
#[derive(Clone, Debug)]
pub struct ServerCommand {
    /// Names its home (`CACHE/mcp-servers/NAME`) and, on a root host, its uid. A tool
    /// name: letters, digits, `_` and `-`.
    pub name: String,
    /// The program and its arguments. A program named without a directory is looked for
    /// on the tools' `PATH` in the sandbox, on the host's outside it.
    pub command: Vec<String>,
    /// Its environment, besides `PATH`, `HOME` and `LANG`.
    pub env: BTreeMap<String, String>,
    /// Its working directory (default: its home in the sandbox, the host's own outside).
    pub cwd: Option<PathBuf>,
    /// Where it runs.
    pub isolation: Isolation,
}

/// Where a server runs.
#[derive(Clone, Debug)]
pub enum Isolation {
    /// In the sandbox (unless the runtime's sandbox is off altogether).
    Sandbox {
        /// Whether it may connect out (through the network supervisor, as tools do).
        network: bool,
        /// Host paths it may read, each at its own path. The working directory and every
        /// argument that is an absolute path of an existing folder (or a file's folder)
        /// are added.
        read_only: Vec<PathBuf>,
        /// Host paths it may read and write, each at its own path.
        read_write: Vec<PathBuf>,
    },
    /// On the host, as the host's own user, with the host's `PATH` and `HOME`.
    Host,
}

/// A started server: its stdio, and the handle that stops it.
#[derive(Debug)]
pub struct ServerProcess {
    /// Its standard input.
    pub stdin: ChildStdin,
    /// Its standard output.
    pub stdout: ChildStdout,
    /// Its standard error.
    pub stderr: ChildStderr,
    /// Stops it when dropped.
    pub handle: ServerHandle,
}

/// Stops its server when dropped: SIGTERM to its process group, SIGKILL after a grace
/// of two seconds (at once if the Tokio runtime is gone).
#[derive(Debug)]
pub struct ServerHandle {
    stop: Option<oneshot::Sender<()>>,
    pgid: i32,
}

impl ServerHandle {
    /// Its process group on the host (the sandbox's helper's, when sandboxed).
    pub fn process_group(&self) -> i32 {
        self.pgid
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl ServerLauncher {
    /// A launcher of its own, for a host that runs no calls (a command that only lists
    /// tools): probes the sandbox when the configuration enables it.
    pub fn new(config: &RuntimeConfig) -> ServerLauncher {
        let sandbox = match config.sandbox.enabled {
            true => SandboxSource::Own(Arc::new((config.sandbox.clone(), OnceLock::new()))),
            false => SandboxSource::Shared(None),
        };
        ServerLauncher {
            sandbox,
            homes: config.cache_dir().join("mcp-servers"),
        }
    }

    pub(crate) fn with_sandbox(sandbox: Option<Arc<Sandbox>>, cache: &Path) -> ServerLauncher {
        ServerLauncher {
            sandbox: SandboxSource::Shared(sandbox),
            homes: cache.join("mcp-servers"),
        }
    }

    /// Starts `server`. Must be called inside a Tokio runtime (a task keeps the process
    /// and reaps it).
    pub async fn start(&self, server: &ServerCommand) -> Result<ServerProcess, RuntimeError> {
        let (program, args) = server
            .command
            .split_first()
            .ok_or_else(|| RuntimeError::Config("the server's command is empty".into()))?;
        let sandbox = match server.isolation {
            Isolation::Sandbox { .. } => self.sandbox.get(),
            Isolation::Host => None,
        };
        let started = match sandbox {
            Some(sandbox) => {
                self.start_sandboxed(&sandbox, server, program, args)
                    .await?
            }
            _ => {
                let mut env: Vec<(String, String)> = ["PATH", "HOME", "LANG", "TMPDIR"]
                    .into_iter()
                    .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
                    .collect();
                env.extend(server.env.iter().map(|(k, v)| (k.clone(), v.clone())));
                let cwd = match &server.cwd {
                    Some(dir) => dir.clone(),
                    None => {
                        std::env::current_dir().map_err(|e| RuntimeError::io(Path::new("."), e))?
                    }
                };
                start_server(ServerStart {
                    program,
                    args,
                    cwd: &cwd,
                    env,
                    sandbox: None,
                })
                .await?
            }
        };
        let crate::launch::Started {
            mut child,
            pgid,
            lease,
            refill,
            ..
        } = started;
        // The spare helper it used is replaced now: the server runs for long.
        drop(refill);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            signal_group(pgid, rustix::process::Signal::KILL);
            return Err(RuntimeError::Config(format!(
                "`{program}` was started without its standard streams"
            )));
        };
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            // Dropped with the task too (a runtime shutting down): the group dies with it.
            let _kill = KillOnDrop(pgid);
            tokio::select! {
                _ = child.wait() => {}
                _ = stopped => {
                    signal_group(pgid, rustix::process::Signal::TERM);
                    if tokio::time::timeout(STOP_GRACE, child.wait()).await.is_err() {
                        signal_group(pgid, rustix::process::Signal::KILL);
                        let _ = child.wait().await;
                    }
                }
            }
            // Whatever it left running in its group goes with it; then its cgroups.
            signal_group(pgid, rustix::process::Signal::KILL);
            drop(lease);
        });
        Ok(ServerProcess {
            stdin,
            stdout,
            stderr,
            handle: ServerHandle {
                stop: Some(stop),
                pgid,
            },
        })
    }

    async fn start_sandboxed(
        &self,
        sandbox: &Arc<Sandbox>,
        server: &ServerCommand,
        program: &str,
        args: &[String],
    ) -> Result<crate::launch::Started, RuntimeError> {
        let Isolation::Sandbox {
            network,
            read_only,
            read_write,
        } = &server.isolation
        else {
            return Err(RuntimeError::Config("not a sandboxed server".into()));
        };
        if !is_plain_name(&server.name) {
            return Err(RuntimeError::Config(format!(
                "{:?} cannot name a server's home: use letters, digits, `_` and `-`",
                server.name
            )));
        }
        let home = self.homes.join(&server.name);
        let cwd = match &server.cwd {
            Some(dir) => absolute(dir)?,
            None => home.clone(),
        };
        let grants = grants(&cwd, &home, args, read_only, read_write)?;
        let view = View::at_host_paths(&home, &grants);
        let user = format!("mcp-server.{}", server.name);
        warn_unwritable(sandbox, &user, &server.name, &grants);
        let mut env = vec![
            ("PATH".to_string(), crate::config::TOOL_PATH.to_string()),
            ("HOME".to_string(), home.display().to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
        ];
        env.retain(|(k, _)| !server.env.contains_key(k));
        env.extend(server.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        std::fs::create_dir_all(&home).map_err(|e| RuntimeError::io(&home, e))?;
        start_server(ServerStart {
            program,
            args,
            cwd: &cwd,
            env,
            sandbox: Some((
                sandbox,
                ServerSandbox {
                    user: &user,
                    view: &view,
                    network: *network,
                },
            )),
        })
        .await
    }
}

/// What a sandboxed server sees besides its home: the grants, its working directory and
/// the folders its arguments name, read-only unless granted read-write.
fn grants(
    cwd: &Path,
    home: &Path,
    args: &[String],
    read_only: &[PathBuf],
    read_write: &[PathBuf],
) -> Result<Vec<Mount>, RuntimeError> {
    let mut mounts: Vec<Mount> = Vec::new();
    for (list, key, writable) in [
        (read_write, "read_write", true),
        (read_only, "read_only", false),
    ] {
        for path in list {
            let path = grantable(path, key)?;
            if !path.exists() {
                return Err(RuntimeError::Config(format!(
                    "`{key}` names {}, which does not exist",
                    path.display()
                )));
            }
            mounts.push(Mount {
                source: path,
                target: PathBuf::new(),
                writable,
            });
        }
    }
    // Implied, read-only, when nothing granted already shows them.
    let mut implied = vec![cwd.to_path_buf()];
    for arg in args {
        let path = Path::new(arg);
        if !path.is_absolute() {
            continue;
        }
        if path.is_dir() {
            implied.push(path.to_path_buf());
        } else if path.is_file()
            && let Some(dir) = path.parent()
        {
            implied.push(dir.to_path_buf());
        }
    }
    for path in implied {
        let shown = path.starts_with(home) || mounts.iter().any(|m| path.starts_with(&m.source));
        if shown || !path.is_dir() {
            continue;
        }
        let path = grantable(&path, "the command")?;
        mounts.push(Mount {
            source: path,
            target: PathBuf::new(),
            writable: false,
        });
    }
    Ok(mounts)
}

/// `path` if a server may be granted it: absolute, and outside what the sandbox builds
/// itself.
fn grantable(path: &Path, key: &str) -> Result<PathBuf, RuntimeError> {
    if !path.is_absolute() {
        return Err(RuntimeError::Config(format!(
            "`{key}` names {}, which is not an absolute path",
            path.display()
        )));
    }
    let path = absolute(path)?;
    if path == Path::new("/") || NOT_GRANTABLE.iter().any(|p| path.starts_with(p)) {
        return Err(RuntimeError::Config(format!(
            "`{key}` names {}: the sandbox builds its own /, /proc, /dev and /sys",
            path.display()
        )));
    }
    Ok(path)
}

fn absolute(path: &Path) -> Result<PathBuf, RuntimeError> {
    std::path::absolute(path).map_err(|e| RuntimeError::io(path, e))
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// On a root host the server runs as a uid of its own: a read-write grant it cannot write
/// to is the operator's to fix, so say how.
fn warn_unwritable(sandbox: &Sandbox, user: &str, server: &str, grants: &[Mount]) {
    use std::os::unix::fs::MetadataExt;
    if !rustix::process::getuid().is_root() {
        return;
    }
    let Ok(uid) = sandbox.uid_for(user) else {
        return;
    };
    for grant in grants.iter().filter(|g| g.writable) {
        let Ok(meta) = std::fs::metadata(&grant.source) else {
            continue;
        };
        if meta.uid() != uid && meta.mode() & 0o002 == 0 {
            tracing::warn!(
                "MCP server `{server}` runs as uid {uid} in the sandbox and cannot write to \
                 {} (owned by uid {}): give it the folder (`chown -R {uid} {}`) or run the \
                 server outside the sandbox (`sandbox = false`)",
                grant.source.display(),
                meta.uid(),
                grant.source.display()
            );
        }
    }
}

struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        signal_group(self.0, rustix::process::Signal::KILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_add_the_working_directory_and_argument_folders_read_only() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let docs = tmp.path().join("docs");
        let data = tmp.path().join("data");
        let script_dir = tmp.path().join("server");
        for d in [&docs, &data, &script_dir] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        let script = script_dir.join("index.js");
        std::fs::write(&script, "").unwrap_or_else(|e| panic!("{e}"));
        let home = tmp.path().join("home");
        let args = [
            script.display().to_string(),
            docs.display().to_string(),
            data.join("sub").display().to_string(),
            "--flag".to_string(),
        ];
        let mounts = grants(&script_dir, &home, &args, &[], std::slice::from_ref(&data))
            .unwrap_or_else(|e| panic!("{e}"));
        let shown: Vec<(PathBuf, bool)> = mounts
            .iter()
            .map(|m| (m.source.clone(), m.writable))
            .collect();
        assert_eq!(shown, [(data, true), (script_dir, false), (docs, false)]);
    }

    #[test]
    fn grants_refuse_relative_missing_and_system_paths() {
        let home = Path::new("/nowhere/home");
        let cwd = Path::new("/");
        for (grant, expected) in [
            ("relative/dir", "not an absolute path"),
            ("/proc/self", "builds its own"),
            ("/dev", "builds its own"),
            ("/no/such/toolhost/dir", "does not exist"),
        ] {
            let e = grants(cwd, home, &[], &[PathBuf::from(grant)], &[])
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(expected) && e.contains(grant), "{grant}: {e}");
        }
    }
}
