//! The runtime facade and the life of one call: validate, run, watch the clock, normalise.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until};

use crate::RuntimeError;
use crate::call::{Call, Progress, ProgressQueue};
use crate::config::{RuntimeConfig, ToolEnv, UserSpace};
use crate::events::{ErrorKind, EventReceiver, ExecutionEvent};
use crate::executor::{Execution, ExecutionControl, Executor, Running, Waiting, failure_of};
use crate::local::LocalExecutor;
use crate::native::NativeTool;
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
    /// A tool of a Platypus plugin's tool set.
    Plugin(Arc<crate::PluginTool>),
}

impl ToolRef {
    /// The tool's name: a folder tool's TOOL.md `name`; a native tool's name.
    pub fn name(&self) -> &str {
        match self {
            ToolRef::Folder(t) => &t.manifest.name,
            ToolRef::Native(t) => t.name(),
            ToolRef::Plugin(t) => &t.name,
        }
    }

    fn schema(&self) -> Value {
        match self {
            ToolRef::Folder(t) => t.input_schema().clone(),
            ToolRef::Native(t) => t.input_schema(),
            ToolRef::Plugin(t) => t.input_schema.clone(),
        }
    }

    /// The names of its `sensitive` inputs: never logged, never stored.
    pub fn sensitive_inputs(&self) -> Vec<String> {
        match self {
            ToolRef::Folder(t) => t.manifest.sensitive_inputs().map(str::to_string).collect(),
            ToolRef::Native(t) => t.sensitive_inputs(),
            ToolRef::Plugin(_) => Vec::new(),
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
            ToolRef::Plugin(t) => ValidatorKey::Plugin(t.schema_hash),
        }
    }

    /// The tool's own `timeout` and `idle_timeout` (TOOL.md, in seconds).
    fn own_timeouts(&self) -> (Option<Duration>, Option<Duration>) {
        match self {
            ToolRef::Folder(t) => (t.manifest.timeout, t.manifest.idle_timeout),
            ToolRef::Native(_) | ToolRef::Plugin(_) => (None, None),
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum ValidatorKey {
    Folder(toolhost_catalog::ContentHash),
    Native(String, [u8; 32]),
    Plugin([u8; 32]),
}

/// One call to make.
pub struct CallRequest {
    /// The tool to call.
    pub tool: ToolRef,
    /// The arguments, validated against the tool's input schema before it runs.
    pub args: Value,
    /// The user the call runs for, and that user's home.
    pub user: UserSpace,
    /// Passed to `execute` as `toolCallId`; generated when absent.
    pub tool_call_id: Option<String>,
    /// Overrides the tool's and the configuration's deadline.
    pub timeout: Option<Duration>,
}

/// Runs tool calls: the life of a call (validation, deadline, idle timer, cancellation
/// and its grace, redaction, normalisation) around an [`Executor`] that runs it, by
/// default the [`LocalExecutor`]. Cheap to clone; all clones share the executor and
/// caches.
pub struct Runtime<E = LocalExecutor> {
    inner: Arc<Inner<E>>,
}

impl<E> Clone for Runtime<E> {
    fn clone(&self) -> Self {
        Runtime {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<E> {
    config: RuntimeConfig,
    executor: E,
    validators: Mutex<HashMap<ValidatorKey, Arc<ArgsValidator>>>,
    calls: AtomicU64,
    /// This process's id, for generated call ids (`getpid` is a system call each time).
    pid: u32,
}

impl Runtime {
    /// A runtime that runs calls on this host ([`LocalExecutor`]). Must be called inside
    /// a Tokio runtime (it starts the idle-worker reaper).
    pub fn new(config: RuntimeConfig, env: ToolEnv) -> Result<Runtime, RuntimeError> {
        config.validate()?;
        let local = LocalExecutor::new(&config, env)?;
        Runtime::with_executor(config, local)
    }

    /// Starts long-lived servers (stdio MCP servers) in this runtime's sandbox.
    pub fn servers(&self) -> crate::ServerLauncher {
        self.inner.executor.servers()
    }

    /// Live Node.js workers (for status and tests).
    pub async fn workers(&self) -> usize {
        self.inner.executor.workers()
    }

    /// Processes started in the sandbox so far; `None` when tools run without one.
    pub fn sandbox_starts(&self) -> Option<u64> {
        self.inner.executor.sandbox_starts()
    }

    /// The sandbox tool processes start in (what its probe found, whether it is ready);
    /// `None` when the configuration turned it off.
    pub fn sandbox(&self) -> Option<&std::sync::Arc<toolhost_sandbox::Sandbox>> {
        self.inner.executor.sandbox()
    }

    /// The process group of each live Node.js worker: the worker, its sandbox's
    /// processes and whatever its tools started (for status and measurements).
    pub fn worker_process_groups(&self) -> Vec<i32> {
        self.inner.executor.worker_process_groups()
    }
}

impl<E: Executor> Runtime<E> {
    /// A runtime whose calls `executor` runs; the configuration's deadlines, idle
    /// timeout, cancellation grace and result cap apply to them as to local ones.
    pub fn with_executor(config: RuntimeConfig, executor: E) -> Result<Runtime<E>, RuntimeError> {
        config.validate()?;
        Ok(Runtime {
            inner: Arc::new(Inner {
                config,
                executor,
                validators: Mutex::new(HashMap::new()),
                calls: AtomicU64::new(0),
                pid: std::process::id(),
            }),
        })
    }

    /// Waits until the executor is warm (locally: the sandbox's spare helpers have
    /// started), so that the next calls start without that cost. Optional: a server may
    /// call it once at start.
    pub async fn warm_up(&self) {
        self.inner.executor.warm_up().await;
    }

    /// The runtime's settings.
    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// The executor that runs this runtime's calls.
    pub fn executor(&self) -> &E {
        &self.inner.executor
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

    /// Stops whatever runs calls (locally: every worker).
    pub async fn shutdown(&self) {
        self.inner.executor.shutdown().await;
    }
}

#[derive(Debug, Clone, Copy)]
enum Stop {
    Cancelled,
    Deadline(Duration),
    Idle(Duration),
}

impl Stop {
    fn stopped(self) -> crate::Stopped {
        match self {
            Stop::Cancelled => crate::Stopped::Cancelled,
            Stop::Deadline(_) | Stop::Idle(_) => crate::Stopped::TimedOut,
        }
    }

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

async fn run<E: Executor>(
    shared: Arc<Inner<E>>,
    req: CallRequest,
    call_id: &str,
    progress: &ProgressQueue,
    mut cancel: watch::Receiver<bool>,
) -> ToolResult {
    let name = req.tool.name().to_string();
    let sensitive = req.tool.sensitive_inputs();
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
    let mut secrets = Secrets::from_args(&args, sensitive.iter().map(String::as_str));
    if let ToolRef::Plugin(t) = &req.tool {
        secrets.add_values(t.module.secrets.iter().map(String::as_str));
    }
    tracing::info!(tool = %name, call = call_id, user = %req.user.user, args = %args_for_log(&args, sensitive.iter().map(String::as_str)), "call");

    let (own_deadline, own_idle) = req.tool.own_timeouts();
    let deadline_after = req.timeout.or(own_deadline).unwrap_or(inner.config.timeout);
    let idle_after = own_idle.unwrap_or(inner.config.idle_timeout);
    let cap = inner.config.max_result_bytes;
    let (cancelled_tx, cancelled_rx) = watch::channel(false);

    // The deadline and cancellation cover the executor's own steps too (locally: reading
    // and transpiling the code, waiting for a worker, starting the sandbox): dropping
    // `starting` abandons them. The executor says what it waits for, to name it.
    let deadline = after(deadline_after);
    let waiting = Waiting::default();
    let starting = inner.executor.start(Execution {
        tool: &req.tool,
        user: &req.user,
        call_id,
        args: &args,
        secrets: &secrets,
        max_result_bytes: cap,
        cancelled: cancelled_rx,
        waiting: &waiting,
    });
    let started = tokio::select! {
        started = starting => Ok(started),
        _ = sleep_until(deadline) => Err(Stop::Deadline(deadline_after)),
        _ = cancel.changed() => Err(Stop::Cancelled),
    };
    let Running { control, events } = match started {
        Ok(Ok(started)) => started,
        Ok(Err(e)) => {
            let mut result = ToolResult::error(secrets.clean(&e.to_string()));
            if matches!(e, RuntimeError::Overloaded(_)) {
                result.stopped = Some(crate::Stopped::Overloaded);
            }
            return result;
        }
        Err(stop) => {
            let mut message = stop.message();
            if let Some(what) = waiting.get() {
                message.push_str(&format!(" waiting for {what}"));
            }
            tracing::info!(tool = %name, call = call_id, "stopped before the tool started: {message}");
            let mut result = ToolResult::error(message);
            result.stopped = Some(stop.stopped());
            return result;
        }
    };
    let mut flight = InFlight {
        control: Some(control),
        events,
        grace: inner.config.cancel_grace,
    };

    let mut idle_deadline = after(idle_after);
    let mut stop: Option<Stop> = None;
    let mut grace: Option<Instant> = None;
    let mut seq = 0u64;
    let mut failure = None;
    let far = after(Duration::from_secs(365 * 24 * 3600));
    let mut result = loop {
        tokio::select! {
            event = flight.events.recv() => match event.map(|r| (r.event, r.stands_for)) {
                Some((ExecutionEvent::Progress(content), stands_for)) => {
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
                Some((ExecutionEvent::Log { level, text }, _)) => {
                    crate::events::log_line(&level, &name, call_id, &secrets.clean(&text));
                }
                Some((ExecutionEvent::Result { value, truncated_from }, _)) => {
                    break match stop {
                        Some(s) => ToolResult::error(s.message()),
                        None => normalise(value, truncated_from, cap),
                    };
                }
                Some((ExecutionEvent::Error { kind, message, stack }, _)) => {
                    failure = Some(kind);
                    if !stack.is_empty() {
                        tracing::info!(target: "toolhost::tool", tool = %name, call = call_id, "{kind}: {}", secrets.clean(&stack));
                    }
                    break match stop {
                        Some(s) => ToolResult::error(s.message()),
                        None => ToolResult::error(error_text(kind, &message)),
                    };
                }
                Some((ExecutionEvent::Died(reason), _)) => {
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
                flight.kill();
                break ToolResult::error(stop.map_or_else(|| "cancelled".into(), Stop::message));
            }
        }
        if stop.is_some() && grace.is_none() {
            tracing::info!(tool = %name, call = call_id, "stopping: {}", stop.map(Stop::message).unwrap_or_default());
            let _ = cancelled_tx.send(true);
            flight.cancel();
            grace = Some(after(inner.config.cancel_grace));
        }
    };
    flight.settle(failure);
    result.stopped = stop.map(Stop::stopped);
    result.redact(&secrets);
    tracing::info!(tool = %name, call = call_id, is_error = result.is_error, "done");
    result
}

/// A call whose tool is running. If the caller drops the call before it settles, the
/// tool is cancelled, and killed if it does not settle within the grace period.
struct InFlight<C: ExecutionControl> {
    /// `None` once settled.
    control: Option<C>,
    events: EventReceiver,
    grace: Duration,
}

impl<C: ExecutionControl> InFlight<C> {
    fn cancel(&self) {
        if let Some(control) = &self.control {
            control.cancel();
        }
    }

    fn kill(&self) {
        if let Some(control) = &self.control {
            control.kill();
        }
    }

    fn settle(&mut self, failure: Option<ErrorKind>) {
        if let Some(control) = self.control.take() {
            control.finish(failure);
        }
    }
}

impl<C: ExecutionControl> Drop for InFlight<C> {
    fn drop(&mut self) {
        let Some(control) = self.control.take() else {
            return;
        };
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            // No runtime left to wait in: stop the tool now.
            control.kill();
            control.finish(None);
            return;
        };
        control.cancel();
        let mut events = std::mem::replace(&mut self.events, crate::events::channel().1);
        let grace = self.grace;
        let cleanup = async move {
            let outcome = tokio::time::timeout(grace, async {
                while let Some(received) = events.recv().await {
                    if received.event.is_outcome() {
                        return failure_of(&received.event);
                    }
                }
                None
            })
            .await;
            if outcome.is_err() {
                control.kill();
            }
            control.finish(outcome.ok().flatten());
        };
        handle.spawn(cleanup);
    }
}

fn error_text(kind: ErrorKind, message: &str) -> String {
    match kind {
        ErrorKind::Load => format!("the tool failed to load: {message}"),
        ErrorKind::Throw if message.is_empty() => {
            "the tool threw an error without a message".into()
        }
        _ => message.to_string(),
    }
}

fn validator_for<E>(
    inner: &Inner<E>,
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
