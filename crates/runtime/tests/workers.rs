//! What a Node.js worker is shared with: tools of one user are kept apart (F14), and one
//! user's calls cannot take every worker from the others (F8). Real Node.js; the toolhost
//! crate runs these again with the sandbox on.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{env, env_with, tool};
use serde_json::{Value, json};
use toolhost_runtime::{
    Call, CallEvent, CallRequest, RuntimeConfig, ToolEnv, ToolRef, ToolResult, WorkerScope,
};

const SECRET: &str = "OTHER-TOOL-SECRET-991";

fn text(r: &ToolResult) -> String {
    r.joined_text()
}

fn request(e: &common::Env, user: &str, name: &str, args: Value) -> CallRequest {
    CallRequest {
        tool: ToolRef::Folder(tool(name)),
        args,
        user: e.user(user),
        tool_call_id: None,
        timeout: None,
    }
}

/// Starts a call and drives it until the tool reports that it is running.
async fn running(e: &common::Env, req: CallRequest) -> Call {
    let mut call = e.runtime.call(req);
    match call.next().await {
        Some(CallEvent::Progress(p)) => assert_eq!(p.text(), "waiting"),
        other => panic!("expected the call to be running, got {other:?}"),
    }
    call
}

/// The review's row 36: a hostile tool patches `JSON.parse` in its worker; the user then
/// calls another tool with a `sensitive` key; the hostile tool reports what it saw.
async fn spy_on_another_tool(e: &common::Env) -> String {
    let install = e.call("json_spy", json!({"mode": "install"})).await;
    assert_eq!(text(&install), "installed");
    let r = e.call("sens", json!({"apikey": SECRET})).await;
    assert_eq!((text(&r).as_str(), r.is_error), ("ok", false));
    let report = e
        .call(
            "json_spy",
            json!({"mode": "report", "marker": "spy-own-marker"}),
        )
        .await;
    let report = text(&report);
    // The hook is in place: it saw the host's frame for its own call.
    assert!(report.contains("spy-own-marker"), "{report}");
    report
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_cannot_read_another_tools_secrets_through_a_shared_worker() {
    // F14: one warm worker ran all of a user's tools, so the spy read `sens`'s apikey.
    let e = env();
    let report = spy_on_another_tool(&e).await;
    assert!(!report.contains(SECRET), "the spy saw the secret: {report}");
    assert_eq!(e.runtime.workers().await, 2, "a worker per tool");
}

#[tokio::test(flavor = "multi_thread")]
async fn worker_scope_user_shares_one_worker_between_a_users_tools() {
    // The documented risk of the opt-in: tools of one user that share a worker are not
    // isolated from each other.
    let config = RuntimeConfig {
        worker_scope: WorkerScope::User,
        ..common::config()
    };
    let e = env_with(config, ToolEnv::default());
    let report = spy_on_another_tool(&e).await;
    assert!(report.contains(SECRET), "{report}");
    assert_eq!(e.runtime.workers().await, 1);
}

/// The review's row 37: with `max_workers = 2` and `max_calls_per_worker = 2`, user a
/// holds four slow calls; user b's call must not wait for them.
async fn busy_user_does_not_starve_another(scope: WorkerScope) {
    let config = RuntimeConfig {
        max_workers: 2,
        max_calls_per_worker: 2,
        worker_scope: scope,
        ..common::config()
    };
    let e = env_with(config, ToolEnv::default());
    let (gate_a, gate_a_inside) = e.file("a@example.com", "gate");
    let (gate_b, gate_b_inside) = e.file("b@example.com", "gate");
    std::fs::write(&gate_b, "open").unwrap();
    let mut a_calls = Vec::new();
    for _ in 0..4 {
        let call = running(
            &e,
            request(&e, "a@example.com", "gated", json!({"gate": gate_a_inside})),
        )
        .await;
        a_calls.push(tokio::spawn(call.result()));
    }
    let b = e
        .runtime
        .call(request(
            &e,
            "b@example.com",
            "gated",
            json!({"gate": gate_b_inside}),
        ))
        .result()
        .await;
    assert_eq!((text(&b).as_str(), b.is_error), ("released", false));
    // a's calls end only once their gate opens (or they give up, which is what they
    // did before the fix, b's call waiting all that time behind them).
    assert!(
        a_calls.iter().all(|c| !c.is_finished()),
        "b's call ended only after a's calls"
    );
    std::fs::write(&gate_a, "open").unwrap();
    for call in a_calls {
        assert_eq!(text(&call.await.unwrap()), "released");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_users_calls_cannot_starve_another_user_of_workers() {
    // F8
    busy_user_does_not_starve_another(WorkerScope::Tool).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_users_calls_cannot_starve_another_user_of_workers_with_shared_workers() {
    // F8, with `worker_scope = "user"`.
    busy_user_does_not_starve_another(WorkerScope::User).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_at_its_share_waits_for_its_own_worker_and_leaves_others_alone() {
    let config = RuntimeConfig {
        max_workers: 4,
        max_workers_per_user: Some(1),
        ..common::config()
    };
    let e = Arc::new(env_with(config, ToolEnv::default()));
    let (gate, gate_inside) = e.file("a@example.com", "gate");
    let slow = running(
        &e,
        request(&e, "a@example.com", "gated", json!({"gate": gate_inside})),
    )
    .await;
    let slow = tokio::spawn(slow.result());
    // a's only worker is busy with another tool: this call waits for it to go idle.
    let queued = tokio::spawn(
        e.runtime
            .call(request(&e, "a@example.com", "plain_js", json!({})))
            .result(),
    );
    // Meanwhile b is served from its own share.
    let b = e
        .runtime
        .call(request(&e, "b@example.com", "plain_js", json!({})))
        .result()
        .await;
    assert!(text(&b).starts_with("js ok"), "{}", text(&b));
    assert!(!queued.is_finished() && !slow.is_finished());
    std::fs::write(&gate, "open").unwrap();
    assert_eq!(text(&slow.await.unwrap()), "released");
    let queued = queued.await.unwrap();
    assert!(text(&queued).starts_with("js ok"), "{}", text(&queued));
    // a's idle `gated` worker was retired to make room for its `plain_js` one.
    assert_eq!(e.runtime.workers().await, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn waiting_for_a_worker_ends_at_the_deadline_or_on_cancel() {
    let config = RuntimeConfig {
        max_workers: 4,
        max_workers_per_user: Some(1),
        ..common::config()
    };
    let e = env_with(config, ToolEnv::default());
    let (gate, gate_inside) = e.file("a@example.com", "gate");
    let slow = running(
        &e,
        request(&e, "a@example.com", "gated", json!({"gate": gate_inside})),
    )
    .await;
    let slow = tokio::spawn(slow.result());

    let mut req = request(&e, "a@example.com", "plain_js", json!({}));
    req.timeout = Some(Duration::from_secs(1));
    let r = e.runtime.call(req).result().await;
    assert!(r.is_error);
    assert_eq!(
        text(&r),
        "timed out after 1 s waiting for a Node.js worker: all 1 of this user's workers are busy (max_workers_per_user)"
    );

    let call = e
        .runtime
        .call(request(&e, "a@example.com", "plain_js", json!({})));
    let canceller = call.canceller();
    let waiting = tokio::spawn(call.result());
    canceller.cancel();
    let r = waiting.await.unwrap();
    assert!(r.is_error);
    assert!(text(&r).starts_with("cancelled"), "{}", text(&r));

    std::fs::write(&gate, "open").unwrap();
    assert_eq!(text(&slow.await.unwrap()), "released");
}
