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
    let addr = c.gateway(1).to_string();
    let token = c.token.clone();
    let caller = std::thread::spawn(move || {
        call_at(
            &addr,
            &token,
            "effect",
            json!({"id": "paused", "steps": 100, "delay_ms": 100}),
        )
    });
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

    let addr = c.gateway(0).to_string();
    let token = c.token.clone();
    let caller = std::thread::spawn(move || {
        call_at(
            &addr,
            &token,
            "effect",
            json!({"id": "inflight", "steps": 20, "delay_ms": 100}),
        )
    });
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
