//! One Node.js worker process and the calls running in it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncRead;
use tokio::net::UnixListener;
use tokio::sync::Notify;

use super::frame::{self, ReadError};
use super::outbox::Outbox;
use super::pool::WorkerKey;
use super::protocol::{CallMessage, HostMessage, WorkerMessage};
use crate::RuntimeError;
use crate::config::ToolEnv;
use crate::config::UserSpace;
use crate::events::{EventReceiver, EventSender, ExecutionEvent};
use crate::launch::{Launcher, Started, ToolProcess};
use crate::lines::for_each_line;
use crate::redact::{Secrets, SeenSecrets};
use toolhost_sandbox::LaunchArg as Arg;

pub(crate) fn signal_group(pgid: i32, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
        // The group may be gone already; that is the goal anyway.
        let _ = rustix::process::kill_process_group(pid, signal);
    }
}

/// Everything needed to start a worker.
#[derive(Debug, Clone)]
pub(crate) struct WorkerSpawn {
    pub node: PathBuf,
    /// Flags for `node` before the harness (see `flags.rs`).
    pub node_flags: Vec<String>,
    pub harness: PathBuf,
    pub run_dir: PathBuf,
    /// Frames larger than this are a protocol violation.
    pub max_frame: usize,
    pub launcher: Launcher,
}

/// Where a sandboxed worker finds its socket directory.
const SOCKET_DIR_INSIDE: &str = "/run/toolhost/socket";

/// Kills a process group when dropped, unless disarmed (set to `None`).
struct KillGroupOnDrop(Option<i32>);

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            signal_group(pgid, rustix::process::Signal::KILL);
        }
    }
}

/// Removes a worker's socket directory once it is connected (or failed to).
struct RemoveDir(PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

pub(crate) struct Worker {
    /// What it serves: calls for anything else never reach it.
    pub key: WorkerKey,
    /// Host paths as the sandboxed worker sees them.
    view: Option<toolhost_sandbox::View>,
    pub pid: i32,
    to_worker: Outbox,
    calls: Mutex<HashMap<u64, EventSender>>,
    /// What its calls were given, to redact output that no call can be tied to.
    secrets: Arc<SeenSecrets>,
    next_id: AtomicU64,
    alive: AtomicBool,
    in_flight: AtomicUsize,
    last_used: Mutex<Instant>,
    /// Replaces the spare sandbox helper this worker used, once its first call is done:
    /// a helper starting earlier would take CPU from the call that is waiting for it.
    refill: Mutex<Option<toolhost_sandbox::Refill>>,
    /// The pool's signal that a call ended, for callers waiting for room.
    pool_changed: Arc<Notify>,
}

static SOCKET_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Worker {
    pub(crate) async fn spawn(
        spawn: &WorkerSpawn,
        space: &UserSpace,
        env: &ToolEnv,
        key: WorkerKey,
        pool_changed: Arc<Notify>,
    ) -> Result<Arc<Worker>, RuntimeError> {
        let network = key.network;
        std::fs::create_dir_all(&space.home).map_err(|e| RuntimeError::io(&space.home, e))?;
        let n = SOCKET_COUNTER.fetch_add(1, Ordering::Relaxed);
        // A directory per worker, so a sandbox sees its own socket and nothing else.
        let socket_dir = spawn.run_dir.join(format!("w{n}"));
        let _ = std::fs::remove_dir_all(&socket_dir);
        std::fs::create_dir(&socket_dir).map_err(|e| RuntimeError::io(&socket_dir, e))?;
        let _cleanup = RemoveDir(socket_dir.clone());
        let socket = socket_dir.join("s.sock");
        // The worker serves one user: it reads that user's transpiled code only.
        let transpiled = spawn.launcher.transpiled_dir(&space.user)?;
        let listener = UnixListener::bind(&socket).map_err(|e| RuntimeError::io(&socket, e))?;
        spawn
            .launcher
            .hand_over(&space.user, &[&socket_dir, &socket])?;
        let Started {
            mut child,
            pgid: pid,
            lease,
            view,
            refill,
            watched,
        } = spawn
            .launcher
            .start(ToolProcess {
                program: &spawn.node,
                args: std::iter::once(Arg::Text("--enable-source-maps".into()))
                    .chain(spawn.node_flags.iter().map(|f| Arg::Text(f.clone())))
                    .chain([
                        Arg::Path(spawn.harness.clone()),
                        Arg::Path(transpiled),
                        Arg::Path(socket.clone()),
                    ])
                    .chain(key.plugin.as_ref().map(|_| Arg::Text("plugin".into())))
                    .collect(),
                cwd: &space.home,
                space,
                env,
                extra_env: Vec::new(),
                stdin: false,
                network,
                per_call: false,
                extra: vec![(socket_dir.clone(), PathBuf::from(SOCKET_DIR_INSIDE))],
                read_only: key
                    .plugin
                    .as_ref()
                    .map(|p| p.mounts.to_vec())
                    .unwrap_or_default(),
            })
            .await?;
        // Until the worker is ready, dropping this start (the call's deadline or its
        // cancellation) ends the whole sandbox, not just the helper's first process.
        let mut starting = KillGroupOnDrop(Some(pid));
        let accepted = tokio::select! {
            accepted = tokio::time::timeout(Duration::from_secs(20), listener.accept()) => accepted,
            status = child.wait() => {
                let why = match status {
                    Ok(s) => describe_exit(s),
                    Err(e) => e.to_string(),
                };
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use tokio::io::AsyncReadExt;
                    let _ = tokio::time::timeout(Duration::from_millis(200), e.read_to_string(&mut err)).await;
                }
                return Err(RuntimeError::WorkerStart(format!(
                    "Node.js worker failed to start: {why}{}",
                    last_line(&err).map(|l| format!(": {l}")).unwrap_or_default()
                )));
            }
        };
        drop(listener);
        let stream = match accepted {
            Ok(Ok((stream, _))) => stream,
            other => {
                let _ = child.start_kill();
                let why = match other {
                    Ok(Err(e)) => e.to_string(),
                    _ => "it did not connect within 20 s".into(),
                };
                return Err(RuntimeError::WorkerStart(format!(
                    "Node.js worker failed to start: {why}"
                )));
            }
        };
        let (reader, writer) = stream.into_split();
        let mut reader = tokio::io::BufReader::with_capacity(64 * 1024, reader);
        match frame::read(&mut reader, spawn.max_frame).await {
            Ok(Some(WorkerMessage::Ready(ready))) => {
                tracing::debug!(pid, node = %ready.node, user = %space.user, "Node.js worker ready");
            }
            other => {
                let _ = child.start_kill();
                return Err(RuntimeError::WorkerStart(format!(
                    "Node.js worker did not say ready: {other:?}"
                )));
            }
        }

        starting.0 = None;
        let worker = Arc::new(Worker {
            key,
            view,
            pid,
            to_worker: Outbox::new(writer),
            calls: Mutex::new(HashMap::new()),
            secrets: Arc::default(),
            next_id: AtomicU64::new(1),
            alive: AtomicBool::new(true),
            in_flight: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
            refill: Mutex::new(refill),
            pool_changed,
        });
        // Output that bypasses the harness (a child process with inherited stdio, a crash
        // after the call ended) cannot be tied to a call, so it is redacted with the
        // secrets of every call the worker was given; it may come after the worker is gone.
        if let Some(out) = child.stdout.take() {
            tokio::spawn(log_lines(out, pid, "stdout", Arc::clone(&worker.secrets)));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(log_lines(err, pid, "stderr", Arc::clone(&worker.secrets)));
        }
        let w = Arc::clone(&worker);
        let max_frame = spawn.max_frame;
        tokio::spawn(async move {
            let why = loop {
                match frame::read(&mut reader, max_frame).await {
                    Ok(Some(message)) => w.dispatch(message),
                    Ok(None) => break None,
                    Err(ReadError::Io(e)) => {
                        tracing::debug!(pid = w.pid, "reading from the Node.js worker failed: {e}");
                        break None;
                    }
                    Err(ReadError::TooLarge(n)) => {
                        break Some(format!(
                            "sent a {n}-byte message, over the protocol's limit"
                        ));
                    }
                    Err(ReadError::Malformed(e)) => {
                        break Some(format!("sent a malformed message ({e})"));
                    }
                }
            };
            if why.is_some() {
                signal_group(w.pid, rustix::process::Signal::KILL);
            }
            let status = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
            drop(lease);
            let stopped = watched
                .as_ref()
                .and_then(|w| w.stopped())
                .map(str::to_string);
            drop(watched);
            let reason = match (why, status) {
                // Stopped by the home quota: its calls end with why.
                _ if stopped.is_some() => stopped.unwrap_or_default(),
                (Some(why), _) => format!("the tool's Node.js process {why} and was stopped"),
                (None, Ok(Ok(s))) => describe_exit(s),
                (None, _) => {
                    signal_group(w.pid, rustix::process::Signal::KILL);
                    "the tool's Node.js process stopped answering".into()
                }
            };
            w.died(&reason);
        });
        Ok(worker)
    }

    pub(crate) fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    pub(crate) fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    /// Counts a call about to start, so the pool neither retires this worker nor
    /// over-fills it meanwhile. The pool calls it under its lock; `start_call` follows.
    pub(crate) fn reserve(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    /// Starts a call reserved with [`Worker::reserve`] (`call`'s id is assigned here, its
    /// entry translated to the worker's view); its events arrive on the returned receiver
    /// until a final one.
    pub(crate) fn start_call(
        self: &Arc<Self>,
        call: CallMessage<'_>,
        secrets: &Secrets,
    ) -> (u64, EventReceiver) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.secrets.call_started(id, secrets);
        let (tx, rx) = crate::events::channel();
        self.touch();
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(id, tx.clone());
        }
        if !self.is_alive() {
            let _ = tx.send(ExecutionEvent::Died(
                "the tool's Node.js process had already ended".into(),
            ));
        }
        let inside = self.view.as_ref().and_then(|v| v.inside(call.entry));
        let call = HostMessage::Call(CallMessage {
            id,
            entry: inside.as_deref().unwrap_or(call.entry),
            ..call
        });
        if let Err(e) = self.send(&call) {
            let _ = tx.send(ExecutionEvent::Died(format!(
                "the call could not be sent to the tool's Node.js process: {e}"
            )));
        }
        (id, rx)
    }

    /// Asks call `id` to stop: its `AbortSignal` fires.
    pub(crate) fn cancel(&self, id: u64) {
        // A cancel message always serialises.
        let _ = self.send(&HostMessage::Cancel { id });
    }

    pub(crate) fn finish(&self, id: u64) {
        self.secrets.call_ended(id);
        let removed = self
            .calls
            .lock()
            .map(|mut c| c.remove(&id).is_some())
            .unwrap_or(false);
        if removed {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
        self.touch();
        self.refill();
        self.pool_changed.notify_waiters();
    }

    fn refill(&self) {
        let refill = self.refill.lock().ok().and_then(|mut r| r.take());
        drop(refill);
    }

    fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    fn send(&self, message: &HostMessage<'_>) -> Result<(), serde_json::Error> {
        self.to_worker.send(frame::encode(message)?);
        Ok(())
    }

    /// Kills the worker's whole process group; its in-flight calls end with `why`.
    pub(crate) fn kill(&self, why: &str) {
        tracing::debug!(pid = self.pid, user = %self.key.user, tool = ?self.key.tool, "{why}: killing the Node.js worker");
        self.alive.store(false, Ordering::Release);
        signal_group(self.pid, rustix::process::Signal::KILL);
    }

    fn dispatch(&self, message: WorkerMessage) {
        let Some((id, event)) = message.into_event() else {
            return;
        };
        let Some(id) = id else {
            // Output no call can be tied to.
            if let ExecutionEvent::Log { text, .. } = event {
                let text = self.secrets.clean(&text);
                tracing::info!(target: "toolhost::tool", pid = self.pid, "{text}");
            }
            return;
        };
        let sender = self.calls.lock().ok().and_then(|c| c.get(&id).cloned());
        if let Some(tx) = sender {
            let _ = tx.send(event);
        }
    }

    fn died(&self, reason: &str) {
        self.alive.store(false, Ordering::Release);
        self.refill();
        let calls: Vec<_> = self
            .calls
            .lock()
            .map(|mut c| c.drain().collect())
            .unwrap_or_default();
        if !calls.is_empty() {
            tracing::warn!(pid = self.pid, user = %self.key.user, tool = ?self.key.tool, calls = calls.len(), "{reason}");
        }
        self.in_flight
            .fetch_sub(calls.len().min(self.in_flight()), Ordering::AcqRel);
        for (_, tx) in calls {
            let _ = tx.send(ExecutionEvent::Died(reason.to_string()));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.is_alive() {
            signal_group(self.pid, rustix::process::Signal::KILL);
        }
    }
}

pub(crate) fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the tool's process exited with status {code}"),
        (None, Some(9)) => {
            "the tool's process was killed (SIGKILL: out of memory, or stopped by Toolhost)".into()
        }
        (None, Some(sig)) => format!("the tool's process was killed by signal {sig}"),
        _ => "the tool's process ended".into(),
    }
}

/// Logs a stream line by line, holding at most one capped line in memory: a tool that
/// writes gigabytes without a newline costs the host nothing.
pub(crate) async fn log_lines(
    stream: impl AsyncRead + Unpin,
    pid: i32,
    which: &'static str,
    secrets: Arc<SeenSecrets>,
) {
    for_each_line(stream, 8192, |text, dropped| {
        let text = secrets.clean(&text);
        if dropped > 0 {
            tracing::info!(target: "toolhost::tool", pid, stream = which, "{text}… ({dropped} more bytes)");
        } else {
            tracing::info!(target: "toolhost::tool", pid, stream = which, "{text}");
        }
    })
    .await;
}
