//! The fleet, as real processes on loopback: one PostgreSQL, one `nats-server`, gateways
//! (`toolhost serve --nats`) and runners (`toolhost runner`), all started here and stopped
//! by their process ids. Clients switch gateway on every request: nothing may lean on
//! stickiness. The `effect` tool appends each call's name to a log in the user's home: the
//! oracle that no call ran twice.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
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
use raw_http::{MCP_POST, send};
use serde_json::{Value, json};

/// A stateless (2026-07-28) `tools/call` of `name` through the gateway at `addr`: the
/// JSON-RPC response and the progress notifications that came before it.
fn call_at(addr: &str, token: &str, name: &str, args: Value) -> (Value, Vec<Value>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": args, "_meta": {
            "progressToken": "p",
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let auth = format!("Bearer {token}");
    let mut headers = MCP_POST.to_vec();
    headers.extend_from_slice(&[
        ("Host", "127.0.0.1"),
        ("Authorization", auth.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ]);
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
