//! The runtime facade and the life of one call: validate, run, watch the clock, normalise.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until};
use toolhost_spec::Language;

use crate::RuntimeError;
use crate::call::{Call, Progress, ProgressQueue};
use crate::config::WorkerScope;
use crate::config::{RuntimeConfig, ToolEnv, UserSpace};
use crate::events::EventReceiver;
use crate::launch::Launcher;
use crate::native::{NativeContext, NativeTool};
use crate::node::{Control, Limits, NodePool, WorkerEvent, WorkerKey, WorkerSpawn};
use crate::redact::{Secrets, args_for_log};
use crate::result::{ToolResult, normalise};
use crate::validate::ArgsValidator;

/// A tool the runtime can call.
#[derive(Clone)]
pub enum ToolRef {
    /// A tool folder from the catalog.
    Folder(Arc<toolhost_catalog::Tool>),
    /// A tool implemented in Rust.
    Native(Arc<dyn NativeTool>),
}

impl ToolRef {
    pub fn name(&self) -> &str {
        match self {
            ToolRef::Folder(t) => &t.manifest.name,
            ToolRef::Native(t) => t.name(),
        }
    }

    /// A human-readable name: a folder tool's TOOL.md `label`; a native tool's name.
    pub fn title(&self) -> &str {
        match self {
            ToolRef::Folder(t) => &t.manifest.label,
            ToolRef::Native(t) => t.name(),
        }
    }

    fn schema(&self) -> Value {
        match self {
            ToolRef::Folder(t) => t.input_schema().clone(),
            ToolRef::Native(t) => t.input_schema(),
        }
    }

    fn sensitive(&self) -> Vec<String> {
        match self {
            ToolRef::Folder(t) => t.manifest.sensitive_inputs().map(str::to_string).collect(),
            ToolRef::Native(t) => t.sensitive_inputs(),
        }
    }

    /// Identifies the tool's input schema, for the validator cache: a folder tool's schema
    /// is a function of its TOOL.md, which its content hash covers.
    fn cache_key(&self) -> ValidatorKey {
        match self {
            ToolRef::Folder(t) => ValidatorKey::Folder(t.hash),
            // Two native tools may share a name (tool sets of different plugins), so the
            // schema itself is part of the key.
            ToolRef::Native(t) => ValidatorKey::Native(
                t.name().to_string(),
                *blake3::hash(t.input_schema().to_string().as_bytes()).as_bytes(),
            ),
        }
    }

    /// The tool's own `timeout` and `idle_timeout` (TOOL.md, in seconds).
    fn own_timeouts(&self) -> (Option<Duration>, Option<Duration>) {
        match self {
            ToolRef::Folder(t) => (t.manifest.timeout, t.manifest.idle_timeout),
            ToolRef::Native(_) => (None, None),
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum ValidatorKey {
    Folder(toolhost_catalog::ContentHash),
    Native(String, [u8; 32]),
}

/// One call to make.
pub struct CallRequest {
    pub tool: ToolRef,
    pub args: Value,
    pub user: UserSpace,
    /// Passed to `execute` as `toolCallId`; generated when absent.
    pub tool_call_id: Option<String>,
    /// Overrides the tool's and the configuration's deadline.
    pub timeout: Option<Duration>,
}

/// Runs tool calls. Cheap to clone; all clones share workers and caches.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    config: RuntimeConfig,
    env: ToolEnv,
    pool: NodePool,
    launcher: Launcher,
    validators: Mutex<HashMap<ValidatorKey, Arc<ArgsValidator>>>,
    code: crate::code::Code,
    run_dir: PathBuf,
    calls: AtomicU64,
    /// This process's id, for generated call ids (`getpid` is a system call each time).
    pid: u32,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.run_dir);
    }
}

impl Runtime {
    /// Must be called inside a Tokio runtime (it starts the idle-worker reaper).
    pub fn new(config: RuntimeConfig, mut env: ToolEnv) -> Result<Runtime, RuntimeError> {
        config.validate()?;
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
            node: config.node.clone(),
            harness,
            run_dir: run_dir.clone(),
            max_frame: config.max_result_bytes * 2 + 4 * 1024 * 1024,
            launcher: launcher.clone(),
        };
        let pool = NodePool::new(
            spawn,
            env.clone(),
            Limits {
                max_workers: config.max_workers,
                per_user: config.workers_per_user(),
                max_calls_per_worker: config.max_calls_per_worker,
            },
        );
        let inner = Arc::new(Inner {
            config,
            env,
            pool,
            launcher,
            validators: Mutex::new(HashMap::new()),
            code: crate::code::Code::default(),
            run_dir,
            calls: AtomicU64::new(0),
            pid: std::process::id(),
        });
        let weak = Arc::downgrade(&inner);
        tokio::spawn(async move {
            loop {
                let Some(inner) = weak.upgrade() else { break };
                let every = (inner.config.worker_idle_retire / 4)
                    .clamp(Duration::from_millis(100), Duration::from_secs(30));
                inner.pool.retire_idle(inner.config.worker_idle_retire);
                drop(inner);
                tokio::time::sleep(every).await;
            }
        });
        Ok(Runtime { inner })
    }

    /// Waits until the sandbox's spare helpers have started, so that the next new worker
    /// or process starts without that cost. Optional: a server may call it once at start.
    pub async fn warm_up(&self) {
        if let Some(sandbox) = &self.inner.launcher.sandbox {
            sandbox.settled().await;
        }
    }

    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// Prepares a call. It runs while the returned [`Call`] is polled (its `next` or
    /// `result`), so it costs no task hand-offs; dropping the `Call` cancels it.
    pub fn call(&self, req: CallRequest) -> Call {
        let n = self.inner.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let id = req
            .tool_call_id
            .clone()
            .unwrap_or_else(|| format!("call_{}_{n}", self.inner.pid));
        let progress = Arc::new(ProgressQueue::default());
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let inner = Arc::clone(&self.inner);
        let call_id = id.clone();
        let queue = Arc::clone(&progress);
        let run = Box::pin(async move { run(inner, req, &call_id, &queue, cancel_rx).await });
        Call {
            id,
            progress,
            run: Some(run),
            cancel: cancel_tx,
            done: None,
        }
    }

    /// Live Node.js workers (for status and tests).
    pub async fn workers(&self) -> usize {
        self.inner.pool.len()
    }

    /// The process group of each live Node.js worker: the worker, its sandbox's
    /// processes and whatever its tools started (for status and measurements).
    pub fn worker_process_groups(&self) -> Vec<i32> {
        self.inner.pool.process_groups()
    }

    /// Stops every worker.
    pub async fn shutdown(&self) {
        self.inner.pool.shutdown();
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

#[derive(Debug, Clone, Copy)]
enum Stop {
    Cancelled,
    Deadline(Duration),
    Idle(Duration),
}

impl Stop {
    fn message(self) -> String {
        match self {
            Stop::Cancelled => "cancelled".into(),
            Stop::Deadline(d) => format!("timed out after {} s", secs(d)),
            Stop::Idle(d) => format!("timed out after {} s without progress", secs(d)),
        }
    }
}

/// `d` from now; a duration beyond the clock's range (a configured `timeout = 1e18`) is
/// a year, which no call outlives, rather than a panic.
pub(crate) fn after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .or_else(|| now.checked_add(Duration::from_secs(365 * 24 * 3600)))
        .unwrap_or(now)
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s:.1}")
    }
}

async fn run(
    shared: Arc<Inner>,
    req: CallRequest,
    call_id: &str,
    progress: &ProgressQueue,
    mut cancel: watch::Receiver<bool>,
) -> ToolResult {
    let name = req.tool.name().to_string();
    let sensitive = req.tool.sensitive();
    let inner = &*shared;
    let validator = match validator_for(inner, &req.tool, &sensitive) {
        Ok(v) => v,
        Err(e) => {
            return ToolResult::error(format!(
                "the tool `{name}` has an unusable input schema: {e}"
            ));
        }
    };
    let args = match validator.prepare(req.args.clone()) {
        Ok(args) => args,
        Err(e) => {
            let secrets = Secrets::from_args(&req.args, sensitive.iter().map(String::as_str));
            tracing::info!(tool = %name, call = call_id, "rejected arguments: {}", secrets.clean(&e.to_string()));
            return ToolResult::error(secrets.clean(&e.to_string()));
        }
    };
    let secrets = Secrets::from_args(&args, sensitive.iter().map(String::as_str));
    tracing::info!(tool = %name, call = call_id, user = %req.user.user, args = %args_for_log(&args, sensitive.iter().map(String::as_str)), "call");

    let (own_deadline, own_idle) = req.tool.own_timeouts();
    let deadline_after = req.timeout.or(own_deadline).unwrap_or(inner.config.timeout);
    let idle_after = own_idle.unwrap_or(inner.config.idle_timeout);
    let cap = inner.config.max_result_bytes;
    let (cancelled_tx, cancelled_rx) = watch::channel(false);

    // The deadline and cancellation cover the host's own steps too (reading and
    // transpiling the code, waiting for a worker, starting the sandbox): dropping `start`
    // abandons them, and their threads stop at their next check. Waiting for a worker
    // also knows them, to say what it was waiting for.
    let deadline = after(deadline_after);
    let waiting_for = Mutex::new(None);
    let starting = start(
        inner,
        &req,
        call_id,
        &args,
        &secrets,
        cap,
        cancelled_rx,
        &waiting_for,
    );
    let started = tokio::select! {
        started = starting => Ok(started),
        _ = sleep_until(deadline) => Err(Stop::Deadline(deadline_after)),
        _ = cancel.changed() => Err(Stop::Cancelled),
    };
    let started = match started {
        Ok(Ok(started)) => started,
        Ok(Err(e)) => return ToolResult::error(secrets.clean(&e.to_string())),
        Err(stop) => {
            let mut message = stop.message();
            if let Some(why) = waiting_for.lock().ok().and_then(|w| w.clone()) {
                message.push_str(&format!(" waiting for a Node.js worker: {why}"));
            }
            tracing::info!(tool = %name, call = call_id, "stopped before the tool started: {message}");
            return ToolResult::error(message);
        }
    };
    let (control, events) = started;
    let mut flight = InFlight {
        control,
        events,
        grace: inner.config.cancel_grace,
        shared: Arc::clone(&shared),
        settled: false,
    };

    let mut idle_deadline = after(idle_after);
    let mut stop: Option<Stop> = None;
    let mut grace: Option<Instant> = None;
    let mut seq = 0u64;
    let far = after(Duration::from_secs(365 * 24 * 3600));
    let mut result = loop {
        tokio::select! {
            event = flight.events.recv() => match event.map(|r| (r.event, r.stands_for)) {
                Some((WorkerEvent::Progress(content), stands_for)) => {
                    idle_deadline = after(idle_after);
                    if stop.is_none() {
                        // Updates coalesced on the way still count: a caller sees a gap.
                        seq += stands_for;
                        let mut content = Value::Array(content);
                        secrets.redact_json(&mut content);
                        let content = match content { Value::Array(c) => c, _ => Vec::new() };
                        progress.push(Progress { seq, content });
                    }
                }
                Some((WorkerEvent::Log { level, text }, _)) => {
                    tracing::info!(target: "toolhost::tool", tool = %name, call = call_id, level = %level, "{}", secrets.clean(&text));
                }
                Some((WorkerEvent::Result { value, truncated_from }, _)) => {
                    break match stop {
                        Some(s) => ToolResult::error(s.message()),
                        None => normalise(value, truncated_from, cap),
                    };
                }
                Some((WorkerEvent::Error { kind, message, stack }, _)) => {
                    if kind == "load"
                        && let ToolRef::Folder(t) = &req.tool
                    {
                        // Re-check the transpile cache next time (it may have been cleared).
                        inner.code.forget(&t.dir, &req.user.user);
                    }
                    if !stack.is_empty() {
                        tracing::info!(target: "toolhost::tool", tool = %name, call = call_id, "{kind}: {}", secrets.clean(&stack));
                    }
                    break match stop {
                        Some(s) => ToolResult::error(s.message()),
                        None => ToolResult::error(error_text(&kind, &message)),
                    };
                }
                Some((WorkerEvent::Died(reason), _)) => {
                    break match stop {
                        Some(s) => ToolResult::error(s.message()),
                        None => ToolResult::error(format!("the tool failed: {reason}")),
                    };
                }
                None => break ToolResult::error(stop.map_or_else(|| "the tool's process went away".into(), Stop::message)),
            },
            changed = cancel.changed(), if stop.is_none() => {
                // An error means the caller dropped the call: nobody waits for it any more.
                let _ = changed;
                stop = Some(Stop::Cancelled);
            }
            _ = sleep_until(deadline), if stop.is_none() => stop = Some(Stop::Deadline(deadline_after)),
            _ = sleep_until(idle_deadline), if stop.is_none() => stop = Some(Stop::Idle(idle_after)),
            _ = sleep_until(grace.unwrap_or(far)), if grace.is_some() => {
                tracing::warn!(tool = %name, call = call_id, "the tool ignored cancellation for {} s; killing its processes", secs(inner.config.cancel_grace));
                flight.control.kill();
                break ToolResult::error(stop.map_or_else(|| "cancelled".into(), Stop::message));
            }
        }
        if stop.is_some() && grace.is_none() {
            tracing::info!(tool = %name, call = call_id, "stopping: {}", stop.map(Stop::message).unwrap_or_default());
            let _ = cancelled_tx.send(true);
            flight.control.cancel();
            grace = Some(after(inner.config.cancel_grace));
        }
    };
    flight.settle();
    result.redact(&secrets);
    tracing::info!(tool = %name, call = call_id, is_error = result.is_error, "done");
    result
}

/// A call whose tool is running. If the caller drops the call before it settles, the
/// tool is cancelled, and killed if it does not settle within the grace period.
struct InFlight {
    control: Control,
    events: EventReceiver,
    grace: Duration,
    shared: Arc<Inner>,
    settled: bool,
}

impl InFlight {
    fn settle(&mut self) {
        self.settled = true;
        self.control.finish();
        self.shared.pool.call_ended();
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            // No runtime left to wait in: stop the tool now.
            self.control.kill();
            self.settle();
            return;
        };
        self.control.cancel();
        let control = std::mem::replace(&mut self.control, Control::Settled);
        let mut events = std::mem::replace(&mut self.events, crate::events::channel().1);
        let (grace, shared) = (self.grace, Arc::clone(&self.shared));
        let cleanup = async move {
            let settled = tokio::time::timeout(grace, async {
                while let Some(received) = events.recv().await {
                    if !matches!(
                        received.event,
                        WorkerEvent::Progress(_) | WorkerEvent::Log { .. }
                    ) {
                        return true;
                    }
                }
                true
            })
            .await;
            if settled.is_err() {
                control.kill();
            }
            control.finish();
            shared.pool.call_ended();
        };
        handle.spawn(cleanup);
    }
}

fn error_text(kind: &str, message: &str) -> String {
    match kind {
        "load" => format!("the tool failed to load: {message}"),
        "throw" if message.is_empty() => "the tool threw an error without a message".into(),
        _ => message.to_string(),
    }
}

fn validator_for(
    inner: &Inner,
    tool: &ToolRef,
    sensitive: &[String],
) -> Result<Arc<ArgsValidator>, crate::SchemaError> {
    let key = tool.cache_key();
    if let Some(v) = inner
        .validators
        .lock()
        .ok()
        .and_then(|m| m.get(&key).cloned())
    {
        return Ok(v);
    }
    let v = Arc::new(ArgsValidator::new(&tool.schema())?.with_sensitive(sensitive.iter().cloned()));
    if let Ok(mut m) = inner.validators.lock() {
        if m.len() > 10_000 {
            m.clear();
        }
        m.insert(key, Arc::clone(&v));
    }
    Ok(v)
}

type Started = (Control, EventReceiver);

/// How long a call may wait for a Node.js worker, and its caller's cancellation.
#[allow(clippy::too_many_arguments)]
async fn start(
    inner: &Inner,
    req: &CallRequest,
    call_id: &str,
    args: &Value,
    secrets: &Secrets,
    cap: usize,
    cancelled: watch::Receiver<bool>,
    waiting_for: &Mutex<Option<String>>,
) -> Result<Started, RuntimeError> {
    let tool = match &req.tool {
        ToolRef::Native(tool) => {
            return Ok(start_native(
                Arc::clone(tool),
                args.clone(),
                call_id,
                cancelled,
            ));
        }
        ToolRef::Folder(tool) => tool,
    };
    crate::home::check(&req.user, &inner.env)?;
    // A user whose home is full (its quota) runs nothing, even in a warm worker.
    inner.launcher.admit(&req.user, &inner.env).await?;
    match tool.manifest.language {
        Language::Typescript => {
            // One stat per file tells whether the code changed; only then is it re-read
            // and transpiled (which itself skips files already in the user's cache).
            let version = inner
                .code
                .prepare(&inner.launcher, &tool.dir, &req.user.user)
                .await?;
            in_view(inner, tool, &req.user)?;
            let key = WorkerKey {
                user: req.user.user.clone(),
                tool: match inner.config.worker_scope {
                    WorkerScope::Tool => Some(tool.dir.clone()),
                    WorkerScope::User => None,
                },
                network: network_for(inner, tool),
            };
            let worker = inner.pool.acquire(&req.user, key, waiting_for).await?;
            Ok(worker.start_call(&tool.entry.path, &version, call_id, args, secrets, cap))
        }
        Language::Python | Language::Bash => {
            let program = if tool.manifest.language == Language::Python {
                &inner.config.python
            } else {
                &inner.config.bash
            };
            std::fs::create_dir_all(&req.user.home)
                .map_err(|e| RuntimeError::io(&req.user.home, e))?;
            crate::process::spawn(crate::process::ProcessCall {
                launcher: &inner.launcher,
                program,
                entry: &tool.entry.path,
                dir: &tool.dir,
                space: &req.user,
                env: &inner.env,
                network: network_for(inner, tool),
                params: args,
                tool_call_id: call_id,
                max_text: cap,
            })
            .await
        }
    }
}

/// A sandboxed worker sees the runtime's tool roots and its user's own
/// (`ToolEnv::roots_for`) only.
fn in_view(
    inner: &Inner,
    tool: &toolhost_catalog::Tool,
    space: &UserSpace,
) -> Result<(), RuntimeError> {
    if inner.launcher.sandbox.is_none() || inner.env.shows(space, &tool.dir) {
        return Ok(());
    }
    Err(RuntimeError::Sandbox(format!(
        "{} is not under one of the runtime's tool roots, so its sandbox cannot show it",
        tool.dir.display()
    )))
}

/// Whether a tool's sandbox gets the network: declared in TOOL.md, and the operator's
/// policy allows it.
fn network_for(inner: &Inner, tool: &toolhost_catalog::Tool) -> bool {
    match &inner.launcher.sandbox {
        Some(sandbox) => sandbox
            .config()
            .network_for(&tool.manifest.name, tool.manifest.network),
        None => true,
    }
}

/// Sandboxed tools run as other uids: they must be able to read the harness, though never
/// to write it. (Transpiled code is per user: see `cache.rs`.)
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

fn start_native(
    tool: Arc<dyn NativeTool>,
    args: Value,
    call_id: &str,
    cancelled: watch::Receiver<bool>,
) -> Started {
    let (tx, rx) = crate::events::channel();
    let ctx = NativeContext {
        tool_call_id: call_id.to_string(),
        cancelled,
        progress: tx.clone(),
    };
    let task = tokio::spawn(async move {
        let event = match tool.call(args, ctx).await {
            Ok(value) => WorkerEvent::Result {
                value,
                truncated_from: None,
            },
            Err(message) => WorkerEvent::Error {
                kind: "native".into(),
                message,
                stack: String::new(),
            },
        };
        let _ = tx.send(event);
    });
    (Control::Task(task.abort_handle()), rx)
}
