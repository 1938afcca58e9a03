//! What a running tool reports about one call (progress, log lines, the outcome), on its
//! way to the loop that runs the call.
//!
//! That loop makes progress only while the call's caller polls it, and a caller may fall
//! behind (an MCP client that reads slowly, say) while the tool floods. So the queue is
//! bounded by what it holds, not by what was sent: past [`MAX_PROGRESS`] waiting updates, a
//! new update replaces the newest waiting one (which it supersedes), counting how many it
//! stands for; past [`MAX_LOGS`] waiting log lines, new lines are dropped and counted, and
//! the count is reported in their place. The outcome (result, error, death) is never
//! dropped, and the last update always arrives.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::Notify;

/// What a running call reports to the call's lifecycle, whoever runs it (a Node.js
/// worker, a per-call process, a native tool, or an executor elsewhere). A call reports
/// any number of progress updates and log lines, then exactly one outcome: `Result`,
/// `Error` or `Died`.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecutionEvent {
    /// A progress update: MCP content blocks (`{"type": "text", "text": …}`, …).
    Progress(Vec<Value>),
    /// A line the tool logged (its console, stdout or stderr); never shown to the caller.
    Log {
        /// The console method or stream it came from (`log`, `warn`, `stderr`, …).
        level: String,
        /// The line, as the tool wrote it (the lifecycle redacts it).
        text: String,
    },
    /// What the tool returned, before normalisation (see [`crate::normalise`]).
    Result {
        /// The returned value: a `{content: [...]}` object, a string or any JSON.
        value: Value,
        /// The value's length before the runner cut it, when it did.
        truncated_from: Option<usize>,
    },
    /// The tool failed.
    Error {
        /// How it failed.
        kind: ErrorKind,
        /// What the caller is told (the lifecycle adds context for some kinds).
        message: String,
        /// A stack trace or other detail for the log; may be empty.
        stack: String,
    },
    /// What ran the call ended (or broke its protocol) before the call finished.
    Died(String),
}

impl ExecutionEvent {
    /// Whether this is a call's outcome (after which it reports nothing more).
    pub fn is_outcome(&self) -> bool {
        !matches!(
            self,
            ExecutionEvent::Progress(_) | ExecutionEvent::Log { .. }
        )
    }
}

/// How a tool failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Its code could not be loaded (a syntax error, a missing module, a stale cache).
    Load,
    /// Its entry file has no `execute` function.
    Export,
    /// It was cancelled before it started.
    Cancelled,
    /// It threw or rejected.
    Throw,
    /// What it returned cannot be turned into JSON.
    Serialize,
    /// A native tool returned an error.
    Native,
    /// Its process was stopped for filling its home (the quota).
    Quota,
    /// Its process exited with a failure status.
    Exit,
    /// A Platypus plugin failed around the tool: its manifest, settings or factory.
    Plugin,
}

/// Logs a line a tool or plugin wrote at the level it wrote it at (`console.error` and a
/// plugin logger's `error` as errors, `warn` as warnings, `debug`/`trace` as debug; the
/// rest, stdout and stderr included, as information). `who` names the tool or plugin,
/// `call` the call (empty for a plugin's own operations).
pub(crate) fn log_line(level: &str, who: &str, call: &str, text: &str) {
    match level {
        "error" => tracing::error!(target: "toolhost::tool", tool = %who, call, "{text}"),
        "warn" => tracing::warn!(target: "toolhost::tool", tool = %who, call, "{text}"),
        "debug" | "trace" => {
            tracing::debug!(target: "toolhost::tool", tool = %who, call, "{text}")
        }
        _ => tracing::info!(target: "toolhost::tool", tool = %who, call, level = %level, "{text}"),
    }
}

impl ErrorKind {
    /// The kind's name in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Load => "load",
            ErrorKind::Export => "export",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Throw => "throw",
            ErrorKind::Serialize => "serialize",
            ErrorKind::Native => "native",
            ErrorKind::Quota => "quota",
            ErrorKind::Exit => "exit",
            ErrorKind::Plugin => "plugin",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Progress updates waiting for the call loop.
pub(crate) const MAX_PROGRESS: usize = 64;
/// Log lines waiting for the call loop.
pub(crate) const MAX_LOGS: usize = 256;

/// An event, and for a progress update how many updates the tool sent that it stands for
/// (1, or more when it replaced waiting ones).
pub(crate) struct Received {
    pub event: ExecutionEvent,
    pub stands_for: u64,
}

#[derive(Default)]
struct State {
    queue: VecDeque<(ExecutionEvent, u64)>,
    progress: usize,
    logs: usize,
    dropped_logs: u64,
    senders: usize,
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    ready: Notify,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A call's event queue: any number of senders (whatever runs the call), one receiver
/// (the call's lifecycle).
pub fn channel() -> (EventSender, EventReceiver) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            senders: 1,
            ..State::default()
        }),
        ready: Notify::new(),
    });
    (EventSender(Arc::clone(&shared)), EventReceiver(shared))
}

/// The sending side of a call's event queue; cheap to clone.
pub struct EventSender(Arc<Shared>);

impl Clone for EventSender {
    fn clone(&self) -> Self {
        self.0.state().senders += 1;
        EventSender(Arc::clone(&self.0))
    }
}

impl Drop for EventSender {
    fn drop(&mut self) {
        self.0.state().senders -= 1;
        self.0.ready.notify_one();
    }
}

impl EventSender {
    /// Queues `event`; `false` when the receiver is gone (nobody waits for the call).
    pub fn send(&self, event: ExecutionEvent) -> bool {
        let mut st = self.0.state();
        if st.closed {
            return false;
        }
        match event {
            ExecutionEvent::Progress(_) if st.progress >= MAX_PROGRESS => {
                // The newest waiting update is superseded by this one: replace it in place
                // of pushing, so order holds and the last update survives.
                let newest = st
                    .queue
                    .iter()
                    .rposition(|(e, _)| matches!(e, ExecutionEvent::Progress(_)));
                if let Some(i) = newest
                    && let Some((_, stood_for)) = st.queue.remove(i)
                {
                    st.queue.push_back((event, stood_for + 1));
                    drop(st);
                    self.0.ready.notify_one();
                    return true;
                }
                st.progress += 1;
                st.queue.push_back((event, 1));
            }
            ExecutionEvent::Progress(_) => {
                st.progress += 1;
                st.queue.push_back((event, 1));
            }
            ExecutionEvent::Log { .. } if st.logs >= MAX_LOGS => {
                st.dropped_logs += 1;
                return true;
            }
            ExecutionEvent::Log { .. } => {
                st.logs += 1;
                st.queue.push_back((event, 1));
            }
            outcome => st.queue.push_back((outcome, 1)),
        }
        drop(st);
        self.0.ready.notify_one();
        true
    }
}

/// The receiving side of a call's event queue, read by the call's lifecycle. Dropping it
/// tells the senders that nobody waits for the call any more.
pub struct EventReceiver(Arc<Shared>);

impl Drop for EventReceiver {
    fn drop(&mut self) {
        let mut st = self.0.state();
        st.closed = true;
        st.queue.clear();
    }
}

impl EventReceiver {
    /// The next event; `None` once every sender is gone and nothing waits.
    pub(crate) async fn recv(&mut self) -> Option<Received> {
        loop {
            // Registered before looking, so a send in between is not missed.
            let ready = self.0.ready.notified();
            {
                let mut st = self.0.state();
                // Once the lines that did fit are delivered, say how many did not.
                if st.dropped_logs > 0 && st.logs == 0 {
                    let n = std::mem::take(&mut st.dropped_logs);
                    return Some(Received {
                        event: ExecutionEvent::Log {
                            level: "warn".into(),
                            text: format!(
                                "toolhost: {n} lines of the tool's log were dropped while \
                                 the call's caller was not reading"
                            ),
                        },
                        stands_for: 1,
                    });
                }
                if let Some((event, stands_for)) = st.queue.pop_front() {
                    match event {
                        ExecutionEvent::Progress(_) => st.progress -= 1,
                        ExecutionEvent::Log { .. } => st.logs -= 1,
                        _ => {}
                    }
                    return Some(Received { event, stands_for });
                }
                if st.senders == 0 {
                    return None;
                }
            }
            ready.await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn progress(n: u64) -> ExecutionEvent {
        ExecutionEvent::Progress(vec![json!({"type": "text", "text": n.to_string()})])
    }

    fn text(e: &ExecutionEvent) -> String {
        match e {
            ExecutionEvent::Progress(c) => c[0]["text"].as_str().unwrap().to_string(),
            ExecutionEvent::Log { text, .. } => text.clone(),
            ExecutionEvent::Result { .. } => "result".into(),
            _ => "other".into(),
        }
    }

    #[tokio::test]
    async fn a_flood_costs_bounded_memory_keeps_order_and_the_last_update() {
        let (tx, mut rx) = channel();
        let sent = 100_000u64;
        for n in 1..=sent {
            assert!(tx.send(progress(n)));
        }
        for n in 0..10_000 {
            tx.send(ExecutionEvent::Log {
                level: "log".into(),
                text: format!("line {n}"),
            });
        }
        tx.send(ExecutionEvent::Result {
            value: json!("done"),
            truncated_from: None,
        });
        drop(tx);
        let mut got = Vec::new();
        let mut stood_for = 0;
        let mut last = 0;
        while let Some(r) = rx.recv().await {
            if let ExecutionEvent::Progress(_) = r.event {
                let n: u64 = text(&r.event).parse().unwrap();
                assert!(n > last, "order kept");
                last = n;
                stood_for += r.stands_for;
            }
            got.push(text(&r.event));
        }
        assert!(got.len() <= MAX_PROGRESS + MAX_LOGS + 2, "{}", got.len());
        assert_eq!(last, sent, "the last update arrives");
        assert_eq!(stood_for, sent, "every update sent is accounted for");
        assert!(
            got.iter()
                .any(|t| t.contains("9744 lines of the tool's log were dropped"))
        );
        assert_eq!(got.last().unwrap(), "result");
    }

    #[tokio::test]
    async fn ends_when_every_sender_is_gone_and_refuses_once_the_receiver_is() {
        let (tx, mut rx) = channel();
        let other = tx.clone();
        drop(tx);
        other.send(progress(1));
        drop(other);
        assert!(rx.recv().await.is_some());
        assert!(rx.recv().await.is_none());
        let (tx, rx) = channel();
        drop(rx);
        assert!(!tx.send(progress(1)));
    }
}
