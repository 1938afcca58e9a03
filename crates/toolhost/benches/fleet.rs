//! The fleet, measured with real processes on loopback (PostgreSQL, nats-server, gateways
//! and runners, as the fleet's tests start them).
//!
//! 1. Scaling: a tool that waits 50 ms, runners of 4 slots each, as many callers as the
//!    fleet has slots, for a fixed time: calls per second with one runner and with three
//!    (each user's calls go to their home runner; a busy one passes the call to the
//!    next). Goal: at least 2.6× from one runner to three. It is bound by how many calls
//!    run at once, not by CPU, so two shared cores can show it.
//! 2. Overhead: sequential warm calls of a tool that answers at once, alternated call by
//!    call between one `toolhost serve` running it itself and the fleet (a gateway handing
//!    it to a runner over NATS): p50 of each and of the difference. Goal: at most 0.5 ms
//!    added at p50.
//! 3. CPU time per call of each role (gateway, runner with its workers, nats-server), from
//!    `/proc`, over the calls of 2.
//! 4. Back-pressure: with every slot taken, calls are refused at once: how fast (goal: p99
//!    ≤ 200 ms), and the gateway's memory before and after.
//!
//! Run: `cargo bench -p toolhost --bench fleet` (`-- --quick` for fewer rounds).
#![allow(clippy::unwrap_used)]

#[path = "../tests/mcp/api_client.rs"]
mod api_client;
#[path = "../tests/fleet/cluster.rs"]
mod cluster;
#[path = "../tests/mcp/common.rs"]
mod common;
#[path = "../tests/mcp/raw_http.rs"]
mod raw_http;
#[path = "../tests/mcp/stored.rs"]
mod stored;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cluster::Cluster;
use common::Server;
use raw_http::{MCP_POST, send};
use serde_json::{Value, json};

/// A stateless `tools/call`; whether it succeeded.
fn call(addr: &str, token: &str, name: &str, args: Value) -> bool {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let auth = format!("Bearer {token}");
    let mut headers = MCP_POST.to_vec();
    if !token.is_empty() {
        headers.push(("Authorization", auth.as_str()));
    }
    headers.extend_from_slice(&[
        ("Host", "127.0.0.1"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ]);
    let r = send(addr, "POST", &headers, body.as_bytes());
    r.status == 200 && r.body.contains("\"result\"") && !r.body.contains("\"isError\":true")
}

/// User and process CPU time of `pid` so far, in microseconds.
fn cpu_us(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime, stime, cutime, cstime are fields 14-17 (1-based), 12-15 after the name.
    let ticks: u64 = fields
        .get(11..15)
        .map(|f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum())
        .unwrap_or(0);
    ticks * 1_000_000 / 100
}

/// CPU of a process and every process below it (a runner's workers and sandboxes).
fn tree_cpu_us(root: u32) -> u64 {
    let mut total = 0;
    let mut pending = vec![root];
    while let Some(pid) = pending.pop() {
        total += cpu_us(pid);
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        pending.extend(
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
    total
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Calls per second of `callers` threads calling `nap` (50 ms) for `secs`.
fn throughput(c: &Cluster, tokens: &[String], callers: usize, secs: f64) -> (f64, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..callers)
        .map(|n| {
            let addr = c.gateways[n % c.gateways.len()].addr.clone();
            let token = tokens[n % tokens.len()].clone();
            let (stop, done, refused) =
                (Arc::clone(&stop), Arc::clone(&done), Arc::clone(&refused));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if call(&addr, &token, "nap", json!({"ms": 50})) {
                        done.fetch_add(1, Ordering::Relaxed);
                    } else {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    // Warm the workers first, then count.
    std::thread::sleep(Duration::from_secs(2));
    let start = (done.load(Ordering::Relaxed), Instant::now());
    std::thread::sleep(Duration::from_secs_f64(secs));
    let counted = done.load(Ordering::Relaxed) - start.0;
    let took = start.1.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    (counted as f64 / took, refused.load(Ordering::Relaxed))
}

/// Tokens of `n` users of the cluster's store.
fn users(c: &Cluster, n: usize) -> Vec<String> {
    let admin = api_client::Api {
        addr: &c.gateways[0].addr,
        token: Some(c.token.clone()),
    };
    (0..n)
        .map(|i| {
            let user = format!("bench{i}");
            admin.request(
                "PUT",
                &format!("/users/{user}"),
                Some(&json!({"role": "viewer"})),
            );
            let r = admin.request(
                "POST",
                "/tokens",
                Some(&json!({"name": "bench", "user": user})),
            );
            api_client::json_of(&r)["secret"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn scaling(quick: bool) {
    let secs = if quick { 3.0 } else { 8.0 };
    let mut rates = Vec::new();
    for runners in [1, 3] {
        let c = Cluster::start(2, runners, 4);
        let tokens = users(&c, 12);
        let (rate, refused) = throughput(&c, &tokens, 4 * runners, secs);
        println!(
            "scaling: {runners} runner(s) x 4 slots, {} callers: {rate:.1} calls/s ({refused} refused as overloaded)",
            4 * runners
        );
        rates.push(rate);
    }
    println!(
        "scaling: 1 -> 3 runners = {:.2}x (goal >= 2.6x; ideal 80 calls/s per runner)",
        rates[1] / rates[0]
    );
}

fn overhead(quick: bool) {
    let rounds = if quick { 200 } else { 1000 };
    let c = Cluster::start(1, 1, 8);
    // One `serve` of its own over the same tools, running them itself: the baseline.
    let mut cmd = c.f.toolhost();
    cmd.args(["serve", "--no-store", "--data"])
        .arg(c.f.data())
        .env("XDG_CACHE_HOME", c.f.dir.path().join("cache-local"));
    let local = Server::start(cmd);
    let fleet_gw = c.gateways[0].addr.clone();
    // Warm both.
    for _ in 0..50 {
        assert!(call(&local.addr, "", "nap", json!({})));
        assert!(call(&fleet_gw, &c.token, "nap", json!({})));
    }
    let runner_pid = c.runners[0].as_ref().unwrap().pid();
    let gateway_pid = c.gateways[0].child.id();
    let local_pid = local.child.id();
    let before = (
        tree_cpu_us(gateway_pid),
        tree_cpu_us(runner_pid),
        nats_cpu(&c),
        tree_cpu_us(local_pid),
    );
    let (mut l, mut f, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        assert!(call(&local.addr, "", "nap", json!({})));
        let a = t.elapsed().as_secs_f64() * 1000.0;
        let t = Instant::now();
        assert!(call(&fleet_gw, &c.token, "nap", json!({})));
        let b = t.elapsed().as_secs_f64() * 1000.0;
        l.push(a);
        f.push(b);
        d.push(b - a);
    }
    let after = (
        tree_cpu_us(gateway_pid),
        tree_cpu_us(runner_pid),
        nats_cpu(&c),
        tree_cpu_us(local_pid),
    );
    for v in [&mut l, &mut f, &mut d] {
        v.sort_by(f64::total_cmp);
    }
    println!(
        "overhead: local warm call p50 {:.3} ms p99 {:.3} ms; fleet p50 {:.3} ms p99 {:.3} ms",
        percentile(&l, 0.5),
        percentile(&l, 0.99),
        percentile(&f, 0.5),
        percentile(&f, 0.99)
    );
    println!(
        "overhead: the fleet adds {:.3} ms at p50 (paired, call by call; goal <= 0.5 ms), ratio {:.2}x",
        percentile(&d, 0.5),
        percentile(&f, 0.5) / percentile(&l, 0.5)
    );
    let per = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / rounds as f64;
    println!(
        "cpu per call: one serve running it itself (with its workers) {:.0} us; the fleet: \
         gateway {:.0} us, runner (with its workers) {:.0} us, nats-server {:.0} us",
        per(before.3, after.3),
        per(before.0, after.0),
        per(before.1, after.1),
        per(before.2, after.2)
    );
}

/// The resident memory of `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Back-pressure: every slot of the fleet is taken by a long call, then 16 callers send
/// calls as fast as they are answered. Each must be refused at once ("overloaded"): the
/// time of those answers, and the gateway's memory before and after.
fn flood(quick: bool) {
    let per_caller = if quick { 50 } else { 200 };
    let c = Cluster::start(1, 2, 2);
    let gateway = c.gateways[0].addr.clone();
    // Take every slot (2 runners x 2) for the whole measurement.
    let holders: Vec<_> = (0..4)
        .map(|_| {
            let (addr, token) = (gateway.clone(), c.token.clone());
            std::thread::spawn(move || call(&addr, &token, "nap", json!({"ms": 30_000})))
        })
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    let pid = c.gateways[0].child.id();
    let mut rss = vec![rss_kib(pid)];
    let mut refused = Vec::new();
    let mut succeeded = 0;
    // Three rounds: memory that grows round after round is a leak; a first round's
    // growth is the allocator and the connections warming up.
    for _ in 0..3 {
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (addr, token) = (gateway.clone(), c.token.clone());
                std::thread::spawn(move || {
                    let mut times = Vec::new();
                    for _ in 0..per_caller {
                        let t = Instant::now();
                        let ok = call(&addr, &token, "nap", json!({"ms": 0}));
                        times.push((ok, t.elapsed().as_secs_f64() * 1000.0));
                    }
                    times
                })
            })
            .collect();
        for t in threads {
            for (ok, ms) in t.join().unwrap() {
                if ok {
                    succeeded += 1;
                } else {
                    refused.push(ms);
                }
            }
        }
        rss.push(rss_kib(pid));
    }
    refused.sort_by(f64::total_cmp);
    println!(
        "flood: {} calls onto a full fleet (16 callers, 3 rounds): {} refused as overloaded in p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (goal p99 <= 200 ms); {succeeded} succeeded",
        refused.len() + succeeded,
        refused.len(),
        percentile(&refused, 0.5),
        percentile(&refused, 0.99),
        refused.last().copied().unwrap_or(f64::NAN)
    );
    let mib: Vec<String> = rss
        .iter()
        .map(|k| format!("{:.1}", *k as f64 / 1024.0))
        .collect();
    println!(
        "flood: the gateway's RSS before and after each round: {} MiB",
        mib.join(", ")
    );
    drop(c);
    for h in holders {
        let _ = h.join();
    }
}

fn nats_cpu(c: &Cluster) -> u64 {
    c.nats.pid().map_or(0, cpu_us)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    if std::env::args().any(|a| a == "--list") {
        println!("fleet: benchmark");
        return;
    }
    overhead(quick);
    flood(quick);
    scaling(quick);
}
