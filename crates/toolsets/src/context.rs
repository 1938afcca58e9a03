//! What a turn is resolved against, and the closers that run when it ends.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::task::JoinSet;

/// Who and where a turn is for. Factories scope their tools with it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TurnRequest {
    /// The workspace the turn runs in.
    pub workspace_id: Option<String>,
    /// The organisation.
    pub org_id: Option<String>,
    /// The user the agent acts for.
    pub user_id: Option<String>,
    /// Where the user's frontend is, for links tools return.
    pub frontend_url: Option<String>,
}

/// The context a factory gets: the request, the agent, and a way to register closers.
#[derive(Clone)]
pub struct TurnContext {
    /// The workspace the turn runs in.
    pub workspace_id: Option<String>,
    /// The agent the turn is resolved for.
    pub agent_id: String,
    /// The organisation.
    pub org_id: Option<String>,
    /// The user the agent acts for.
    pub user_id: Option<String>,
    /// Where the user's frontend is.
    pub frontend_url: Option<String>,
    /// The tool set being resolved (closers are logged under it).
    pub tool_set: String,
    pub(crate) closers: Closers,
}

impl TurnContext {
    /// A context for `agent` (tests, tools and listings that need one).
    pub fn new(agent: &str, req: &TurnRequest) -> TurnContext {
        TurnContext {
            workspace_id: req.workspace_id.clone(),
            agent_id: agent.to_string(),
            org_id: req.org_id.clone(),
            user_id: req.user_id.clone(),
            frontend_url: req.frontend_url.clone(),
            tool_set: String::new(),
            closers: Closers::new(Duration::from_secs(10)),
        }
    }

    /// Runs `close` when the turn ends (concurrently with other closers, under the turn's
    /// closing deadline). Registered after the turn ended, it runs at once. Its error is
    /// logged and reported in the turn's [`CloseReport`].
    pub fn register_closer<F>(&self, close: F)
    where
        F: Future<Output = Result<(), CloseError>> + Send + 'static,
    {
        let close = async move { close.await.map_err(|e| e.to_string()) };
        self.closers
            .register(self.tool_set.clone(), Box::pin(close));
    }
}

/// Why a closer failed: any error, so a closer can use `?`.
pub type CloseError = Box<dyn std::error::Error + Send + Sync + 'static>;

type Closer = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// The closers of one turn.
#[derive(Clone)]
pub(crate) struct Closers(Arc<Mutex<State>>);

struct State {
    pending: Vec<(String, Closer)>,
    closed: bool,
    deadline: Duration,
}

/// What closing a turn did.
#[derive(Debug, Default, Clone, Serialize, PartialEq)]
pub struct CloseReport {
    /// How many closers ran.
    pub ran: usize,
    /// `(tool set, error)` of closers that failed.
    pub failed: Vec<(String, String)>,
    /// Tool sets whose closers were still running at the deadline (they were stopped).
    pub timed_out: Vec<String>,
}

impl Closers {
    pub(crate) fn new(deadline: Duration) -> Closers {
        Closers(Arc::new(Mutex::new(State {
            pending: Vec::new(),
            closed: false,
            deadline,
        })))
    }

    fn register(&self, owner: String, close: Closer) {
        let late = {
            let Ok(mut state) = self.0.lock() else { return };
            if !state.closed {
                state.pending.push((owner, close));
                return;
            }
            (owner, close, state.deadline)
        };
        let (owner, close, deadline) = late;
        tracing::debug!(tool_set = %owner, "closer registered after the turn ended: running it now");
        let run = async move {
            let _ = run_all(vec![(owner, close)], deadline).await;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(run);
            }
            Err(_) => tracing::warn!("a closer was registered outside a Tokio runtime; dropped"),
        }
    }

    /// Ends the turn: runs every closer concurrently under one deadline. Later calls
    /// do nothing (and report nothing).
    pub(crate) async fn close(&self) -> CloseReport {
        let (pending, deadline) = match self.0.lock() {
            Ok(mut state) if !state.closed => {
                state.closed = true;
                (std::mem::take(&mut state.pending), state.deadline)
            }
            _ => return CloseReport::default(),
        };
        run_all(pending, deadline).await
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.0.lock().map(|s| s.closed).unwrap_or(true)
    }
}

async fn run_all(closers: Vec<(String, Closer)>, deadline: Duration) -> CloseReport {
    let mut report = CloseReport {
        ran: closers.len(),
        ..CloseReport::default()
    };
    if closers.is_empty() {
        return report;
    }
    let mut owners = HashMap::with_capacity(closers.len());
    let mut set = JoinSet::new();
    for (owner, close) in closers {
        owners.insert(set.spawn(close).id(), owner);
    }
    let all = async {
        while let Some(joined) = set.join_next_with_id().await {
            let (id, outcome) = match joined {
                Ok((id, outcome)) => (id, outcome),
                Err(e) => (e.id(), Err(format!("panicked: {e}"))),
            };
            let owner = owners.remove(&id).unwrap_or_default();
            if let Err(e) = outcome {
                tracing::warn!(tool_set = %owner, "closer failed: {e}");
                report.failed.push((owner, e));
            }
        }
    };
    if tokio::time::timeout(deadline, all).await.is_err() {
        set.abort_all();
        report.timed_out = owners.into_values().collect();
        report.timed_out.sort();
        tracing::warn!(
            tool_sets = ?report.timed_out,
            "closers still running after {} s: stopped",
            deadline.as_secs_f64()
        );
    }
    report.failed.sort();
    report
}
