//! Calls started through the API, while they run and for a while after: their events
//! (progress, then the result) kept so that a client can follow them, leave, and come back
//! with `Last-Event-ID` for what it missed.
//!
//! A call belongs to the user who started it. It runs on its own task, not on the request
//! that started it nor on any stream following it: closing a stream never cancels a call
//! (`DELETE /calls/{id}` does). Bounded everywhere: running calls per user and overall,
//! progress events kept per call, finished calls kept for [`KEEP_FINISHED`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use toolhost_host::CallTrace;
use toolhost_runtime::{Call, CallEvent, Stopped, ToolResult};
use utoipa::ToSchema;

/// How long a finished call's events stay for late readers.
pub(crate) const KEEP_FINISHED: Duration = Duration::from_secs(600);

/// Progress events kept per call; older ones make way (a reader resuming from before them
/// gets the oldest kept one next).
const KEEP_PROGRESS: usize = 512;

/// Running calls one user may have.
pub(crate) const MAX_RUNNING_PER_USER: usize = 32;

/// Calls kept (running and finished) over all users.
const MAX_KEPT: usize = 4096;

/// One event of a call, as its stream sends it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum CallUpdate {
    /// The tool reported progress.
    Progress {
        /// One more per update the tool sent.
        seq: u64,
        /// The update's text.
        message: String,
        /// The update as MCP content blocks.
        #[schema(value_type = Vec<Object>)]
        content: Vec<Value>,
    },
    /// The call ended: the last event.
    Result(CallResult),
}

/// How a call ended, and what it returned.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct CallResult {
    /// `success`, `error`, `cancelled` or `timeout`.
    pub(crate) outcome: String,
    /// Whether the result is an error (the content says what went wrong).
    pub(crate) is_error: bool,
    /// MCP content blocks: text, images, …
    #[schema(value_type = Vec<Object>)]
    pub(crate) content: Vec<Value>,
    /// The tool's structured result, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub(crate) structured_content: Option<Value>,
    /// How long the call took.
    pub(crate) duration_ms: u64,
}

impl CallResult {
    fn of(result: ToolResult, took: Duration) -> CallResult {
        let outcome = match (result.stopped, result.is_error) {
            (Some(Stopped::Cancelled), _) => "cancelled",
            (Some(Stopped::TimedOut), _) => "timeout",
            (Some(Stopped::Overloaded), _) => "overloaded",
            (None, true) => "error",
            (None, false) => "success",
        };
        CallResult {
            outcome: outcome.to_string(),
            is_error: result.is_error,
            content: result.content,
            structured_content: result.structured_content,
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// A call started through the API.
pub(crate) struct LiveCall {
    pub(crate) id: String,
    pub(crate) user: String,
    pub(crate) tool: String,
    pub(crate) agent: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub(crate) started_at: i64,
    cancel: CancellationToken,
    events: Mutex<Events>,
    /// The id of the newest event: readers wait on it.
    newest: watch::Sender<u64>,
}

#[derive(Default)]
struct Events {
    /// Ids count from 1, one per event; the result's is the last.
    kept: VecDeque<(u64, Arc<CallUpdate>)>,
    next_id: u64,
    progress_kept: usize,
    finished: Option<Instant>,
}

impl LiveCall {
    fn events(&self) -> MutexGuard<'_, Events> {
        self.events.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the call has its result.
    pub(crate) fn finished(&self) -> bool {
        self.events().finished.is_some()
    }

    /// Its result, once it has one.
    pub(crate) fn result(&self) -> Option<CallResult> {
        let events = self.events();
        events.finished?;
        match events.kept.back().map(|(_, e)| e.as_ref()) {
            Some(CallUpdate::Result(r)) => Some(r.clone()),
            _ => None,
        }
    }

    /// Asks the call to stop; it ends with a `cancelled` result.
    pub(crate) fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The events after `after` that are still kept, and whether the last of them ends the
    /// call.
    pub(crate) fn after(&self, after: u64) -> (Vec<(u64, Arc<CallUpdate>)>, bool) {
        let events = self.events();
        let start = events.kept.partition_point(|(id, _)| *id <= after);
        let items: Vec<_> = events.kept.iter().skip(start).cloned().collect();
        (items, events.finished.is_some())
    }

    /// Waits until there is an event newer than `after`.
    pub(crate) async fn wait_past(&self, after: u64) {
        let mut newest = self.newest.subscribe();
        // The call ends by dropping nothing: its last event is enough to stop waiting.
        let _ = newest.wait_for(|id| *id > after).await;
    }

    fn push(&self, update: CallUpdate) {
        let mut events = self.events();
        events.next_id += 1;
        let id = events.next_id;
        match update {
            CallUpdate::Progress { .. } => {
                if events.progress_kept == KEEP_PROGRESS {
                    events.kept.pop_front();
                } else {
                    events.progress_kept += 1;
                }
            }
            CallUpdate::Result(_) => events.finished = Some(Instant::now()),
        }
        events.kept.push_back((id, Arc::new(update)));
        drop(events);
        self.newest.send_replace(id);
    }
}

/// Why a call could not be taken on.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The user runs [`MAX_RUNNING_PER_USER`] calls already.
    UserBusy,
    /// The server keeps as many calls as it may, all running.
    Full,
}

/// The calls started through the API.
#[derive(Default)]
pub(crate) struct LiveCalls {
    calls: Mutex<HashMap<String, Arc<LiveCall>>>,
}

impl LiveCalls {
    fn calls(&self) -> MutexGuard<'_, HashMap<String, Arc<LiveCall>>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The call `id` if `user` may see it (its owner, or anyone when `user` is `None`).
    pub(crate) fn get(&self, id: &str, user: Option<&str>) -> Option<Arc<LiveCall>> {
        let call = self.calls().get(id).cloned()?;
        match user {
            Some(u) if u != call.user => None,
            _ => Some(call),
        }
    }

    /// Runs `call` on its own task, recording it with `trace`, and keeps its events under
    /// `id`. `stop` (the server's) cancels it. A refused call is handed back with its trace,
    /// never run.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        self: &Arc<Self>,
        id: String,
        user: &str,
        tool: &str,
        agent: Option<String>,
        call: Call,
        trace: CallTrace,
        stop: &CancellationToken,
    ) -> Result<Arc<LiveCall>, Box<(Refused, CallTrace)>> {
        let live = Arc::new(LiveCall {
            id: id.clone(),
            user: user.to_string(),
            tool: tool.to_string(),
            agent,
            started_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
            cancel: stop.child_token(),
            events: Mutex::new(Events::default()),
            newest: watch::channel(0).0,
        });
        {
            let mut calls = self.calls();
            calls.retain(|_, c| {
                c.events()
                    .finished
                    .is_none_or(|at| at.elapsed() < KEEP_FINISHED)
            });
            let running = |c: &&Arc<LiveCall>| !c.finished();
            if calls
                .values()
                .filter(running)
                .filter(|c| c.user == user)
                .count()
                >= MAX_RUNNING_PER_USER
            {
                return Err(Box::new((Refused::UserBusy, trace)));
            }
            if calls.len() >= MAX_KEPT {
                // Make way by forgetting the oldest finished call.
                let oldest = calls
                    .values()
                    .filter_map(|c| c.events().finished.map(|at| (at, c.id.clone())))
                    .min();
                match oldest {
                    Some((_, id)) => {
                        calls.remove(&id);
                    }
                    None => return Err(Box::new((Refused::Full, trace))),
                }
            }
            calls.insert(id, Arc::clone(&live));
        }
        tokio::spawn(run(Arc::clone(&live), call, trace));
        Ok(live)
    }
}

/// Follows `call` to its end, keeping each event; the first cancellation asks the tool to
/// stop and the call then ends with its own (cancelled) result.
async fn run(live: Arc<LiveCall>, mut call: Call, mut trace: CallTrace) {
    let began = Instant::now();
    let mut cancelled = false;
    let result = loop {
        let event = tokio::select! {
            event = call.next() => event,
            () = live.cancel.cancelled(), if !cancelled => {
                cancelled = true;
                call.cancel();
                continue;
            }
        };
        match event {
            Some(CallEvent::Progress(p)) => live.push(CallUpdate::Progress {
                seq: p.seq,
                message: p.text(),
                content: p.content,
            }),
            Some(CallEvent::Done(r)) => break r,
            None => break ToolResult::error("the call ended without a result"),
        }
    };
    trace.finish(&result);
    drop(trace);
    live.push(CallUpdate::Result(CallResult::of(result, began.elapsed())));
}
