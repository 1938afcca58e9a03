//! The caller's side of a call: a stream of progress events, one final result, cancel.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

use tokio::sync::{Notify, watch};

use crate::ToolResult;

/// One progress update. `seq` increases by one per update the tool sent; a caller that
/// falls far behind a flooding tool sees gaps (updates coalesced), never a reordering,
/// and always the last one.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The update's number: one more per update the tool sent.
    pub seq: u64,
    /// MCP content blocks, redacted.
    pub content: Vec<Value>,
}

impl Progress {
    /// The text of the update's text blocks, one per line.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// What a call yields: progress updates, then its result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallEvent {
    /// A progress update.
    Progress(Progress),
    /// The call's result; nothing follows.
    Done(ToolResult),
}

/// Updates waiting for the caller. Bounded: past `MAX_QUEUED`, a new update replaces the
/// newest waiting one, so a flood costs constant memory and the last update survives.
#[derive(Default)]
pub(crate) struct ProgressQueue {
    queue: Mutex<VecDeque<Progress>>,
    ready: Notify,
}

const MAX_QUEUED: usize = 256;

impl ProgressQueue {
    pub(crate) fn push(&self, p: Progress) {
        if let Ok(mut q) = self.queue.lock() {
            if q.len() >= MAX_QUEUED {
                q.pop_back();
            }
            q.push_back(p);
        }
        self.ready.notify_one();
    }

    fn pop(&self) -> Option<Progress> {
        self.queue.lock().ok()?.pop_front()
    }
}

/// A call. It makes progress while polled through [`Call::next`] or [`Call::result`];
/// dropping it cancels the call.
pub struct Call {
    /// The call's id: the caller's `tool_call_id`, or one generated.
    pub id: String,
    pub(crate) progress: Arc<ProgressQueue>,
    pub(crate) run: Option<Pin<Box<dyn Future<Output = ToolResult> + Send>>>,
    pub(crate) cancel: watch::Sender<bool>,
    pub(crate) done: Option<ToolResult>,
}

impl Call {
    /// Asks the tool to stop: its AbortSignal fires; if it does not settle within the
    /// grace period its processes are killed. The call then ends with a "cancelled" error.
    pub fn cancel(&self) {
        let _ = self.cancel.send(true);
    }

    /// A handle that can cancel this call from elsewhere.
    pub fn canceller(&self) -> Canceller {
        Canceller(self.cancel.clone())
    }

    /// The next event: progress updates in order, then the result, then `None`.
    pub async fn next(&mut self) -> Option<CallEvent> {
        loop {
            if let Some(p) = self.progress.pop() {
                return Some(CallEvent::Progress(p));
            }
            if let Some(done) = self.done.take() {
                return Some(CallEvent::Done(done));
            }
            let run = self.run.as_mut()?;
            tokio::select! {
                biased;
                _ = self.progress.ready.notified() => {}
                r = run => {
                    self.run = None;
                    self.done = Some(r);
                }
            }
        }
    }

    /// Waits for the result, skipping progress.
    pub async fn result(mut self) -> ToolResult {
        while let Some(event) = self.next().await {
            if let CallEvent::Done(r) = event {
                return r;
            }
        }
        ToolResult::error("the call ended without a result")
    }
}

/// Cancels a call from another task.
#[derive(Clone)]
pub struct Canceller(watch::Sender<bool>);

impl Canceller {
    /// Cancels the call, as [`Call::cancel`] does.
    pub fn cancel(&self) {
        let _ = self.0.send(true);
    }
}
