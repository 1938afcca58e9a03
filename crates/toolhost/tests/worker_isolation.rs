//! Two users on one `toolhost serve`, one of them hostile, as the security review played
//! them: whatever ada's tools do to their own warm Node.js worker (kill everything in
//! sight, exit it, fork-bomb, leave marks, leave children), bob's calls keep answering, and
//! nothing of one user's worker reaches the other's or outlives the server. The escape
//! tools are escapes.rs's (`tests/escapes`).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Fixture, Server, copy_dir};
use raw_http::{Response, Session};
use serde_json::{Value, json};

const ADA: &str = "ada@example.com";
const BOB: &str = "bob@example.com";

/// A data directory whose global tools are the MCP fixtures plus `tools` from the
/// escape suite.
fn fixture(tools: &[&str]) -> Fixture {
    let f = Fixture::new();
    let escapes = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/escapes");
    for tool in tools {
        copy_dir(&escapes.join(tool), &f.tools().join(tool));
    }
    f
}

/// `toolhost serve` on `f` for ada and bob (tokens `ada-secret`, `bob-secret`), with
/// `extra` configuration.
fn serve(f: &Fixture, extra: &str) -> Server {
    let hash = toolhost_host::hash_token;
    std::fs::write(
        f.config(),
        format!(
            "{}{extra}\n[[serve.tokens]]\nuser = \"{ADA}\"\nsha256 = \"{}\"\n\n[[serve.tokens]]\nuser = \"{BOB}\"\nsha256 = \"{}\"\n",
            f.config_text(),
            hash("ada-secret"),
            hash("bob-secret"),
        ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data());
    Server::start(cmd)
}

fn session(server: &Server, token: &str) -> Session {
    Session::open(
        &server.addr,
        &[("Authorization", &format!("Bearer {token}"))],
    )
}

/// Calls `name` with `args`; (isError, the text of the result).
fn call(s: &Session, name: &str, args: Value) -> (bool, String) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": name, "arguments": args}});
    result(&s.post(&body.to_string()))
}

/// The tool result in a response, whether sent as JSON or as server-sent events.
fn result(r: &Response) -> (bool, String) {
    assert_eq!(r.status, 200, "{}", r.body);
    let message = r
        .body
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m.get("result").is_some())
        .unwrap_or_else(|| panic!("no result in {}", r.body));
    let result = &message["result"];
    let text = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (result["isError"] == true, text)
}

/// Bob calls `echo` over and over until `over` is set (and at least five times): each
/// call's number and what it answered.
fn keep_calling(
    bob: Session,
    over: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<(usize, (bool, String))>> {
    std::thread::spawn(move || {
        let mut answers = Vec::new();
        while !over.load(Ordering::SeqCst) || answers.len() < 5 {
            let n = answers.len();
            answers.push((n, call(&bob, "echo", json!({"text": format!("bob {n}")}))));
        }
        answers
    })
}

fn assert_all_answered(answers: &[(usize, (bool, String))]) {
    for (n, answer) in answers {
        assert_eq!(answer, &(false, format!("bob {n}")), "bob's call {n}");
    }
}

/// Processes whose command line starts with `name`.
fn processes_named(name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && cmdline.starts_with(name.as_bytes())
        {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

/// Review row 24, the warm Node.js half (escapes.rs has `kill -9 -1` from Bash): ada's
/// TypeScript tool sends SIGKILL to every process it can see, then ends its own worker
/// with `process.exit`, again and again, while bob keeps calling: each of bob's calls
/// answers, a host bystander lives on, and ada's next call gets a fresh worker.
#[test]
fn killing_everything_or_exiting_the_worker_harms_no_other_user() {
    let f = fixture(&["exit_worker"]);
    let mut server = serve(&f, "");
    let ada = session(&server, "ada-secret");
    let bob = session(&server, "bob-secret");
    // Both workers are warm before the attack.
    assert_eq!(
        call(&ada, "echo", json!({"text": "a"})),
        (false, "a".into())
    );
    assert_eq!(
        call(&bob, "echo", json!({"text": "b"})),
        (false, "b".into())
    );
    let mut bystander = Command::new("sleep").arg("60").spawn().unwrap();
    let over = Arc::new(AtomicBool::new(false));
    let bobs = keep_calling(bob, over.clone());
    for _ in 0..3 {
        assert_eq!(
            call(&ada, "exit_worker", json!({"how": "kill"})),
            (false, "survived; its child got SIGKILL".into()),
            "kill(-1) reaches the worker's own sandbox, sparing the worker itself"
        );
        let (is_error, text) = call(&ada, "exit_worker", json!({"how": "exit"}));
        assert!(is_error, "an exiting worker is an error result: {text}");
    }
    over.store(true, Ordering::SeqCst);
    assert_all_answered(&bobs.join().unwrap());
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "a host process was killed"
    );
    bystander.kill().unwrap();
    let _ = bystander.wait();
    assert_eq!(
        call(&ada, "echo", json!({"text": "again"})),
        (false, "again".into())
    );
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}

/// Review row 25 under serve (escapes.rs has the CLI): ada's fork bomb stops at
/// `max_processes` while bob's calls keep answering, and nothing of it outlives the call.
#[test]
fn a_fork_bomb_stops_at_its_cap_while_other_users_are_served() {
    let f = fixture(&["fork_many"]);
    let mut server = serve(&f, "[sandbox]\nmax_processes = 64\n");
    let ada = session(&server, "ada-secret");
    let bob = session(&server, "bob-secret");
    let over = Arc::new(AtomicBool::new(false));
    let bobs = keep_calling(bob, over.clone());
    let (is_error, text) = call(&ada, "fork_many", json!({"n": 100000}));
    over.store(true, Ordering::SeqCst);
    // Bash gives up once fork keeps failing with EAGAIN.
    assert!(is_error, "the process limit did not hold: {text}");
    assert!(
        text.contains("fork: Resource temporarily unavailable"),
        "{text}"
    );
    assert_all_answered(&bobs.join().unwrap());
    // The workers live on while serving; the bomb's processes go with its sandbox.
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let bombs: Vec<u32> = f
            .tool_processes()
            .into_iter()
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.starts_with(b"fork-many-"))
            })
            .collect();
        if bombs.is_empty() {
            break;
        }
        assert!(
            Instant::now() < until,
            "the bomb outlived its call: {bombs:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        call(&ada, "fork_many", json!({"n": 3})),
        (false, "started 3".into())
    );
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}

/// Review row 31, the warm Node.js half (escapes.rs has the CLI and Bash): a TypeScript
/// tool's detached, unref'd child that ignores SIGTERM and SIGHUP does not outlive the
/// server.
#[test]
fn a_warm_workers_detached_child_does_not_outlive_the_server() {
    let f = fixture(&["spawn_detached"]);
    let mut server = serve(&f, "");
    let ada = session(&server, "ada-secret");
    let tag = format!("detached-{}", std::process::id());
    let (is_error, text) = call(&ada, "spawn_detached", json!({"tag": tag}));
    assert!(!is_error && text.starts_with("spawned "), "{text}");
    assert!(server.stop().success());
    f.assert_no_tool_processes();
    assert_eq!(processes_named(&tag), Vec::<String>::new());
}

/// Review row 34: bob's tool leaves marks in its warm worker (a global, an environment
/// variable, a file in its /tmp); ada's call of the same tool finds none of them, and bob's
/// next call finds all three (his worker did keep them).
#[test]
fn users_never_share_a_warm_workers_state() {
    let f = fixture(&["state"]);
    let mut server = serve(&f, "");
    let ada = session(&server, "ada-secret");
    let bob = session(&server, "bob-secret");
    let set = json!({"op": "set", "value": "bob-was-here"});
    assert_eq!(call(&bob, "state", set), (false, "set".into()));
    let get = json!({"op": "get"});
    assert_eq!(
        call(&ada, "state", get.clone()),
        (false, "global=undefined env=undefined tmp=ENOENT".into())
    );
    assert_eq!(
        call(&bob, "state", get),
        (
            false,
            "global=bob-was-here env=bob-was-here tmp=bob-was-here".into()
        )
    );
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}

/// Review row 35: a user's networked tools run in other workers than their offline ones:
/// the marks `state` leaves are not seen by its copy that declares `network: true`.
#[test]
fn a_users_networked_and_offline_tools_never_share_a_worker() {
    let f = fixture(&["state"]);
    let md = std::fs::read_to_string(f.tools().join("state/TOOL.md")).unwrap();
    copy_dir(&f.tools().join("state"), &f.tools().join("state_net"));
    std::fs::write(
        f.tools().join("state_net/TOOL.md"),
        md.replace("name: state\n", "name: state_net\nnetwork: true\n"),
    )
    .unwrap();
    let mut server = serve(&f, "");
    let ada = session(&server, "ada-secret");
    let set = json!({"op": "set", "value": "offline"});
    assert_eq!(call(&ada, "state", set), (false, "set".into()));
    let get = json!({"op": "get"});
    assert_eq!(
        call(&ada, "state_net", get.clone()),
        (false, "global=undefined env=undefined tmp=ENOENT".into())
    );
    assert_eq!(
        call(&ada, "state", get),
        (false, "global=offline env=offline tmp=offline".into())
    );
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}
