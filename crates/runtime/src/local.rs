//! The local executor: calls run on this host, TypeScript and JavaScript on warm Node.js
//! workers, Python and Bash one process per call, native tools as tasks, every process
//! started by the launcher (in the sandbox unless the operator turned it off).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use toolhost_spec::Language;

use crate::RuntimeError;
use crate::code::Code;
use crate::config::{RuntimeConfig, ToolEnv, UserSpace, WorkerScope};
use crate::dispatch::{Dispatch, RemoteCall};
use crate::events::{ErrorKind, ExecutionEvent};
use crate::executor::{Execution, ExecutionControl, Executor, Running};
use crate::launch::Launcher;
use crate::native::{NativeContext, NativeTool};
use crate::node::{CallMessage, Limits, NodePool, Worker, WorkerKey, WorkerSpawn, signal_group};
use crate::runtime::ToolRef;

/// Runs calls on this host. [`crate::Runtime::new`] builds one; build it yourself to
/// hand it to [`crate::Runtime::with_executor`] (to wrap it, say).
pub struct LocalExecutor {
    pub(crate) env: ToolEnv,
    pub(crate) pool: Arc<NodePool>,
    pub(crate) launcher: Launcher,
    pub(crate) code: Arc<Code>,
    python: PathBuf,
    bash: PathBuf,
    worker_scope: WorkerScope,
    /// Where the workers' sockets are made; removed with the executor.
    run_dir: PathBuf,
    /// Where folder tools run instead, on a fleet's gateway.
    dispatch: Option<Arc<dyn Dispatch>>,
}

impl Drop for LocalExecutor {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.run_dir);
    }
}

impl LocalExecutor {
    /// Checks the environment against the configuration, installs the Node.js harness in
    /// the cache and prepares the sandbox. Must be called inside a Tokio runtime (it
    /// starts the idle-worker reaper).
    pub fn new(config: &RuntimeConfig, mut env: ToolEnv) -> Result<LocalExecutor, RuntimeError> {
        let cache = config.cache_dir();
        // Sandboxes mount these and tools run elsewhere: relative paths would break.
        for dir in env.tools_dirs.iter_mut().chain(env.homes.as_mut()) {
            if let Ok(abs) = std::path::absolute(&*dir) {
                *dir = abs;
            }
        }
        crate::email_db::check(&env, &cache)?;
        let harness =
            crate::node::install_harness(&cache).map_err(|e| RuntimeError::io(&cache, e))?;
        let harness_dir = harness.parent().unwrap_or(&cache).to_path_buf();
        let caches = crate::cache::Caches::new(&cache, harness_dir)
            .map_err(|e| RuntimeError::io(&cache.join("ts"), e))?;
        let run_dir = private_run_dir()?;
        let sandbox = if config.sandbox.enabled {
            let sandbox = toolhost_sandbox::Sandbox::new(config.sandbox.clone());
            open_up(&cache)?;
            Some(Arc::new(sandbox))
        } else {
            tracing::warn!(
                "THE SANDBOX IS DISABLED ([sandbox] enabled = false): tools run with the \
                 host's own privileges, files and network"
            );
            None
        };
        if let Some(sandbox) = &sandbox {
            sandbox.refill();
        }
        let launcher = Launcher { sandbox, caches };
        let spawn = WorkerSpawn {
            node_flags: crate::node::node_flags(&config.node),
            node: config.node.clone(),
            harness,
            run_dir: run_dir.clone(),
            max_frame: config.max_result_bytes * 2 + 4 * 1024 * 1024,
            launcher: launcher.clone(),
        };
        let pool = Arc::new(NodePool::new(
            spawn,
            env.clone(),
            Limits {
                max_workers: config.max_workers,
                per_user: config.workers_per_user(),
                max_calls_per_worker: config.max_calls_per_worker,
            },
        ));
        reap_idle(Arc::downgrade(&pool), config.worker_idle_retire);
        Ok(LocalExecutor {
            env,
            pool,
            launcher,
            code: Arc::default(),
            python: config.python.clone(),
            bash: config.bash.clone(),
            worker_scope: config.worker_scope,
            run_dir,
            dispatch: None,
        })
    }

    /// Hands every folder tool's call to `dispatch` instead of running it here (a fleet's
    /// gateway: its runners run them). Native tools still run in this process.
    pub fn dispatch_folders_to(mut self, dispatch: Arc<dyn Dispatch>) -> LocalExecutor {
        self.dispatch = Some(dispatch);
        self
    }

    /// Whether folder tools run elsewhere (see [`LocalExecutor::dispatch_folders_to`]).
    pub fn dispatches(&self) -> bool {
        self.dispatch.is_some()
    }

    /// Starts long-lived servers (stdio MCP servers) with this executor's sandbox.
    pub fn servers(&self) -> crate::ServerLauncher {
        crate::ServerLauncher::with_sandbox(
            self.launcher.sandbox.clone(),
            &self.launcher.caches.root,
        )
    }

    /// Live Node.js workers.
    pub fn workers(&self) -> usize {
        self.pool.len()
    }

    /// Processes started in the sandbox so far; `None` when tools run without one.
    pub fn sandbox_starts(&self) -> Option<u64> {
        self.launcher.sandbox.as_ref().map(|s| s.starts())
    }

    /// The sandbox tool processes start in (what its probe found, whether it is ready);
    /// `None` when the configuration turned it off.
    pub fn sandbox(&self) -> Option<&std::sync::Arc<toolhost_sandbox::Sandbox>> {
        self.launcher.sandbox.as_ref()
    }

    /// The process group of each live Node.js worker: the worker, its sandbox's
    /// processes and whatever its tools started.
    pub fn worker_process_groups(&self) -> Vec<i32> {
        self.pool.process_groups()
    }

    async fn start_folder(
        &self,
        tool: &Arc<toolhost_catalog::Tool>,
        call: &Execution<'_>,
    ) -> Result<Running<LocalControl>, RuntimeError> {
        let user = call.user;
        crate::home::check(user, &self.env)?;
        // A user whose home is full (its quota) runs nothing, even in a warm worker.
        self.launcher.admit(user, &self.env).await?;
        match tool.manifest.language {
            Language::Typescript => {
                // One stat per file tells whether the code changed; only then is it
                // re-read and transpiled (which itself skips files already in the
                // user's cache).
                let version = self
                    .code
                    .prepare(&self.launcher, &tool.dir, &user.user)
                    .await?;
                self.in_view(tool, user)?;
                let key = WorkerKey {
                    user: user.user.clone(),
                    tool: match self.worker_scope {
                        WorkerScope::Tool => Some(tool.dir.clone()),
                        WorkerScope::User => None,
                    },
                    network: self.network_for(tool),
                    plugin: None,
                };
                let worker = self.pool.acquire(user, key, call.waiting).await?;
                let (id, events) = worker.start_call(
                    CallMessage {
                        id: 0,
                        entry: &tool.entry.path,
                        version: &version,
                        tool_call_id: call.call_id,
                        params: call.args,
                        max_text: call.max_result_bytes,
                        plugin: None,
                    },
                    call.secrets,
                );
                Ok(Running {
                    control: LocalControl(Control::Worker {
                        worker,
                        id,
                        dir: tool.dir.clone(),
                        code: Arc::clone(&self.code),
                    }),
                    events,
                })
            }
            Language::Python | Language::Bash => {
                let program = if tool.manifest.language == Language::Python {
                    &self.python
                } else {
                    &self.bash
                };
                std::fs::create_dir_all(&user.home).map_err(|e| RuntimeError::io(&user.home, e))?;
                let (pgid, events) = crate::process::spawn(crate::process::ProcessCall {
                    launcher: &self.launcher,
                    program,
                    entry: &tool.entry.path,
                    dir: &tool.dir,
                    space: user,
                    env: &self.env,
                    network: self.network_for(tool),
                    params: call.args,
                    tool_call_id: call.call_id,
                    max_text: call.max_result_bytes,
                })
                .await?;
                Ok(Running {
                    control: LocalControl(Control::Process { pgid }),
                    events,
                })
            }
        }
    }

    /// A sandboxed worker sees the runtime's tool roots and its user's own
    /// (`ToolEnv::roots_for`) only.
    fn in_view(
        &self,
        tool: &toolhost_catalog::Tool,
        space: &UserSpace,
    ) -> Result<(), RuntimeError> {
        if self.launcher.sandbox.is_none() || self.env.shows(space, &tool.dir) {
            return Ok(());
        }
        Err(RuntimeError::Sandbox(format!(
            "{} is not under one of the runtime's tool roots, so its sandbox cannot show it",
            tool.dir.display()
        )))
    }

    /// Whether a tool's sandbox gets the network: declared in TOOL.md, and the
    /// operator's policy allows it.
    fn network_for(&self, tool: &toolhost_catalog::Tool) -> bool {
        match &self.launcher.sandbox {
            Some(sandbox) => sandbox
                .config()
                .network_for(&tool.manifest.name, tool.manifest.network),
            None => true,
        }
    }
}

impl Executor for LocalExecutor {
    type Control = LocalControl;

    async fn start<'a>(
        &'a self,
        call: Execution<'a>,
    ) -> Result<Running<LocalControl>, RuntimeError> {
        match call.tool {
            ToolRef::Native(tool) => Ok(start_native(
                Arc::clone(tool),
                call.args.clone(),
                call.call_id,
                call.cancelled,
            )),
            ToolRef::Folder(tool) => match &self.dispatch {
                Some(dispatch) => {
                    let running = dispatch.start(call, tool).await?;
                    Ok(Running {
                        control: LocalControl(Control::Remote(running.control.0)),
                        events: running.events,
                    })
                }
                None => self.start_folder(tool, &call).await,
            },
            ToolRef::Plugin(tool) => self.start_plugin(tool, &call).await,
        }
    }

    /// Waits until the sandbox's spare helpers have started, so that the next new worker
    /// or process starts without that cost.
    async fn warm_up(&self) {
        if let Some(sandbox) = &self.launcher.sandbox
            && self.dispatch.is_none()
        {
            sandbox.settled().await;
        }
    }

    /// Stops every worker.
    async fn shutdown(&self) {
        self.pool.shutdown();
    }
}

/// Retires idle workers now and then, for as long as the pool lives.
fn reap_idle(pool: Weak<NodePool>, retire_after: Duration) {
    let every = (retire_after / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    tokio::spawn(async move {
        loop {
            let Some(pool) = pool.upgrade() else { break };
            pool.retire_idle(retire_after);
            drop(pool);
            tokio::time::sleep(every).await;
        }
    });
}

/// The handle on a call running on this host.
pub struct LocalControl(pub(crate) Control);

/// What runs one local call, and how to stop it: ask nicely, then kill.
pub(crate) enum Control {
    Worker {
        worker: Arc<Worker>,
        id: u64,
        /// The tool folder or plugin package, to re-check its prepared code after it
        /// failed to load.
        dir: PathBuf,
        code: Arc<Code>,
    },
    /// A Python or Bash process (group).
    Process { pgid: i32 },
    /// A native tool: cancellation is its context's flag; killing aborts its task.
    Task(tokio::task::AbortHandle),
    /// A folder tool's call dispatched elsewhere.
    Remote(Box<dyn RemoteCall>),
}

impl ExecutionControl for LocalControl {
    fn cancel(&self) {
        match &self.0 {
            Control::Worker { worker, id, .. } => worker.cancel(*id),
            Control::Process { pgid } => signal_group(*pgid, rustix::process::Signal::TERM),
            Control::Task(_) => {}
            Control::Remote(call) => call.cancel(),
        }
    }

    fn kill(&self) {
        match &self.0 {
            Control::Worker { worker, .. } => worker.kill("killed after ignoring cancellation"),
            Control::Process { pgid } => signal_group(*pgid, rustix::process::Signal::KILL),
            Control::Task(task) => task.abort(),
            Control::Remote(call) => call.kill(),
        }
    }

    fn finish(self, failure: Option<ErrorKind>) {
        if let Control::Remote(call) = self.0 {
            call.finish(failure);
            return;
        }
        if let Control::Worker {
            worker,
            id,
            dir,
            code,
        } = &self.0
        {
            if failure == Some(ErrorKind::Load) {
                // Re-check the transpile cache next time (it may have been cleared).
                code.forget(dir, &worker.key.user);
            }
            worker.finish(*id);
        }
    }
}

fn start_native(
    tool: Arc<dyn NativeTool>,
    args: Value,
    call_id: &str,
    cancelled: watch::Receiver<bool>,
) -> Running<LocalControl> {
    let (tx, events) = crate::events::channel();
    let ctx = NativeContext {
        tool_call_id: call_id.to_string(),
        cancelled,
        progress: tx.clone(),
    };
    let task = tokio::spawn(async move {
        let event = match tool.call(args, ctx).await {
            Ok(value) => ExecutionEvent::Result {
                value,
                truncated_from: None,
            },
            Err(e) => ExecutionEvent::Error {
                kind: ErrorKind::Native,
                message: e.to_string(),
                stack: String::new(),
            },
        };
        let _ = tx.send(event);
    });
    Running {
        control: LocalControl(Control::Task(task.abort_handle())),
        events,
    }
}

fn private_run_dir() -> Result<PathBuf, RuntimeError> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = base.join(format!(
        "toolhost-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| RuntimeError::io(&dir, e))?;
    Ok(dir)
}

/// Sandboxed tools run as other uids: they must be able to read the harness, though
/// never to write it. (Transpiled code is per user: see `cache.rs`.)
fn open_up(cache: &Path) -> Result<(), RuntimeError> {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(cache)
        && meta.permissions().mode() & 0o005 != 0o005
    {
        std::fs::set_permissions(cache, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| RuntimeError::io(cache, e))?;
    }
    Ok(())
}
