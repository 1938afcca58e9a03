//! The fleet, as real processes on loopback: one PostgreSQL, one `nats-server`, gateways
//! (`toolhost serve --nats`) and runners (`toolhost runner`), all started here and stopped
//! by their process ids. Clients switch gateway on every request: nothing may lean on
//! stickiness. The `effect` tool appends each call's name to a log in the user's home: the
//! oracle that no call ran twice.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
#[path = "fleet/balancer.rs"]
mod balancer;
#[path = "mcp/browser.rs"]
mod browser;
#[path = "fleet/cluster.rs"]
mod cluster;
#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use std::time::{Duration, Instant};

use cluster::Cluster;
use raw_http::{MCP_POST, open, read_until, send};
use serde_json::{Value, json};

/// The body and headers of a stateless (2026-07-28) `tools/call` of `name`.
fn stateless_call(token: &str, name: &str, args: Value) -> (String, Vec<(String, String)>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": args, "_meta": {
            "progressToken": "p",
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let mut headers: Vec<(String, String)> = MCP_POST
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in [
        ("Host", "127.0.0.1".to_string()),
        ("Authorization", format!("Bearer {token}")),
        ("MCP-Protocol-Version", "2026-07-28".into()),
        ("Mcp-Method", "tools/call".into()),
        ("Mcp-Name", name.into()),
    ] {
        headers.push((k.to_string(), v));
    }
    (body, headers)
}

/// A stateless (2026-07-28) `tools/call` of `name` through the gateway at `addr`: the
/// JSON-RPC response and the progress notifications that came before it.
fn call_at(addr: &str, token: &str, name: &str, args: Value) -> (Value, Vec<Value>) {
    let (body, headers) = stateless_call(token, name, args);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let r = send(addr, "POST", &headers, body.as_bytes());
    assert_eq!(r.status, 200, "{}", r.body);
    let messages: Vec<Value> = if r.body.trim_start().starts_with('{') {
        vec![serde_json::from_str(&r.body).unwrap()]
    } else {
        r.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    };
    let response = messages
        .iter()
        .find(|m| m.get("id").is_some())
        .cloned()
        .unwrap_or_else(|| panic!("no response in {}", r.body));
    let progress = messages
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    (response, progress)
}

/// The text of a `tools/call` result.
fn text(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
        .to_string()
}

fn is_error(response: &Value) -> bool {
    response["result"]["isError"] == true
}

/// What the `effect` tool returned: `{id, runner, pid}`.
fn effect(response: &Value) -> Value {
    assert!(!is_error(response), "{response}");
    serde_json::from_str(&text(response)).unwrap()
}

/// How many `start ID` lines the side-effect log has for `id`.
fn starts(lines: &[String], id: &str) -> usize {
    let prefix = format!("start {id} ");
    lines.iter().filter(|l| l.starts_with(&prefix)).count()
}

impl Cluster {
    /// Gateway `n % gateways`: callers go round the gateways.
    fn gateway(&self, n: usize) -> &str {
        &self.gateways[n % self.gateways.len()].addr
    }

    fn call(&self, n: usize, name: &str, args: Value) -> (Value, Vec<Value>) {
        call_at(self.gateway(n), &self.token, name, args)
    }

    /// An `effect` call through gateway `n` on a thread of its own.
    fn call_in_background(
        &self,
        n: usize,
        args: Value,
    ) -> std::thread::JoinHandle<(Value, Vec<Value>)> {
        let (addr, token) = (self.gateway(n).to_string(), self.token.clone());
        std::thread::spawn(move || call_at(&addr, &token, "effect", args))
    }
}

/// Calls through alternating gateways all reach the user's one home runner (one cold
/// start), return what the tool returned, and each ran exactly once.
#[test]
fn calls_through_either_gateway_run_once_on_the_users_home_runner() {
    let c = Cluster::start(2, 3, 4);
    let mut runners = Vec::new();
    let mut pids = Vec::new();
    for n in 0..20 {
        let id = format!("a{n}");
        let (response, _) = c.call(n, "effect", json!({"id": id}));
        let out = effect(&response);
        assert_eq!(out["id"], id);
        runners.push(out["runner"].as_str().unwrap().to_string());
        pids.push(out["pid"].as_u64().unwrap());
    }
    runners.dedup();
    assert_eq!(
        runners.len(),
        1,
        "calls went to several runners: {runners:?}"
    );
    pids.dedup();
    assert_eq!(pids.len(), 1, "the warm worker was not reused: {pids:?}");
    let lines = c.effects();
    for n in 0..20 {
        assert_eq!(starts(&lines, &format!("a{n}")), 1, "{lines:?}");
    }
    // Progress crosses the fleet, in order.
    let (response, progress) = c.call(1, "effect", json!({"id": "p", "steps": 3, "delay_ms": 50}));
    effect(&response);
    let texts: Vec<&str> = progress
        .iter()
        .map(|p| p["params"]["message"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        texts,
        ["step 1 of 3", "step 2 of 3", "step 3 of 3"],
        "{progress:?}"
    );
}

/// A home runner killed before a call: the call runs on the next-ranked runner, once,
/// without waiting for the dead one to be forgotten.
#[test]
fn a_call_whose_home_runner_died_runs_once_on_the_next() {
    let mut c = Cluster::start(2, 3, 4);
    let (response, _) = c.call(0, "effect", json!({"id": "warm"}));
    let home = effect(&response)["runner"].as_str().unwrap().to_string();
    c.runner(&home).kill();
    let t = Instant::now();
    let (response, _) = c.call(1, "effect", json!({"id": "after"}));
    let took = t.elapsed();
    let out = effect(&response);
    assert_ne!(out["runner"], home.as_str(), "{out}");
    assert_eq!(starts(&c.effects(), "after"), 1);
    // A cold start on the next runner, not a wait for the dead one.
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// A runner killed mid-call: the caller gets exactly one error, saying the outcome is
/// unknown, within the silence bound; the call is not run again; the user's next call
/// runs elsewhere.
#[test]
fn a_runner_killed_mid_call_gives_one_unknown_outcome_and_no_rerun() {
    let mut c = Cluster::start(2, 3, 4);
    let (response, _) = c.call(0, "effect", json!({"id": "warm"}));
    let home = effect(&response)["runner"].as_str().unwrap().to_string();
    let addr = c.gateway(1).to_string();
    let token = c.token.clone();
    let caller = std::thread::spawn(move || {
        let t = Instant::now();
        let out = call_at(
            &addr,
            &token,
            "effect",
            json!({"id": "lost", "steps": 100, "delay_ms": 100}),
        );
        (out, t.elapsed())
    });
    // Once the tool has made its side effect, kill its runner.
    let until = Instant::now() + Duration::from_secs(20);
    while starts(&c.effects(), "lost") == 0 {
        assert!(Instant::now() < until, "the call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Instant::now();
    c.runner(&home).kill();
    let ((response, _), _) = caller.join().unwrap();
    let after_kill = killed.elapsed();
    assert!(is_error(&response), "{response}");
    let message = text(&response);
    assert!(message.contains("outcome is unknown"), "{message}");
    assert!(message.contains(&home), "{message}");
    assert!(after_kill < Duration::from_secs(5), "{after_kill:?}");
    assert_eq!(starts(&c.effects(), "lost"), 1);
    // The next call of the same user runs on another runner.
    let (response, _) = c.call(0, "effect", json!({"id": "next"}));
    assert_ne!(effect(&response)["runner"], home.as_str());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(starts(&c.effects(), "lost"), 1, "the lost call ran again");
}

/// Waits until the side-effect log has a line `what`, or panics after `within`.
fn await_line(c: &Cluster, what: &str, within: Duration) -> Duration {
    let t = Instant::now();
    while !c
        .effects()
        .iter()
        .any(|l| l == what || l.starts_with(&format!("{what} ")))
    {
        assert!(
            t.elapsed() < within,
            "no {what:?} within {within:?}: {:?}",
            c.effects()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    t.elapsed()
}

/// A runner stopped (SIGSTOP) mid-call is lost the same way: its silence ends the call
/// with one "outcome unknown" error, and resumed it does not finish the call either.
#[test]
fn a_runner_paused_mid_call_is_lost_by_its_silence() {
    let mut c = Cluster::start(2, 3, 4);
    let (response, _) = c.call(0, "effect", json!({"id": "warm"}));
    let home = effect(&response)["runner"].as_str().unwrap().to_string();
    let caller = c.call_in_background(1, json!({"id": "paused", "steps": 100, "delay_ms": 100}));
    await_line(&c, "start paused", Duration::from_secs(20));
    c.runner(&home).pause();
    let paused = Instant::now();
    let (response, _) = caller.join().unwrap();
    assert!(is_error(&response), "{response}");
    assert!(text(&response).contains("outcome is unknown"), "{response}");
    assert!(
        paused.elapsed() < Duration::from_secs(6),
        "{:?}",
        paused.elapsed()
    );
    // Resumed, the runner learns its gateway no longer waits, and stops the tool.
    c.runner(&home).resume();
    await_line(&c, "aborted paused", Duration::from_secs(8));
    assert!(!c.effects().contains(&"end paused".to_string()));
    assert_eq!(starts(&c.effects(), "paused"), 1);
}

/// A gateway killed mid-call: the runner stops the call's tool (cancellation, then a kill
/// after the grace) within a few seconds; nothing runs again; the call re-issued through
/// the other gateway succeeds.
#[test]
fn a_gateway_killed_mid_call_gets_its_calls_stopped() {
    let mut c = Cluster::start(2, 3, 4);
    let addr = c.gateway(0).to_string();
    let token = c.token.clone();
    let caller = std::thread::spawn(move || {
        let (body, headers) = stateless_call(
            &token,
            "effect",
            json!({"id": "orphan", "steps": 100, "delay_ms": 100}),
        );
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut conn = open(&addr, "POST", &headers, body.as_bytes());
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(&mut conn, &mut rest);
    });
    await_line(&c, "start orphan", Duration::from_secs(20));
    let _ = c.gateways[0].child.kill();
    let _ = c.gateways[0].child.wait();
    let took = await_line(&c, "aborted orphan", Duration::from_secs(6));
    // cancel_grace is 2 s; the tool honours its AbortSignal at its next step.
    assert!(took < Duration::from_millis(3500), "{took:?}");
    caller.join().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(!c.effects().contains(&"end orphan".to_string()));
    assert_eq!(starts(&c.effects(), "orphan"), 1);
    let (response, _) = c.call(1, "effect", json!({"id": "orphan-again"}));
    effect(&response);
}

/// A client that closes its stream cancels the call: the tool on the runner sees its
/// AbortSignal promptly.
#[test]
fn closing_the_stream_cancels_the_call_on_its_runner() {
    let c = Cluster::start(2, 3, 4);
    let (body, headers) = stateless_call(
        &c.token,
        "effect",
        json!({"id": "closed", "steps": 100, "delay_ms": 100}),
    );
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut conn = open(c.gateway(1), "POST", &headers, body.as_bytes());
    read_until(&mut conn, "step 2 of 100");
    drop(conn);
    let closed = Instant::now();
    await_line(&c, "aborted closed", Duration::from_secs(5));
    assert!(
        closed.elapsed() < Duration::from_millis(2500),
        "{:?}",
        closed.elapsed()
    );
    assert!(!c.effects().contains(&"end closed".to_string()));
}

/// More calls at once than the fleet has slots: every request gets exactly one answer:
/// as many successes as slots, the rest a fast "overloaded" error; nothing queues, and
/// nothing runs that was refused.
#[test]
fn a_flood_beyond_the_slots_gets_fast_overloaded_errors() {
    let c = Cluster::start(2, 3, 1);
    let token = c.token.clone();
    let callers: Vec<_> = (0..12)
        .map(|n| {
            let addr = c.gateway(n).to_string();
            let token = token.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                let (response, _) = call_at(
                    &addr,
                    &token,
                    "effect",
                    json!({"id": format!("flood{n}"), "steps": 20, "delay_ms": 100}),
                );
                (response, t.elapsed())
            })
        })
        .collect();
    let answers: Vec<(Value, Duration)> = callers.into_iter().map(|t| t.join().unwrap()).collect();
    let ok: Vec<_> = answers.iter().filter(|(r, _)| !is_error(r)).collect();
    let overloaded: Vec<_> = answers
        .iter()
        .filter(|(r, _)| is_error(r) && text(r).contains("overloaded"))
        .collect();
    assert_eq!(ok.len(), 3, "{answers:?}");
    assert_eq!(overloaded.len(), 9, "{answers:?}");
    // Refused at once, long before a successful call (2 s of steps) could have freed a slot.
    for (r, took) in &overloaded {
        assert!(*took < Duration::from_millis(1500), "{took:?}: {r}");
        assert!(text(r).contains("retry"), "{r}");
    }
    let lines = c.effects();
    let started = (0..12)
        .filter(|n| starts(&lines, &format!("flood{n}")) == 1)
        .count();
    assert_eq!(started, 3, "{lines:?}");
}

/// NATS keeps everyone to their role: anonymous connections are refused, a runner's
/// credentials reach only its own subjects, and a call's secret appears in no message
/// header and in no node's log (watched by an admin subscriber on every subject).
#[test]
fn nats_keeps_roles_apart_and_secrets_out_of_headers_and_logs() {
    let c = Cluster::start(2, 3, 4);
    let port = c.nats.port;
    let (_, answer) = cluster::RawNats::login(port, None, "");
    assert!(answer.contains("Authorization Violation"), "{answer}");
    let (_, answer) = cluster::RawNats::login(port, Some("runner-1"), "wrong");
    assert!(answer.contains("Authorization Violation"), "{answer}");
    let (mut runner, answer) = cluster::RawNats::login(port, Some("runner-1"), cluster::PASSWORD);
    assert_eq!(answer, "PONG");
    for subject in [
        "toolhost.call.runner-2",
        "toolhost.call.>",
        "toolhost.cancel.runner-2.*",
        "_INBOX.gateway-1.>",
        ">",
    ] {
        let answer = runner.subscribe(subject, 1);
        assert!(
            answer.contains("Permissions Violation"),
            "{subject}: {answer}"
        );
    }
    assert_eq!(runner.subscribe("toolhost.call.runner-1", 2), "PONG");
    let (mut admin, answer) = cluster::RawNats::login(port, Some("admin"), cluster::PASSWORD);
    assert_eq!(answer, "PONG");
    assert_eq!(admin.subscribe(">", 1), "PONG");
    let secret = "sk-live-7f3a9c1e5b2d4f6a8c0e";
    let (response, _) = c.call(0, "secretive", json!({"api_key": secret}));
    assert_eq!(
        text(&response),
        format!("got a key of {} characters", secret.len())
    );
    let messages = admin.messages(Duration::from_millis(1500));
    let carrying: Vec<&str> = messages
        .iter()
        .filter(|(_, _, body)| body.contains(secret))
        .map(|(subject, _, _)| subject.as_str())
        .collect();
    assert!(
        !carrying.is_empty(),
        "the call itself must carry its arguments"
    );
    for subject in &carrying {
        assert!(
            subject.starts_with("toolhost.call.runner-"),
            "{subject} carried the secret"
        );
    }
    for (subject, headers, _) in &messages {
        assert!(
            !headers.contains(secret),
            "{subject}'s headers carried the secret"
        );
    }
    for g in &c.gateways {
        assert!(!g.logs().contains(secret), "a gateway logged the secret");
    }
    for r in c.runners.iter().flatten() {
        assert!(!r.logs().contains(secret), "{} logged the secret", r.id);
        // And no runner holds the database's address or credentials.
        let environ = std::fs::read(format!("/proc/{}/environ", r.pid())).unwrap();
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", r.pid())).unwrap();
        for bytes in [environ, cmdline] {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("postgres"),
                "{} knows the database",
                r.id
            );
        }
    }
    let out =
        c.f.toolhost()
            .args(["runner", "--database", &c.pg.url])
            .output()
            .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--database'"));
}

/// The infrastructure restarts under the fleet. nats-server: a call in flight gets one
/// clean answer (its result, or an error) and runs once; new calls succeed again within
/// seconds. PostgreSQL: calls keep succeeding on what the gateways remember (tokens, the
/// tools' bundles), and after it is back.
#[test]
fn the_fleet_survives_restarts_of_nats_and_postgres() {
    let mut c = Cluster::start(2, 3, 4);
    for n in 0..2 {
        effect(&c.call(n, "effect", json!({"id": format!("warm{n}")})).0);
    }

    let caller = c.call_in_background(0, json!({"id": "inflight", "steps": 20, "delay_ms": 100}));
    await_line(&c, "start inflight", Duration::from_secs(20));
    c.nats.restart();
    let restarted = Instant::now();
    let (response, _) = caller.join().unwrap();
    if is_error(&response) {
        assert!(text(&response).contains("outcome is unknown"), "{response}");
    }
    // Back within seconds, through either gateway.
    for n in 0..2 {
        loop {
            let (response, _) = c.call(n, "effect", json!({"id": format!("back{n}")}));
            if !is_error(&response) {
                break;
            }
            assert!(
                restarted.elapsed() < Duration::from_secs(10),
                "not back after a NATS restart: {response}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(starts(&c.effects(), "inflight"), 1);

    c.pg.stop();
    for n in 0..4 {
        let (response, _) = c.call(n, "effect", json!({"id": format!("nopg{n}")}));
        effect(&response);
    }
    c.pg.restart();
    for n in 0..2 {
        let (response, _) = c.call(n, "effect", json!({"id": format!("pg{n}")}));
        effect(&response);
    }
    let lines = c.effects();
    for id in ["nopg0", "nopg1", "nopg2", "nopg3", "pg0", "pg1"] {
        assert_eq!(starts(&lines, id), 1, "{lines:?}");
    }
}

/// Puts the fixture's `echo` back as it was, and waits until both gateways serve it so.
fn restore_echo(c: &Cluster) {
    let original = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp-tools/echo/TOOL.md");
    std::fs::copy(original, c.f.tools().join("echo/TOOL.md")).unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    for g in &c.gateways {
        let api = api_client::Api {
            addr: &g.addr,
            token: Some(c.token.clone()),
        };
        loop {
            let tool = api_client::json_of(&api.request("GET", "/tools/echo", None));
            if tool["description"]
                .as_str()
                .is_some_and(|d| d.starts_with("Returns the text it is given"))
            {
                break;
            }
            assert!(Instant::now() < until, "echo never came back: {tool}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn sdk_client(program: &str, script: &str, opts: Value) -> std::process::Command {
    let dir = common::clients_dir();
    let mut cmd = std::process::Command::new(program);
    cmd.current_dir(&dir)
        .arg(dir.join(script))
        .arg(opts.to_string());
    cmd
}

/// The official SDKs' own suites (listing, calls, progress, cancellation, invalid
/// parameters, 100 concurrent calls, list_changed after an edit) pass through a load
/// balancer that sends every request to the next gateway: the TypeScript SDK and the
/// Python SDK on 2025-11-25 sessions, the Python SDK on stateless 2026-07-28.
#[test]
fn the_official_sdks_pass_their_suites_through_alternating_gateways() {
    // Slots for the suite's 100 concurrent calls.
    let c = Cluster::start_with(2, 3, 40, false);
    let lb = balancer::Balancer::start(c.gateways.iter().map(|g| g.addr.clone()).collect());
    let opts = json!({
        "transport": "http",
        "url": format!("http://{}/mcp", lb.addr),
        "token": c.token,
        "home": c.f.home("admin"),
        "tools": c.f.tools(),
    });
    common::run_client(
        sdk_client("node", "ts_client.mjs", opts.clone()),
        "the TypeScript SDK through alternating gateways",
    );
    for mode in ["legacy", "auto"] {
        // Each suite edits `echo`: the next begins with it as it was, on both gateways.
        restore_echo(&c);
        let mut opts = opts.clone();
        opts["mode"] = json!(mode);
        common::run_client(
            sdk_client(common::python().to_str().unwrap(), "py_client.py", opts),
            &format!("the Python SDK ({mode}) through alternating gateways"),
        );
    }
    for (n, sent) in lb.sent.iter().enumerate() {
        assert!(
            sent.load(std::sync::atomic::Ordering::Relaxed) > 50,
            "gateway {n} got few requests"
        );
    }
}

/// Opens a stream that reports list changes at gateway `addr`: a 2026-07-28
/// `subscriptions/listen` request, or (`legacy`) a 2025-11-25 session's GET stream.
/// Returns a thread that yields when the stream carried `tools/list_changed`.
fn list_changes(addr: &str, token: &str, legacy: bool) -> std::sync::mpsc::Receiver<Instant> {
    let auth = format!("Bearer {token}");
    let mut conn = if legacy {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "fleet-test", "version": "1"}}})
        .to_string();
        let mut headers = MCP_POST.to_vec();
        headers.extend_from_slice(&[("Host", "127.0.0.1"), ("Authorization", auth.as_str())]);
        let r = send(addr, "POST", &headers, init.as_bytes());
        assert_eq!(r.status, 200, "{}", r.body);
        let session = r.header("mcp-session-id").unwrap().to_string();
        let mut headers = MCP_POST.to_vec();
        headers.extend_from_slice(&[
            ("Host", "127.0.0.1"),
            ("Authorization", auth.as_str()),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]);
        let r = send(
            addr,
            "POST",
            &headers,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(r.status, 202, "{}", r.body);
        let get = [
            ("Host", "127.0.0.1"),
            ("Accept", "text/event-stream"),
            ("Authorization", auth.as_str()),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let mut conn = open(addr, "GET", &get, b"");
        read_until(&mut conn, "200 OK");
        conn
    } else {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "notifications": {"toolsListChanged": true},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string();
        let mut headers = MCP_POST.to_vec();
        headers.extend_from_slice(&[
            ("Host", "127.0.0.1"),
            ("Authorization", auth.as_str()),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "subscriptions/listen"),
        ]);
        let mut conn = open(addr, "POST", &headers, body.as_bytes());
        read_until(&mut conn, "200 OK");
        conn
    };
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let Ok(n) = std::io::Read::read(&mut conn, &mut buf) else {
                return;
            };
            if n == 0 {
                return;
            }
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen).into_owned();
            let count = text.matches("notifications/tools/list_changed").count();
            if count > 0 {
                seen.clear();
                for _ in 0..count {
                    let _ = tx.send(Instant::now());
                }
            }
        }
    });
    rx
}

/// Names of the tools `tools/list` shows at gateway `addr` (stateless).
fn tool_names(addr: &str, token: &str) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let auth = format!("Bearer {token}");
    let mut headers = MCP_POST.to_vec();
    headers.extend_from_slice(&[
        ("Host", "127.0.0.1"),
        ("Authorization", auth.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ]);
    let r = send(addr, "POST", &headers, body.as_bytes());
    let json: Value = if r.body.trim_start().starts_with('{') {
        serde_json::from_str(&r.body).unwrap()
    } else {
        r.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("result").is_some())
            .unwrap_or_else(|| panic!("{}", r.body))
    };
    json["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// Adds tool `name` (a copy of `echo` under another name) to the fixture's tools.
fn add_tool(c: &Cluster, name: &str) {
    let dir = c.f.tools().join(format!(".{name}-new"));
    common::copy_dir(&c.f.tools().join("echo"), &dir);
    let md = std::fs::read_to_string(dir.join("TOOL.md")).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        md.replace("name: echo", &format!("name: {name}")),
    )
    .unwrap();
    std::fs::rename(&dir, c.f.tools().join(name)).unwrap();
}

/// `toolhost cluster publish` of the fixture's tools, once (with NATS, or `--nats` left out).
fn publish_once(c: &Cluster, with_nats: bool) {
    let mut cmd = c.f.toolhost();
    cmd.args(["cluster", "publish", "--data"])
        .arg(c.f.data())
        .args(["--database", &c.pg.url])
        .env("TOOLHOST_NATS_PASSWORD", cluster::PASSWORD);
    if with_nats {
        cmd.args(["--nats", &c.nats.url, "--node", "publisher-once"]);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("published the catalog's epoch"), "{stderr}");
}

/// A published tool reaches both gateways' list changes within a second: a stateless
/// `subscriptions/listen` stream on one, a 2025-11-25 session's GET stream on the other;
/// then both list it. Published while NATS is down, it still arrives once NATS is back
/// (the gateways also check the store's newest epoch).
#[test]
fn a_publish_reaches_list_changed_on_every_gateway() {
    let mut c = Cluster::start(2, 3, 4);
    // The test publishes by itself, to time it.
    c.publisher.take();
    let listen = list_changes(&c.gateways[0].addr, &c.token, false);
    let legacy = list_changes(&c.gateways[1].addr, &c.token, true);
    add_tool(&c, "fresh");
    publish_once(&c, true);
    let published = Instant::now();
    for (what, rx) in [
        ("subscriptions/listen", &listen),
        ("the GET stream", &legacy),
    ] {
        let at = rx
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("no list_changed on {what}"));
        let after = at.saturating_duration_since(published);
        assert!(after < Duration::from_secs(1), "{what}: {after:?}");
    }
    for g in &c.gateways {
        assert!(tool_names(&g.addr, &c.token).contains(&"fresh".to_string()));
    }
    // NATS down while publishing: the notice comes once it is back.
    while listen.try_recv().is_ok() || legacy.try_recv().is_ok() {}
    c.nats.stop();
    add_tool(&c, "fresher");
    publish_once(&c, false);
    c.nats.restart();
    for (what, rx) in [
        ("subscriptions/listen", &listen),
        ("the GET stream", &legacy),
    ] {
        rx.recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no list_changed on {what} after NATS came back"));
    }
    for g in &c.gateways {
        assert!(tool_names(&g.addr, &c.token).contains(&"fresher".to_string()));
    }
    // A call of the new tool runs on a runner, from the bundle just published.
    let (response, _) = c.call(0, "fresher", json!({"text": "new"}));
    assert_eq!(text(&response), "new");
}

/// Affinity over many users: each user's calls stay on one runner; a fourth runner takes
/// only a share of the users (those who move, move to it); a runner that leaves moves only
/// its own users.
#[test]
fn a_runner_joining_or_leaving_moves_only_its_share_of_users() {
    let mut c = Cluster::start(2, 3, 8);
    let admin = api_client::Api {
        addr: &c.gateways[0].addr,
        token: Some(c.token.clone()),
    };
    let mut tokens = Vec::new();
    for n in 0..30 {
        let user = format!("user{n}");
        let r = admin.request(
            "PUT",
            &format!("/users/{user}"),
            Some(&json!({"role": "viewer"})),
        );
        assert!(r.status == 200 || r.status == 201, "{}", r.body);
        let r = admin.request(
            "POST",
            "/tokens",
            Some(&json!({"name": "fleet", "user": user})),
        );
        assert_eq!(r.status, 201, "{}", r.body);
        tokens.push(
            api_client::json_of(&r)["secret"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let homes = |c: &Cluster, round: &str| -> Vec<String> {
        tokens
            .iter()
            .enumerate()
            .map(|(n, token)| {
                let (response, _) = call_at(
                    c.gateway(n),
                    token,
                    "effect",
                    json!({"id": format!("{round}{n}")}),
                );
                effect(&response)["runner"].as_str().unwrap().to_string()
            })
            .collect()
    };
    let before = homes(&c, "a");
    // Every user's calls stay with their runner, through either gateway.
    assert_eq!(homes(&c, "b"), before);
    let mut counts = std::collections::BTreeMap::new();
    for r in &before {
        *counts.entry(r.clone()).or_insert(0) += 1;
    }
    assert_eq!(counts.len(), 3, "{counts:?}");

    let fourth = c.start_runner(4, 8);
    c.runners.push(Some(fourth));
    c.await_runners(4);
    let after = homes(&c, "c");
    let moved: Vec<usize> = (0..30).filter(|&n| before[n] != after[n]).collect();
    assert!(moved.len() <= 12, "{} of 30 users moved", moved.len());
    assert!(!moved.is_empty());
    for &n in &moved {
        assert_eq!(after[n], "runner-4", "user{n} moved to {}", after[n]);
    }

    c.runner("runner-2").kill();
    let left = homes(&c, "d");
    for n in 0..30 {
        if after[n] == "runner-2" {
            assert_ne!(left[n], "runner-2");
        } else {
            assert_eq!(left[n], after[n], "user{n} moved though its runner stayed");
        }
    }
}

/// New versions of a tool published while calls flow through both gateways: every call
/// succeeds, and each ran one whole version (its code and its data file from the same
/// bundle); later calls run the last version.
#[test]
fn calls_during_publishes_each_run_one_whole_version() {
    let c = Cluster::start(2, 3, 16);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let callers: Vec<_> = (0..4)
        .map(|t| {
            let addr = c.gateway(t).to_string();
            let token = c.token.clone();
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let (response, _) = call_at(
                        &addr,
                        &token,
                        "versioned",
                        json!({"id": format!("{t}-{n}")}),
                    );
                    assert!(!is_error(&response), "{response}");
                    seen.push(text(&response));
                    n += 1;
                }
                seen
            })
        })
        .collect();
    let dir = c.f.tools().join("versioned");
    for v in 2..=4 {
        std::thread::sleep(Duration::from_millis(700));
        // A new version: its code and data file change together (one rename of the folder).
        let next = c.f.tools().join(format!(".versioned-{v}"));
        common::copy_dir(&dir, &next);
        let code = std::fs::read_to_string(next.join("index.ts")).unwrap();
        std::fs::write(
            next.join("index.ts"),
            code.replace(
                &format!("const CODE = {};", v - 1),
                &format!("const CODE = {v};"),
            ),
        )
        .unwrap();
        std::fs::write(next.join("data.txt"), format!("{v}\n")).unwrap();
        let old = c.f.tools().join(format!(".versioned-old-{v}"));
        std::fs::rename(&dir, &old).unwrap();
        std::fs::rename(&next, &dir).unwrap();
    }
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut all = Vec::new();
    for t in callers {
        all.extend(t.join().unwrap());
    }
    assert!(all.len() > 20, "{}", all.len());
    for seen in &all {
        let (code, data) = seen.split_once(' ').unwrap();
        assert_eq!(
            code.trim_start_matches("code="),
            data.trim_start_matches("data="),
            "{seen}"
        );
    }
    assert!(all.iter().any(|s| s == "code=1 data=1"), "{all:?}");
    assert!(
        all.iter().any(|s| s != "code=1 data=1"),
        "no call ran a newer version"
    );
    let (response, _) = c.call(0, "versioned", json!({"id": "last"}));
    assert_eq!(text(&response), "code=4 data=4");
}

/// What operators see: `toolhost cluster status` (a table, and JSON) lists every gateway
/// and runner; a gateway's `/api/v1/cluster` and `/metrics` show the fleet and what it
/// did; each runner serves its own `/metrics`; the console's overview shows the fleet.
#[test]
fn operators_see_the_fleet_in_status_metrics_and_the_console() {
    let c = Cluster::start(2, 3, 4);
    effect(&c.call(0, "effect", json!({"id": "seen"})).0);

    let status = |json: bool| {
        let mut cmd = c.f.toolhost();
        cmd.args([
            "cluster",
            "status",
            "--nats",
            &c.nats.url,
            "--node",
            "status-cli",
        ])
        .env("TOOLHOST_NATS_PASSWORD", cluster::PASSWORD);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let listed: Value = serde_json::from_str(&status(true)).unwrap();
    let nodes = |role: &str| -> Vec<String> {
        listed[role]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["node"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(nodes("gateways"), ["gateway-1", "gateway-2"]);
    assert_eq!(nodes("runners"), ["runner-1", "runner-2", "runner-3"]);
    for r in listed["runners"].as_array().unwrap() {
        assert_eq!(r["slots"], 4, "{r}");
        assert_eq!(r["version"], env!("CARGO_PKG_VERSION"));
    }
    let finished: u64 = listed["runners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["finished"].as_u64().unwrap())
        .sum();
    assert_eq!(finished, 1, "{listed}");
    let table = status(false);
    assert!(table.starts_with("NODE"), "{table}");
    assert!(
        table.contains("runner-3") && table.contains("gateway-2"),
        "{table}"
    );

    let api = api_client::Api {
        addr: &c.gateways[1].addr,
        token: Some(c.token.clone()),
    };
    let cluster = api_client::json_of(&api.request("GET", "/cluster", None));
    assert_eq!(cluster["clustered"], true);
    assert_eq!(cluster["node"], "gateway-2");
    assert_eq!(cluster["runners"].as_array().unwrap().len(), 3);
    let metrics = api.request("GET", "/metrics", None).body;
    assert!(metrics.contains("toolhost_fleet_runners 3"), "{metrics}");
    assert!(
        metrics.contains("toolhost_fleet_catalog_epoch 1"),
        "{metrics}"
    );
    let gateway_metrics = api_client::Api {
        addr: &c.gateways[0].addr,
        token: Some(c.token.clone()),
    }
    .request("GET", "/metrics", None)
    .body;
    assert!(
        gateway_metrics.contains("toolhost_fleet_accepted_total 1"),
        "{gateway_metrics}"
    );

    let mut accepted = 0;
    for r in c.runners.iter().flatten() {
        let addr = r.metrics.as_deref().unwrap();
        let text = raw_http::send_to(addr, "GET", "/metrics", &[("Host", "127.0.0.1")], b"").body;
        assert!(text.contains("toolhost_fleet_slots 4"), "{text}");
        accepted += text
            .lines()
            .find_map(|l| l.strip_prefix("toolhost_fleet_accepted_total "))
            .unwrap()
            .parse::<u64>()
            .unwrap();
    }
    assert_eq!(accepted, 1);

    let base = format!("http://{}", c.gateways[0].addr);
    let result = browser::run_script("fleet", &base, &c.token, &[]);
    let rows = result["nodes"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["node"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["gateway-1", "gateway-2", "runner-1", "runner-2", "runner-3"],
        "{result}"
    );
    assert!(
        rows[0]["cells"][0].as_str().unwrap().contains("this one"),
        "{result}"
    );
    assert_eq!(rows[2]["cells"][1], "runner");
    assert!(
        rows[2]["cells"][3].as_str().unwrap().ends_with("of 4"),
        "{result}"
    );
    assert_eq!(result["sandboxSection"], false);
    browser::assert_budgets(&result, 1);
    browser::assert_screenshots(&["fleet-overview"]);
}

/// `deploy/nats.conf`, as shipped, runs a fleet: its users and permissions let a
/// gateway and its runners work, refuse anonymous connections and keep each runner to its
/// own subjects. The Kubernetes example's copy has the same gateway permissions.
#[test]
fn the_shipped_nats_configuration_runs_a_fleet() {
    let deploy = common::repo().join("deploy");
    let nats = cluster::Nats::shipped(&deploy.join("nats.conf"));
    let port = nats.port;
    let c = Cluster::start_on(nats, 1, 2, 4, true);
    let (response, _) = c.call(
        0,
        "effect",
        json!({"id": "shipped", "steps": 2, "delay_ms": 10}),
    );
    effect(&response);
    let (_, answer) = cluster::RawNats::login(port, None, "");
    assert!(answer.contains("Authorization Violation"), "{answer}");
    let (mut runner, answer) = cluster::RawNats::login(port, Some("runner-1"), cluster::PASSWORD);
    assert_eq!(answer, "PONG");
    for subject in [
        "toolhost.call.runner-2",
        "toolhost.call.>",
        "_INBOX.gateway-1.>",
    ] {
        assert!(
            runner
                .subscribe(subject, 1)
                .contains("Permissions Violation"),
            "{subject}"
        );
    }
    let block = |text: &str| -> String {
        let start = text.find("GATEWAY = {").unwrap();
        let end = start + text[start..].find('}').unwrap();
        text[start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let shipped = std::fs::read_to_string(deploy.join("nats.conf")).unwrap();
    let kubernetes = std::fs::read_to_string(deploy.join("kubernetes/toolhost.yaml")).unwrap();
    assert_eq!(block(&shipped), block(&kubernetes));
}

/// A 2025-11-25 session opened on one gateway continues on the other for its own user,
/// and is unknown (404) there to anyone else; a user's own tool (in their folder of the
/// shared data) is listed by both gateways and runs on a runner.
#[test]
fn a_session_continues_on_another_gateway_for_its_own_user_only() {
    let c = Cluster::start(2, 3, 4);
    let admin = api_client::Api {
        addr: &c.gateways[0].addr,
        token: Some(c.token.clone()),
    };
    let r = admin.request("PUT", "/users/bob", Some(&json!({"role": "viewer"})));
    assert!(r.status == 200 || r.status == 201, "{}", r.body);
    let r = admin.request(
        "POST",
        "/tokens",
        Some(&json!({"name": "bob", "user": "bob"})),
    );
    let bob = api_client::json_of(&r)["secret"]
        .as_str()
        .unwrap()
        .to_string();

    let post = |addr: &str, token: &str, session: Option<&str>, body: &str| {
        let auth = format!("Bearer {token}");
        let mut headers = MCP_POST.to_vec();
        headers.extend_from_slice(&[("Host", "127.0.0.1"), ("Authorization", auth.as_str())]);
        if let Some(s) = session {
            headers.extend_from_slice(&[
                ("Mcp-Session-Id", s),
                ("MCP-Protocol-Version", "2025-11-25"),
            ]);
        }
        send(addr, "POST", &headers, body.as_bytes())
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fleet-test", "version": "1"}}})
    .to_string();
    let (a, b) = (c.gateways[0].addr.as_str(), c.gateways[1].addr.as_str());
    let r = post(a, &c.token, None, &init);
    assert_eq!(r.status, 200, "{}", r.body);
    let session = r.header("mcp-session-id").unwrap().to_string();
    let r = post(
        a,
        &c.token,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    // Bob, with the session's id, on the other gateway: as if it did not exist.
    let r = post(b, &bob, Some(&session), list);
    assert_eq!(r.status, 404, "{}", r.body);
    // Its owner, there: the session goes on.
    let r = post(b, &c.token, Some(&session), list);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("\"effect\""), "{}", r.body);
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "effect", "arguments": {"id": "in-session"}}})
    .to_string();
    let r = post(b, &c.token, Some(&session), &call);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("in-session"), "{}", r.body);
    // And Bob still cannot use it on the gateway that opened it.
    assert_eq!(post(a, &bob, Some(&session), list).status, 404);

    // A user's own tool, from the shared data folder, on both gateways and a runner.
    let own = c.f.home("admin").join("tools");
    std::fs::create_dir_all(&own).unwrap();
    common::copy_dir(&c.f.tools().join("echo"), &own.join("mine"));
    let md = std::fs::read_to_string(own.join("mine/TOOL.md")).unwrap();
    std::fs::write(
        own.join("mine/TOOL.md"),
        md.replace("name: echo", "name: mine"),
    )
    .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    for g in &c.gateways {
        while !tool_names(&g.addr, &c.token).contains(&"mine".to_string()) {
            assert!(
                Instant::now() < until,
                "gateway {} never listed the user's tool",
                g.addr
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let (response, _) = c.call(1, "mine", json!({"text": "my own"}));
    assert_eq!(text(&response), "my own");
    assert!(!tool_names(&c.gateways[0].addr, &bob).contains(&"mine".to_string()));
}

/// A token revoked through one gateway is refused by the other at once, though gateways
/// remember tokens for 30 s to keep the store off the hot path.
#[test]
fn a_revoked_token_is_refused_by_every_gateway_at_once() {
    let c = Cluster::start(2, 1, 4);
    let admin = api_client::Api {
        addr: &c.gateways[0].addr,
        token: Some(c.token.clone()),
    };
    let r = admin.request("PUT", "/users/carol", Some(&json!({"role": "viewer"})));
    assert!(r.status == 200 || r.status == 201, "{}", r.body);
    let made = api_client::json_of(&admin.request(
        "POST",
        "/tokens",
        Some(&json!({"name": "carol", "user": "carol"})),
    ));
    let carol = made["secret"].as_str().unwrap().to_string();
    let id = made["token"]["id"].as_str().unwrap().to_string();
    // Both gateways have seen (and remember) the token.
    for g in &c.gateways {
        assert!(tool_names(&g.addr, &carol).contains(&"effect".to_string()));
    }
    let r = admin.request("DELETE", &format!("/tokens/{id}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    let status = |addr: &str| {
        let auth = format!("Bearer {carol}");
        let mut headers = MCP_POST.to_vec();
        headers.extend_from_slice(&[
            ("Host", "127.0.0.1"),
            ("Authorization", auth.as_str()),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ]);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string();
        send(addr, "POST", &headers, body.as_bytes()).status
    };
    assert_eq!(status(&c.gateways[0].addr), 401);
    let until = Instant::now() + Duration::from_secs(2);
    while status(&c.gateways[1].addr) != 401 {
        assert!(
            Instant::now() < until,
            "the other gateway still took the revoked token"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
