//! Calls through the library API, with real Node.js, Python and Bash.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{env, env_with, fixtures, tool};
use serde_json::{Value, json};
use toolhost_runtime::{CallRequest, NativeContext, NativeTool, RuntimeConfig, ToolEnv, ToolRef};

fn text(r: &toolhost_runtime::ToolResult) -> String {
    r.joined_text()
}

/// Waits until `done` holds, for at most a generous 10 s: a loaded machine is slow, and a
/// test must not race it. The caller then asserts what it waited for.
async fn wait_until(mut done: impl FnMut() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(10);
    while !done() && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Drives a call until the tool reports `expected` (so it is surely running).
async fn wait_for_progress(call: &mut toolhost_runtime::Call, expected: &str) {
    match call.next().await {
        Some(toolhost_runtime::CallEvent::Progress(p)) => assert_eq!(p.text(), expected),
        other => panic!("expected progress {expected:?}, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_tool_runs_with_coerced_params_and_ordered_progress() {
    let e = env();
    let req = e.request(
        tool("echo"),
        json!({"text": "hi", "times": "2", "shout": "true", "mode": "fancy"}),
    );
    let (r, progress) = e.call_with_progress(req).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        text(&r),
        "*HI HI*\nnumber boolean",
        "enums, parameter properties, satisfies, generics, casts"
    );
    assert_eq!(
        progress,
        [(1, "step 1".to_string()), (2, "step 2".to_string())]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn multi_file_tools_find_their_folder_modules_and_helpers() {
    let r = env().call("multi_file", json!({})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        text(&r),
        "HI! (js)\nfrom bin\n007\nsame-dir\nfunction\nlinux"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn javascript_entries_get_the_tool_call_id() {
    let e = env();
    let mut req = e.request(tool("plain_js"), json!({}));
    req.tool_call_id = Some("call-123".into());
    assert_eq!(
        text(&e.runtime.call(req).result().await),
        "js ok call-123 plain_js function"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_parameters_are_an_error_result_and_the_tool_does_not_run() {
    let e = env();
    let (marker, marker_arg) = e.file("ada@example.com", "ran");
    let r = e
        .call("marker_tool", json!({"path": marker_arg, "n": "lots"}))
        .await;
    assert!(r.is_error);
    assert_eq!(
        text(&r),
        "invalid arguments: `n`: expected a number, got \"lots\""
    );
    assert!(!marker.exists(), "the tool ran despite invalid arguments");
    let r = e
        .call(
            "marker_tool",
            json!({"path": marker_arg, "n": "21", "extra": 1}),
        )
        .await;
    assert!(text(&r).contains("unknown parameter `extra`"), "{r:?}");
    let r = e
        .call("marker_tool", json!({"path": marker_arg, "n": "21"}))
        .await;
    assert_eq!(
        (text(&r).as_str(), r.is_error),
        ("42", false),
        "numbers sent as strings are coerced"
    );
    assert!(marker.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn results_are_normalised() {
    let e = env();
    let r = e.call("throws", json!({})).await;
    assert!(r.is_error);
    assert_eq!(
        text(&r),
        "boom: the widget is broken",
        "the message, not the stack"
    );
    let r = e.call("shapes", json!({"shape": "string"})).await;
    assert_eq!((text(&r).as_str(), r.is_error), ("just a string", false));
    let r = e.call("shapes", json!({"shape": "object"})).await;
    assert_eq!(
        r.structured_content,
        Some(json!({"rows": 2, "names": ["a", "b"]}))
    );
    let r = e.call("shapes", json!({"shape": "undefined"})).await;
    assert!(
        r.is_error && text(&r).contains("returned no result"),
        "{r:?}"
    );
    for shape in ["bigint", "circular"] {
        let r = e.call("shapes", json!({"shape": shape})).await;
        assert!(
            r.is_error && text(&r).contains("cannot be turned into JSON"),
            "{shape}: {r:?}"
        );
    }
    let r = e.call("shapes", json!({"shape": "content_error"})).await;
    assert_eq!(
        (text(&r).as_str(), r.is_error),
        ("bad input", true),
        "isError: true is an error"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_fires_the_abort_signal() {
    let e = env();
    let (marker, marker_arg) = e.file("ada@example.com", "aborted");
    let mut call = e
        .runtime
        .call(e.request(tool("respects_abort"), json!({"marker": marker_arg})));
    wait_for_progress(&mut call, "waiting for abort").await;
    assert!(!marker.exists());
    call.cancel();
    let r = call.result().await;
    assert_eq!((text(&r).as_str(), r.is_error), ("cancelled", true));
    assert_eq!(r.stopped, Some(toolhost_runtime::Stopped::Cancelled));
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        "aborted",
        "the tool's abort handler ran"
    );
    assert_eq!(
        e.runtime.workers().await,
        1,
        "a tool that settles keeps its worker"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_that_ignores_cancellation_is_killed_and_its_worker_replaced() {
    let e = env();
    let mut call = e.runtime.call(e.request(tool("busy_loop"), json!({})));
    wait_for_progress(&mut call, "spinning").await;
    // The processes of the worker that runs this call, read from /proc: the runtime's own
    // count of workers drops as soon as it decides to kill, whether or not the kill works.
    let groups = e.runtime.worker_process_groups();
    assert_eq!(groups.len(), 1, "one worker runs the call: {groups:?}");
    let pgid = groups[0];
    let worker = common::group_members(pgid);
    assert!(
        worker.iter().any(|(_, cmd)| cmd.contains("harness.mjs")),
        "the worker's process group {pgid} holds no Node.js worker: {worker:?}"
    );
    call.cancel();
    let r = call.result().await;
    assert_eq!((text(&r).as_str(), r.is_error), ("cancelled", true));
    // SIGKILL is asynchronous: the processes leave the table shortly after the result.
    wait_until(|| common::group_members(pgid).is_empty()).await;
    let left = common::group_members(pgid);
    assert!(
        left.is_empty(),
        "the worker that ignored cancellation survived: {left:?}"
    );
    assert_eq!(e.runtime.workers().await, 0, "the killed worker is gone");
    // The next call gets a fresh worker.
    assert_eq!(
        text(&e.call("plain_js", json!({})).await)
            .split(' ')
            .take(2)
            .collect::<Vec<_>>(),
        ["js", "ok"]
    );
    assert_ne!(e.runtime.worker_process_groups(), [pgid]);
}

#[tokio::test(flavor = "multi_thread")]
async fn deadlines_from_the_caller_the_tool_and_progress() {
    let e = env();
    let mut req = e.request(tool("never_settles"), json!({}));
    req.timeout = Some(Duration::from_secs(1));
    let r = e.runtime.call(req).result().await;
    assert_eq!(text(&r), "timed out after 1 s");
    assert_eq!(r.stopped, Some(toolhost_runtime::Stopped::TimedOut));

    let r = e.call("short_deadline", json!({})).await;
    assert_eq!(
        text(&r),
        "timed out after 1 s",
        "the TOOL.md `timeout` applies"
    );

    let e = env_with(
        RuntimeConfig {
            idle_timeout: Duration::from_secs(1),
            ..common::config()
        },
        ToolEnv::default(),
    );
    let r = e
        .call("slow_progress", json!({"steps": 4, "ms": 400}))
        .await;
    assert_eq!(
        text(&r),
        "done after 4",
        "progress keeps resetting the idle timer: {r:?}"
    );
    let r = e
        .call("slow_progress", json!({"steps": 1, "ms": 3000}))
        .await;
    assert_eq!(text(&r), "timed out after 1 s without progress");
    assert_eq!(r.stopped, Some(toolhost_runtime::Stopped::TimedOut));
    let r = e.call("slow_progress", json!({"steps": 1, "ms": 10})).await;
    assert_eq!(
        r.stopped, None,
        "a call that ends by itself was not stopped"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashing_tool_ends_only_its_own_calls() {
    let e = env();
    // Another user's call is in flight on its own worker while ada's tools crash hers.
    let (bob_marker, bob_marker_arg) = e.file("bob@example.com", "aborted");
    let mut req = e.request(tool("respects_abort"), json!({"marker": bob_marker_arg}));
    req.user = e.user("bob@example.com");
    let mut bobs_call = e.runtime.call(req);
    wait_for_progress(&mut bobs_call, "waiting for abort").await;
    let groups = e.runtime.worker_process_groups();
    assert_eq!(groups.len(), 1, "bob's worker only: {groups:?}");
    let bobs_worker = groups[0];

    let r = e.call("exits", json!({})).await;
    assert!(
        r.is_error && text(&r).contains("exited with status 3"),
        "{r:?}"
    );
    let r = e.call("timer_crash", json!({})).await;
    assert!(r.is_error && text(&r).contains("the tool failed"), "{r:?}");

    // Bob's worker was untouched: its processes still run, and his call still answers.
    assert!(
        e.runtime.worker_process_groups().contains(&bobs_worker),
        "bob's worker left the pool"
    );
    let members = common::group_members(bobs_worker);
    assert!(
        members.iter().any(|(_, cmd)| cmd.contains("harness.mjs")),
        "bob's worker is gone: {members:?}"
    );
    bobs_call.cancel();
    let r = bobs_call.result().await;
    assert_eq!((text(&r).as_str(), r.is_error), ("cancelled", true));
    assert_eq!(std::fs::read_to_string(&bob_marker).unwrap(), "aborted");
    // Ada gets a new worker.
    let r = e.call("echo", json!({"text": "still here"})).await;
    assert_eq!(text(&r), "still here\nnumber undefined");
}

#[tokio::test(flavor = "multi_thread")]
async fn huge_results_are_cut_and_host_memory_stays_bounded() {
    let name = common::test_name(
        module_path!(),
        "huge_results_are_cut_and_host_memory_stays_bounded",
    );
    if !common::alone(&name) {
        return;
    }
    let e = env();
    // The peak while the call runs, not what is left at its end.
    let rss_before = common::reset_peak_rss_kib();
    let r = e.call("big_result", json!({"mib": 100})).await;
    let grown_mib = common::peak_rss_kib().saturating_sub(rss_before) / 1024;
    assert!(!r.is_error);
    let body = r.content[0]["text"].as_str().unwrap();
    assert_eq!(body.len(), 1024 * 1024, "cut to the 1 MiB default");
    let note = r.content[1]["text"].as_str().unwrap();
    assert!(
        note.contains("output_path") && note.contains("100.0 MiB"),
        "{note}"
    );
    assert!(
        grown_mib < 64,
        "host memory grew by {grown_mib} MiB for a 100 MiB result"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_tool_runs_its_new_code_on_the_next_call() {
    let e = env();
    let root = e.dir.path().join("tools");
    copy_dir(&fixtures().join("multi_file"), &root.join("multi_file"));
    let t = || Arc::clone(&common::catalog_of(&root).get("multi_file").unwrap().tool);
    let first = text(&e.runtime.call(e.request(t(), json!({}))).result().await);
    assert!(first.starts_with("HI! (js)"), "{first}");
    // Edit a file the entry imports (not the entry itself), as an author would.
    std::fs::write(
        root.join("multi_file/lib/util.ts"),
        "export function shout(s: string): string {\n  return `${s}?`;\n}\n",
    )
    .unwrap();
    let second = text(&e.runtime.call(e.request(t(), json!({}))).result().await);
    assert!(second.starts_with("hi? (js)"), "{second}");
    assert_eq!(
        e.runtime.workers().await,
        1,
        "reloaded in the same warm worker"
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_progress_flood_is_coalesced_and_the_last_update_arrives() {
    let e = env();
    let req = e.request(tool("flood"), json!({"n": 200_000}));
    let started = std::time::Instant::now();
    let (r, progress) = e.call_with_progress(req).await;
    let took = started.elapsed();
    assert_eq!(text(&r), "flooded");
    // The tool calls onUpdate 200,000 times without yielding. The first update leaves at
    // once and the last one before the result; in between, an update leaves only when 10
    // ms have passed since the one before (a machine that stalls the loop that long lets
    // one through), so how many depends on the machine, but never more than one per 10 ms.
    assert_eq!(
        progress.first(),
        Some(&(1, "update 1".to_string())),
        "{progress:?}"
    );
    assert_eq!(
        progress.last().map(|(_, t)| t.as_str()),
        Some("update 200000"),
        "{progress:?}"
    );
    let numbers: Vec<u64> = progress
        .iter()
        .map(|(_, t)| t.trim_start_matches("update ").parse().unwrap())
        .collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    let seqs: Vec<u64> = progress.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    let most = 2 + took.as_millis() / 10;
    assert!(
        progress.len() as u128 <= most,
        "{} updates in {took:?}: more than one per 10 ms",
        progress.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_get_the_configured_environment_and_nothing_else() {
    let mut resources = serde_json::Map::new();
    resources.insert(
        "optical-character-recognition".into(),
        json!({"endpoint": "http://127.0.0.1:9"}),
    );
    let tool_env = ToolEnv {
        vars: [
            (
                "PI_SEARXNG_URL".to_string(),
                "http://127.0.0.1:8888".to_string(),
            ),
            ("OFFICER_APIFY_TOKEN".into(), "apify-token".into()),
        ]
        .into_iter()
        .collect(),
        resources,
        tools_dirs: vec![fixtures()],
        homes: None,
    };
    let e = env_with(common::config(), tool_env);
    let r = e.call("env_dump", json!({})).await;
    let vars: serde_json::Map<String, Value> = serde_json::from_str(&text(&r)).unwrap();
    let mut keys: Vec<&str> = vars.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "HOME",
            "LANG",
            "OFFICER_APIFY_TOKEN",
            "OFFICER_RESOURCES",
            "OFFICER_USER_HOME",
            "OFFICER_USER_ROOT",
            "PATH",
            "PI_SEARXNG_URL",
            "PI_TOOLS_DIRS"
        ]
    );
    // In the sandbox, the seed's container paths (the user's own tools folder is always
    // there, read-only); without it, the host's.
    let (home, tools) = match common::HELPER {
        Some(_) => (
            "/officer/user".to_string(),
            "/officer/tools:/officer/user/tools".to_string(),
        ),
        None => (
            e.user("ada@example.com").home.display().to_string(),
            fixtures().display().to_string(),
        ),
    };
    assert_eq!(vars["HOME"], home);
    assert_eq!(vars["OFFICER_USER_ROOT"], home);
    assert_eq!(vars["PI_TOOLS_DIRS"], tools);
    let res: Value = serde_json::from_str(vars["OFFICER_RESOURCES"].as_str().unwrap()).unwrap();
    assert_eq!(
        res["optical-character-recognition"]["endpoint"],
        "http://127.0.0.1:9"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn python_and_bash_tools_follow_the_protocol() {
    let e = env();
    let (r, progress) = e
        .call_with_progress(e.request(tool("py_tool"), json!({"name": "Ada"})))
        .await;
    assert_eq!((text(&r).as_str(), r.is_error), ("hello Ada Ada -", false));
    assert_eq!(progress, [(1, "working on Ada".to_string())]);
    let r = e
        .call("py_tool", json!({"name": "Bob", "fail": true}))
        .await;
    assert_eq!((text(&r).as_str(), r.is_error), ("it failed for Bob", true));
    let (r, progress) = e
        .call_with_progress(e.request(tool("sh_tool"), json!({"n": "3"})))
        .await;
    assert_eq!((text(&r).as_str(), r.is_error), ("counted to 3", false));
    assert_eq!(progress[0].1, "counting to 3");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_hundred_concurrent_calls_across_ten_tools_all_answer_right() {
    let e = Arc::new(env());
    let (_, marker) = e.file("user0", "m");
    let cases: Vec<(&str, Value, String)> = vec![
        ("echo", json!({"text": "a"}), "a\nnumber undefined".into()),
        ("plain_js", json!({}), "js ok".into()),
        ("shapes", json!({"shape": "string"}), "just a string".into()),
        (
            "multi_file",
            json!({}),
            "HI! (js)\nfrom bin\n007\nsame-dir\nfunction\nlinux".into(),
        ),
        ("py_tool", json!({"name": "Py"}), "hello Py Py -".into()),
        ("sh_tool", json!({"n": 5}), "counted to 5".into()),
        (
            "slow_progress",
            json!({"steps": 2, "ms": 5}),
            "done after 2".into(),
        ),
        ("flood", json!({"n": 50}), "flooded".into()),
        ("marker_tool", json!({"path": marker, "n": 4}), "8".into()),
        ("throws", json!({}), "boom: the widget is broken".into()),
    ];
    let mut tasks = Vec::new();
    for i in 0..200 {
        let (name, args, expected) = cases[i % cases.len()].clone();
        let e = Arc::clone(&e);
        let user = format!("user{}", i % 3);
        tasks.push(tokio::spawn(async move {
            let req = CallRequest {
                tool: ToolRef::Folder(tool(name)),
                args,
                user: e.user(&user),
                tool_call_id: None,
                timeout: None,
            };
            let r = e.runtime.call(req).result().await;
            (name, expected, text(&r))
        }));
    }
    for task in tasks {
        let (name, expected, got) = task.await.unwrap();
        if name == "plain_js" {
            assert!(got.starts_with(&expected), "{name}: {got}");
        } else {
            assert_eq!(got, expected, "{name}");
        }
    }
    assert!(e.runtime.workers().await <= RuntimeConfig::default().max_workers);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pool_is_bounded_and_idle_workers_retire() {
    let config = RuntimeConfig {
        max_workers: 2,
        worker_idle_retire: Duration::from_millis(400),
        ..common::config()
    };
    let e = Arc::new(env_with(config, ToolEnv::default()));
    let mut calls = Vec::new();
    for user in ["a", "b", "c", "d"] {
        let req = CallRequest {
            tool: ToolRef::Folder(tool("slow_progress")),
            args: json!({"steps": 2, "ms": 200}),
            user: e.user(user),
            tool_call_id: None,
            timeout: None,
        };
        calls.push(tokio::spawn(e.runtime.call(req).result()));
    }
    // The pool is watched for as long as the calls run, however long that takes here.
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let (e, running) = (Arc::clone(&e), Arc::clone(&running));
        tokio::spawn(async move {
            let mut peak = 0;
            while running.load(std::sync::atomic::Ordering::Acquire) {
                peak = peak.max(e.runtime.workers().await);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            peak
        })
    };
    for call in calls {
        assert_eq!(text(&call.await.unwrap()), "done after 2");
    }
    running.store(false, std::sync::atomic::Ordering::Release);
    assert!(watcher.await.unwrap() <= 2, "more than 2 workers at once");
    // Idle workers retire (after 400 ms idle, on the pool's own clock).
    let give_up = Instant::now() + Duration::from_secs(10);
    while e.runtime.workers().await > 0 {
        assert!(Instant::now() < give_up, "idle workers never retired");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// F7: every host-side step of a call runs under the call's deadline; waiting for a worker
// is one. The call used to wait, past its deadline, for as long as the pool stayed full.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_waiting_for_a_worker_still_ends_at_its_deadline() {
    let config = RuntimeConfig {
        max_workers: 1,
        ..common::config()
    };
    let e = env_with(config, ToolEnv::default());
    let (_, marker) = e.file("a@x", "aborted");
    let mut busy = e.runtime.call(CallRequest {
        tool: ToolRef::Folder(tool("respects_abort")),
        args: json!({"marker": marker}),
        user: e.user("a@x"),
        tool_call_id: None,
        timeout: None,
    });
    wait_for_progress(&mut busy, "waiting for abort").await;
    // The one worker is a@x's and busy: b@x's call waits for a slot until its deadline.
    let waiting = e.runtime.call(CallRequest {
        tool: ToolRef::Folder(tool("plain_js")),
        args: json!({}),
        user: e.user("b@x"),
        tool_call_id: None,
        timeout: Some(Duration::from_millis(500)),
    });
    let r = tokio::time::timeout(Duration::from_secs(60), waiting.result())
        .await
        .expect("the waiting call outlived its deadline");
    assert!(r.is_error);
    assert!(
        text(&r).starts_with("timed out after 0.5 s waiting for a Node.js worker: "),
        "{}",
        text(&r)
    );
    busy.cancel();
    assert_eq!(text(&busy.result().await), "cancelled");
}

struct Add;

impl NativeTool for Add {
    fn name(&self) -> &str {
        "add"
    }
    fn description(&self) -> &str {
        "Adds two numbers."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"], "additionalProperties": false})
    }
    fn call(&self, args: Value, mut ctx: NativeContext) -> toolhost_runtime::NativeOutput {
        Box::pin(async move {
            ctx.progress("adding");
            if args["a"] == json!(0) {
                ctx.cancelled().await;
                return Err(toolhost_runtime::ToolError::Cancelled);
            }
            Ok(json!({"sum": args["a"].as_f64().unwrap() + args["b"].as_f64().unwrap()}))
        })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn native_tools_share_the_call_path() {
    let e = env();
    let req = |args: Value| CallRequest {
        tool: ToolRef::Native(Arc::new(Add)),
        args,
        user: e.user("n"),
        tool_call_id: None,
        timeout: None,
    };
    let (r, progress) = e.call_with_progress(req(json!({"a": "2", "b": 3}))).await;
    assert_eq!(r.structured_content, Some(json!({"sum": 5.0})));
    assert_eq!(progress[0].1, "adding");
    let r = e.runtime.call(req(json!({"a": 1}))).result().await;
    assert_eq!(
        text(&r),
        "invalid arguments: missing required parameter `b`"
    );
    let mut call = e.runtime.call(req(json!({"a": 0, "b": 0})));
    wait_for_progress(&mut call, "adding").await;
    call.cancel();
    assert_eq!(text(&call.result().await), "cancelled");
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_call_cancels_it() {
    let e = env();
    let (marker, marker_arg) = e.file("ada@example.com", "aborted");
    let mut call = e
        .runtime
        .call(e.request(tool("respects_abort"), json!({"marker": marker_arg})));
    wait_for_progress(&mut call, "waiting for abort").await;
    assert!(!marker.exists());
    drop(call);
    wait_until(|| marker.exists()).await;
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "aborted");
}

#[tokio::test(flavor = "multi_thread")]
async fn killing_a_tool_leaves_no_orphan_processes() {
    let e = env();
    let tag = format!("toolhost-orphan-check-{}", std::process::id());
    let mut call = e
        .runtime
        .call(e.request(tool("spawns_child"), json!({"tag": tag})));
    wait_for_progress(&mut call, "child started").await;
    // Spawned, but its command line shows the tag only once `sh` has started.
    wait_until(|| !common::pids_running(&tag).is_empty()).await;
    assert!(
        !common::pids_running(&tag).is_empty(),
        "the child should be running"
    );
    call.cancel();
    assert_eq!(text(&call.result().await), "cancelled");
    wait_until(|| common::pids_running(&tag).is_empty()).await;
    assert_eq!(
        common::pids_running(&tag),
        Vec::<i32>::new(),
        "the tool's child outlived it"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_can_use_fetch() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = conn.read(&mut buf).await.unwrap();
        let body = "hello from loopback";
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        conn.write_all(reply.as_bytes()).await.unwrap();
    });
    let r = env()
        .call("fetcher", json!({"url": format!("http://{addr}/")}))
        .await;
    assert_eq!(
        (text(&r).as_str(), r.is_error),
        ("200 hello from loopback", false)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_syntax_error_is_an_error_result_naming_file_and_line() {
    let e = env();
    let r = e.call("broken_ts", json!({})).await;
    assert!(r.is_error);
    let t = text(&r);
    assert!(
        t.contains("broken_ts/index.ts:2:") && t.contains("TypeScript syntax error"),
        "{t}"
    );
    // The host keeps serving.
    assert_eq!(
        text(&e.call("shapes", json!({"shape": "string"})).await),
        "just a string"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_interpreter_is_an_error_result() {
    let config = RuntimeConfig {
        node: "/nonexistent/node".into(),
        python: "/nonexistent/python3".into(),
        ..common::config()
    };
    let e = env_with(config, ToolEnv::default());
    let r = e.call("plain_js", json!({})).await;
    assert!(
        r.is_error && text(&r).contains("cannot start /nonexistent/node"),
        "{r:?}"
    );
    let r = e.call("py_tool", json!({"name": "x"})).await;
    assert!(
        r.is_error && text(&r).contains("cannot start /nonexistent/python3"),
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_child_neither_blocks_the_result_nor_outlives_the_call() {
    let e = env();
    let tag = format!("toolhost-bg-check-{}", std::process::id());
    // The child holds stdout open for 300 s: a call that waited for it would end at this
    // deadline with an error instead of the answer.
    let mut req = e.request(tool("bg_child"), json!({"tag": tag}));
    req.timeout = Some(Duration::from_secs(30));
    let r = e.runtime.call(req).result().await;
    assert_eq!((text(&r).as_str(), r.is_error), ("answer", false));
    // SIGKILL is asynchronous: the child leaves the process table shortly after.
    wait_until(|| common::pids_running(&tag).is_empty()).await;
    assert!(
        common::pids_running(&tag).is_empty(),
        "the background child outlived the call"
    );
}

/// What a caller saw of a call's progress: how many updates, the last one, and the
/// longest text.
struct ProgressSeen {
    count: usize,
    last: Option<toolhost_runtime::Progress>,
    longest: usize,
}

/// Reads a call to its end without keeping its updates (a flood must not cost the test
/// the memory it measures), checking they come in order.
async fn drain_progress(
    call: &mut toolhost_runtime::Call,
) -> (toolhost_runtime::ToolResult, ProgressSeen) {
    let mut seen = ProgressSeen {
        count: 0,
        last: None,
        longest: 0,
    };
    loop {
        match call.next().await.unwrap() {
            toolhost_runtime::CallEvent::Progress(p) => {
                if let Some(before) = &seen.last {
                    assert!(before.seq < p.seq, "{} then {}", before.seq, p.seq);
                }
                seen.count += 1;
                seen.longest = seen.longest.max(p.text().len());
                seen.last = Some(p);
            }
            toolhost_runtime::CallEvent::Done(r) => return (r, seen),
        }
    }
}

/// Review row 30: a Python tool writes 200,000 `::progress::` lines and one 5 MiB line
/// to stderr. A caller that keeps reading gets the updates in order and the last one, and
/// the huge line arrives cut to a line's cap. (How much memory waits for this caller
/// depends on how promptly it is scheduled: the bound on the host's memory is asserted
/// with a caller that stops reading, below.)
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_progress_lines_keeps_the_last_and_cuts_the_huge_one() {
    let e = env();
    let mut call = e
        .runtime
        .call(e.request(tool("progress_flood"), json!({"n": 200_000, "big_mb": 5})));
    let (r, seen) = drain_progress(&mut call).await;
    assert_eq!((text(&r).as_str(), r.is_error), ("flooded", false));
    let last = seen.last.unwrap();
    assert_eq!(last.text(), "LAST");
    assert_eq!(last.seq, 200_002, "every line counts, even those coalesced");
    assert!(seen.count <= 200_002, "{} updates", seen.count);
    assert!(
        seen.longest <= 64 * 1024,
        "an update of {} bytes reached the caller",
        seen.longest
    );
}

/// Review row 30, with a caller that falls behind (as `serve` does while a slow client
/// takes a progress notification): the tool floods while nobody reads. The updates
/// waiting for the caller must be coalesced (`Progress`'s contract), so the host's memory
/// stays bounded meanwhile and the caller then sees few of them, the last one included.
#[tokio::test(flavor = "multi_thread")]
async fn a_progress_flood_past_a_caller_that_falls_behind_is_coalesced() {
    let name = common::test_name(
        module_path!(),
        "a_progress_flood_past_a_caller_that_falls_behind_is_coalesced",
    );
    if !common::alone(&name) {
        return;
    }
    let e = env();
    let (done, done_arg) = e.file("ada@example.com", "flood-written");
    let rss_before = common::reset_peak_rss_kib();
    let mut call = e.runtime.call(e.request(
        tool("progress_flood"),
        json!({"n": 200_000, "big_mb": 5, "done": done_arg}),
    ));
    wait_for_progress(&mut call, "update 1").await;
    // Not reading: the tool writes everything meanwhile.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done.exists() {
        assert!(
            Instant::now() < deadline,
            "the tool never finished writing: a slow caller must not block its progress"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the host take in what the tool wrote while the caller still does not read.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (r, seen) = drain_progress(&mut call).await;
    let grown_mib = common::peak_rss_kib().saturating_sub(rss_before) / 1024;
    assert_eq!((text(&r).as_str(), r.is_error), ("flooded", false));
    let last = seen.last.unwrap();
    assert_eq!((last.text().as_str(), last.seq), ("LAST", 200_002));
    assert!(
        grown_mib < 64,
        "host memory grew by {grown_mib} MiB while the caller was not reading"
    );
    assert!(
        seen.count < 1000,
        "{} updates reached a caller that fell behind",
        seen.count
    );
}
