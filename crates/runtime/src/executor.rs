//! Where a call runs: the interface between a call's lifecycle and what executes it.
//!
//! The lifecycle ([`crate::Runtime`]) validates the arguments, keeps the deadline, the
//! idle timer and the cancellation grace, redacts and normalises; an [`Executor`] only
//! starts a validated call somewhere and reports its [`ExecutionEvent`]s. The local one
//! ([`crate::LocalExecutor`]) runs Node.js workers, Python and Bash processes and native
//! tools on this host; another (a fleet of runners) can take its place without the
//! lifecycle changing.

use std::future::Future;
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::watch;

use crate::config::UserSpace;
use crate::events::{ErrorKind, EventReceiver};
use crate::redact::Secrets;
use crate::runtime::ToolRef;
use crate::{ExecutionEvent, RuntimeError};

/// Starts validated calls somewhere and reports their events.
///
/// The lifecycle races [`Executor::start`] against the call's deadline and its caller's
/// cancellation, so a start that waits (for a worker, a runner, a sandbox) must stop
/// cleanly when its future is dropped. Once started, the call reports on
/// [`Running::events`] (progress and log lines, then exactly one outcome, see
/// [`ExecutionEvent`]) and is stopped through its [`ExecutionControl`].
pub trait Executor: Send + Sync + 'static {
    /// The handle on one started call.
    type Control: ExecutionControl;

    /// Starts `call`. An `Err` ends the call with that error (redacted) before it ran.
    fn start<'a>(
        &'a self,
        call: Execution<'a>,
    ) -> impl Future<Output = Result<Running<Self::Control>, RuntimeError>> + Send + 'a;

    /// Prepares what later starts need (spare sandboxes, connections), so the first
    /// calls do not pay for it. Optional for a caller.
    fn warm_up(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Stops whatever runs calls; calls still running end with an error.
    fn shutdown(&self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// A validated call, as an executor receives it.
pub struct Execution<'a> {
    /// The tool to run.
    pub tool: &'a ToolRef,
    /// The user it runs for, and that user's home.
    pub user: &'a UserSpace,
    /// The call's id (the tool's `toolCallId`).
    pub call_id: &'a str,
    /// The arguments, validated against the tool's schema, defaults applied.
    pub args: &'a Value,
    /// The call's sensitive values, for output that can only be redacted where it runs.
    pub secrets: &'a Secrets,
    /// Most bytes of text a result may carry; a runner may cut above it early.
    pub max_result_bytes: usize,
    /// Becomes `true` when the lifecycle stops the call (cancelled, timed out), just
    /// before it calls [`ExecutionControl::cancel`].
    pub cancelled: watch::Receiver<bool>,
    /// Where a start that has to wait says what for, so a deadline that ends the wait
    /// can name it.
    pub waiting: &'a Waiting,
}

/// A started call: its handle and its events (the receiving side of a
/// [`crate::event_channel`] whose senders report the call).
pub struct Running<C> {
    /// Stops the call, and tells the executor when it is over.
    pub control: C,
    /// What the call reports, ending with one outcome.
    pub events: EventReceiver,
}

/// How the lifecycle stops a started call, and tells its executor the call is over.
pub trait ExecutionControl: Send + 'static {
    /// Asks the call to stop (its `AbortSignal`, `SIGTERM`, its context's flag). The call
    /// should then end soon with an outcome; if it does not within the cancellation
    /// grace, [`ExecutionControl::kill`] follows.
    fn cancel(&self);

    /// Stops the call now, whatever it is doing.
    fn kill(&self);

    /// The call is over: its outcome arrived, it was killed, or nobody waits for it any
    /// more. `failure` is the kind of error it ended with, when it ended with one (so an
    /// executor can drop what it prepared for the tool after [`ErrorKind::Load`]).
    fn finish(self, failure: Option<ErrorKind>);
}

/// What a start is waiting for (a Node.js worker, a runner), if anything.
#[derive(Debug, Default)]
pub struct Waiting(Mutex<Option<String>>);

impl Waiting {
    /// Says what the start waits for (a phrase after "waiting for"), or that it no
    /// longer waits (`None`).
    pub fn set(&self, what: Option<String>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = what;
    }

    pub(crate) fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The outcome's error kind, if the event is an error outcome.
pub(crate) fn failure_of(event: &ExecutionEvent) -> Option<ErrorKind> {
    match event {
        ExecutionEvent::Error { kind, .. } => Some(*kind),
        _ => None,
    }
}
