//! The call lifecycle around an executor that is not the local one: calls answered
//! "elsewhere" from a table (progress, outcomes, a start that waits, a tool that ignores
//! cancellation) get the same validation, deadline, idle timeout, cancellation grace,
//! redaction and normalisation as local calls.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;
use toolhost_runtime::{
    CallEvent, CallRequest, ErrorKind, Execution, ExecutionControl, ExecutionEvent, Executor,
    NativeContext, NativeTool, REDACTED, Running, Runtime, RuntimeConfig, RuntimeError, ToolRef,
    ToolResult, UserSpace, event_channel,
};

/// What the table executor did with calls, in order.
type Journal = Arc<Mutex<Vec<String>>>;

/// Runs calls on a pretend remote runner: each tool name says what the call does.
struct TableExecutor {
    journal: Journal,
    starts: AtomicUsize,
}

/// The handle on a table call: records what the lifecycle asked of it.
struct TableControl {
    journal: Journal,
    /// Wakes a polite call when cancelled.
    cancelled: Arc<Notify>,
    task: tokio::task::AbortHandle,
}

impl ExecutionControl for TableControl {
    fn cancel(&self) {
        self.journal.lock().unwrap().push("cancel".into());
        self.cancelled.notify_one();
    }

    fn kill(&self) {
        self.journal.lock().unwrap().push("kill".into());
        self.task.abort();
    }

    fn finish(self, failure: Option<ErrorKind>) {
        self.journal
            .lock()
            .unwrap()
            .push(format!("finish {failure:?}"));
    }
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

impl Executor for TableExecutor {
    type Control = TableControl;

    async fn start<'a>(
        &'a self,
        call: Execution<'a>,
    ) -> Result<Running<TableControl>, RuntimeError> {
        self.starts.fetch_add(1, Ordering::SeqCst);
        let name = call.tool.name().to_string();
        if name == "queued" {
            call.waiting
                .set(Some("a remote runner: the fleet is busy".into()));
            std::future::pending::<()>().await;
        }
        if name == "unreachable" {
            return Err(RuntimeError::WorkerStart(format!(
                "no runner answers for {}",
                call.args["secret"].as_str().unwrap_or_default()
            )));
        }
        let (tx, events) = event_channel();
        let cancelled = Arc::new(Notify::new());
        let args = call.args.clone();
        let on_cancel = Arc::clone(&cancelled);
        let task = tokio::spawn(async move {
            let secret = args["secret"].as_str().unwrap_or_default().to_string();
            match name.as_str() {
                "echo" => {
                    tx.send(ExecutionEvent::Progress(vec![text(&format!(
                        "working on {secret}"
                    ))]));
                    tx.send(ExecutionEvent::Log {
                        level: "log".into(),
                        text: format!("saw {secret}"),
                    });
                    tx.send(ExecutionEvent::Result {
                        value: json!(format!("{} with {secret}", args["text"].as_str().unwrap())),
                        truncated_from: None,
                    });
                }
                "huge" => {
                    tx.send(ExecutionEvent::Result {
                        value: json!("x".repeat(10_000)),
                        truncated_from: None,
                    });
                }
                "broken" => {
                    tx.send(ExecutionEvent::Error {
                        kind: ErrorKind::Load,
                        message: format!("cannot find module near {secret}"),
                        stack: String::new(),
                    });
                }
                "stubborn" => std::future::pending::<()>().await,
                "chatty" => loop {
                    tx.send(ExecutionEvent::Progress(vec![text("still here")]));
                    tokio::time::sleep(Duration::from_millis(30)).await;
                },
                "polite" => {
                    on_cancel.notified().await;
                    tx.send(ExecutionEvent::Error {
                        kind: ErrorKind::Cancelled,
                        message: "stopped as asked".into(),
                        stack: String::new(),
                    });
                }
                other => panic!("no table entry for {other}"),
            }
        });
        Ok(Running {
            control: TableControl {
                journal: Arc::clone(&self.journal),
                cancelled,
                task: task.abort_handle(),
            },
            events,
        })
    }
}

/// A tool known only by its interface: the table executor runs it, never its `call`.
struct Remote(&'static str);

impl NativeTool for Remote {
    fn name(&self) -> &str {
        self.0
    }

    fn description(&self) -> &str {
        "runs elsewhere"
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "secret": {"type": "string", "default": "hunter2-default"},
            },
            "required": ["text"],
        })
    }

    fn sensitive_inputs(&self) -> Vec<String> {
        vec!["secret".into()]
    }

    fn call(&self, _: Value, _: NativeContext) -> toolhost_runtime::NativeOutput {
        Box::pin(async {
            Err(toolhost_runtime::ToolError::failed(
                "the table executor runs this tool, not the host",
            ))
        })
    }
}

fn runtime() -> (Runtime<TableExecutor>, Journal) {
    let journal = Journal::default();
    let config = RuntimeConfig {
        timeout: Duration::from_millis(1500),
        idle_timeout: Duration::from_millis(400),
        cancel_grace: Duration::from_millis(200),
        max_result_bytes: 1000,
        ..RuntimeConfig::default()
    };
    let executor = TableExecutor {
        journal: Arc::clone(&journal),
        starts: AtomicUsize::new(0),
    };
    (Runtime::with_executor(config, executor).unwrap(), journal)
}

fn request(tool: &'static str, args: Value) -> CallRequest {
    CallRequest {
        tool: ToolRef::Native(Arc::new(Remote(tool))),
        args,
        user: UserSpace {
            user: "alice".into(),
            home: "/nonexistent/alice".into(),
        },
        tool_call_id: None,
        timeout: None,
    }
}

fn journal(j: &Journal) -> Vec<String> {
    j.lock().unwrap().clone()
}

fn error_text(r: &ToolResult) -> String {
    assert!(r.is_error, "{r:?}");
    r.content[0]["text"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn progress_and_result_are_redacted_and_normalised() {
    let (rt, j) = runtime();
    let mut call = rt.call(request(
        "echo",
        json!({"text": "done", "secret": "s3cr3t-value"}),
    ));
    let mut progress = Vec::new();
    let mut result = None;
    while let Some(event) = call.next().await {
        match event {
            CallEvent::Progress(p) => progress.push(p),
            CallEvent::Done(r) => result = Some(r),
        }
    }
    assert_eq!(progress.len(), 1);
    assert_eq!(progress[0].seq, 1);
    assert_eq!(progress[0].text(), format!("working on {REDACTED}"));
    let result = result.unwrap();
    assert!(!result.is_error);
    // A plain string becomes one text block.
    assert_eq!(result.content, vec![text(&format!("done with {REDACTED}"))]);
    assert_eq!(journal(&j), ["finish None"]);
}

#[tokio::test]
async fn the_result_cap_applies() {
    let (rt, _) = runtime();
    let result = rt
        .call(request("huge", json!({"text": "x"})))
        .result()
        .await;
    assert!(!result.is_error);
    let body = result.content[0]["text"].as_str().unwrap();
    assert!(body.starts_with(&"x".repeat(1000)), "{body}");
    assert!(
        !body.starts_with(&"x".repeat(1001)),
        "cut at max_result_bytes"
    );
}

#[tokio::test]
async fn arguments_are_validated_before_the_executor_sees_them() {
    let (rt, j) = runtime();
    let result = rt
        .call(request("echo", json!({"secret": "s3cr3t-value"})))
        .result()
        .await;
    let message = error_text(&result);
    assert!(message.contains("text"), "{message}");
    assert!(!message.contains("s3cr3t-value"), "{message}");
    assert_eq!(rt.executor().starts.load(Ordering::SeqCst), 0);
    assert!(journal(&j).is_empty());
}

#[tokio::test]
async fn errors_are_worded_and_redacted_and_the_executor_hears_how_the_call_failed() {
    let (rt, j) = runtime();
    let result = rt
        .call(request(
            "broken",
            json!({"text": "x", "secret": "s3cr3t-value"}),
        ))
        .result()
        .await;
    assert_eq!(
        error_text(&result),
        format!("the tool failed to load: cannot find module near {REDACTED}")
    );
    assert_eq!(journal(&j), ["finish Some(Load)"]);

    // Defaults are applied before redaction: a default secret is a secret too.
    let result = rt
        .call(request("unreachable", json!({"text": "x"})))
        .result()
        .await;
    assert_eq!(
        error_text(&result),
        format!("no runner answers for {REDACTED}")
    );
}

#[tokio::test]
async fn a_silent_call_hits_the_idle_timeout_and_is_killed_after_the_grace() {
    let (rt, j) = runtime();
    let started = std::time::Instant::now();
    let result = rt
        .call(request("stubborn", json!({"text": "x"})))
        .result()
        .await;
    assert_eq!(
        error_text(&result),
        "timed out after 0.4 s without progress"
    );
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(600), "idle + grace: {took:?}");
    assert!(
        took < Duration::from_millis(1400),
        "before the deadline: {took:?}"
    );
    assert_eq!(journal(&j), ["cancel", "kill", "finish None"]);
}

#[tokio::test]
async fn progress_keeps_a_call_alive_until_its_deadline() {
    let (rt, j) = runtime();
    let mut call = rt.call(request("chatty", json!({"text": "x"})));
    let mut updates = 0;
    let result = loop {
        match call.next().await.unwrap() {
            CallEvent::Progress(_) => updates += 1,
            CallEvent::Done(r) => break r,
        }
    };
    assert_eq!(error_text(&result), "timed out after 1.5 s");
    assert!(updates > 10, "{updates}");
    assert_eq!(journal(&j), ["cancel", "kill", "finish None"]);
}

#[tokio::test]
async fn a_callers_deadline_overrides_the_configured_one() {
    let (rt, _) = runtime();
    let mut req = request("chatty", json!({"text": "x"}));
    req.timeout = Some(Duration::from_millis(200));
    let result = rt.call(req).result().await;
    assert_eq!(error_text(&result), "timed out after 0.2 s");
}

#[tokio::test]
async fn cancellation_asks_first_and_a_call_that_obeys_is_not_killed() {
    let (rt, j) = runtime();
    let call = rt.call(request("polite", json!({"text": "x"})));
    let canceller = call.canceller();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let result = call.result().await;
    assert_eq!(error_text(&result), "cancelled");
    assert_eq!(journal(&j), ["cancel", "finish Some(Cancelled)"]);
}

#[tokio::test]
async fn cancellation_kills_a_call_that_ignores_it_after_the_grace() {
    let (rt, j) = runtime();
    let call = rt.call(request("stubborn", json!({"text": "x"})));
    let canceller = call.canceller();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let result = call.result().await;
    assert_eq!(error_text(&result), "cancelled");
    assert_eq!(journal(&j), ["cancel", "kill", "finish None"]);
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_then_killed_in_the_background() {
    let (rt, j) = runtime();
    let mut call = rt.call(request("chatty", json!({"text": "x"})));
    assert!(matches!(call.next().await, Some(CallEvent::Progress(_))));
    drop(call);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(journal(&j), ["cancel", "kill", "finish None"]);
}

#[tokio::test]
async fn the_deadline_covers_a_start_that_waits_and_names_what_it_waited_for() {
    let (rt, j) = runtime();
    let mut req = request("queued", json!({"text": "x"}));
    req.timeout = Some(Duration::from_millis(100));
    let result = rt.call(req).result().await;
    assert_eq!(
        error_text(&result),
        "timed out after 0.1 s waiting for a remote runner: the fleet is busy"
    );
    assert!(journal(&j).is_empty(), "nothing started, nothing to stop");
}
