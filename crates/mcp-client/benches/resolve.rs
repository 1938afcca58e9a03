//! Turn resolution benchmark.
//!
//! An agent granted 50 tool sets of 20 native tools each (1,000 tools):
//! - without MCP servers (goal: under 2 ms per turn);
//! - plus three real MCP servers (TypeScript SDK, stdio) whose `tools/list` answers after
//!   100 ms each (goal: within 5 ms of the slowest server, since they resolve concurrently).
//!   The baseline, measured in the same run, is a turn granting only the slowest server.
//!
//! It lives with the MCP client because the servers' part needs it; the 1,000-tool part
//! is the framework's alone.
//!
//! Run: `cargo bench -p toolhost-mcp-client --bench resolve` (needs `scripts/test`'s npm
//! install of the TypeScript SDK in `crates/mcp-client/tests/mcp-servers`).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_mcp_client::McpServerConfig;
use toolhost_toolsets::{
    AgentConfig, Annotations, BootOptions, CorePlugins, Grant, Owner, Registry, ToolMap, ToolSet,
    Tools, ToolsetsConfig, TurnRequest, typed_tool,
};

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// Any text.
    text: String,
}

fn sets() -> Vec<(ToolSet, Owner)> {
    (0..50)
        .map(|s| {
            let mut map = ToolMap::new();
            for t in 0..20 {
                map.add(typed_tool(
                    &format!("set{s}_tool{t}"),
                    &format!("Tool {t} of set {s}."),
                    Annotations::read_only(),
                    |a: Args, _ctx| async move { Ok(json!({ "echo": a.text })) },
                ));
            }
            let set = ToolSet::new(
                &format!("set-{s}"),
                "Set",
                "Bench",
                "A benchmark set",
                Tools::Static(map),
            )
            .with_icon("box");
            (
                set,
                Owner::Plugin {
                    name: "bench".into(),
                },
            )
        })
        .collect()
}

fn server(delay_ms: u64) -> McpServerConfig {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-servers/slow-list-server.mjs");
    McpServerConfig {
        command: vec!["node".into(), script.display().to_string()],
        env: [("DELAY_MS".to_string(), delay_ms.to_string())].into(),
        timeout: Some(Duration::from_secs(20)),
        ..McpServerConfig::default()
    }
}

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort();
    let median = samples[samples.len() / 2];
    let p99 = samples[(samples.len() * 99 / 100).min(samples.len() - 1)];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    (median, mean, p99)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

async fn turns(r: &Registry, agent: &str, n: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        let turn = r.resolve(agent, &TurnRequest::default()).await.unwrap();
        out.push(start.elapsed());
        assert!(turn.warnings.is_empty(), "{:?}", turn.warnings);
        turn.end().await;
    }
    out
}

fn main() {
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-servers/node_modules");
    if !modules.is_dir() {
        eprintln!(
            "{} is missing: run scripts/test first (it installs the MCP SDKs)",
            modules.display()
        );
        std::process::exit(1);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut config = ToolsetsConfig::default();
        let mut servers = BTreeMap::new();
        let set_grants: Vec<Grant> = (0..50).map(|s| Grant::tool_set(&format!("set-{s}"))).collect();
        let mut with_mcp = set_grants.clone();
        for (name, delay) in [("m1", 100), ("m2", 100), ("m3", 100)] {
            servers.insert(name.to_string(), server(delay));
            with_mcp.push(Grant::mcp_server(name));
        }
        config.agents.insert("sets".into(), AgentConfig { grants: set_grants, ..Default::default() });
        config.agents.insert("sets+mcp".into(), AgentConfig { grants: with_mcp, ..Default::default() });
        config.agents.insert("slowest".into(), AgentConfig { grants: vec![Grant::mcp_server("m3")], ..Default::default() });
        // Resolution is measured, not the sandbox: the servers run on the host.
        let mut runtime = toolhost_runtime::RuntimeConfig::default();
        runtime.sandbox.enabled = false;
        let launcher = toolhost_runtime::ServerLauncher::new(&runtime);
        let r = Registry::boot(
            CorePlugins::new(),
            BootOptions {
                config,
                extra_sets: sets(),
                external: toolhost_mcp_client::sources(&servers, &launcher).unwrap(),
                ..BootOptions::default()
            },
        )
        .unwrap();

        // Connect once (kept between turns, as in a server), and warm up.
        let warm = r.resolve("sets+mcp", &TurnRequest::default()).await.unwrap();
        assert_eq!(warm.tools.len(), 1030, "{:?}", warm.warnings);
        warm.end().await;
        turns(&r, "sets", 200).await;

        // Floor: the unavoidable part of a turn, touching every tool of every granted set
        // once (clone its handle and name, sort by name), nothing else.
        let mut floor = Vec::new();
        for _ in 0..2000 {
            let start = Instant::now();
            let mut all: Vec<(String, toolhost_toolsets::Tool)> = Vec::with_capacity(1000);
            for s in 0..50 {
                if let Some(entry) = r.tool_set(&format!("set-{s}"))
                    && let Tools::Static(map) = &entry.set.tools
                {
                    all.extend(map.iter().map(|(k, t)| (k.to_string(), t.clone())));
                }
            }
            all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            std::hint::black_box(&all);
            floor.push(start.elapsed());
        }
        let (floor_median, _, _) = stats(floor);
        let (median, mean, p99) = stats(turns(&r, "sets", 2000).await);
        println!("floor (clone + sort 1,000 tools): median {}", ms(floor_median));
        println!(
            "50 sets, 1,000 tools, no MCP:    median {}  mean {}  p99 {}   = {:.1}x floor   (goal < 2 ms)",
            ms(median),
            ms(mean),
            ms(p99),
            median.as_secs_f64() / floor_median.as_secs_f64()
        );

        // Interleave the two so both see the same machine load.
        let mut alone = Vec::new();
        let mut all = Vec::new();
        for _ in 0..20 {
            alone.extend(turns(&r, "slowest", 1).await);
            all.extend(turns(&r, "sets+mcp", 1).await);
        }
        let (alone_median, _, _) = stats(alone);
        let (all_median, _, all_p99) = stats(all);
        let over = all_median.saturating_sub(alone_median);
        println!("slowest MCP server alone:         median {}", ms(alone_median));
        println!(
            "50 sets + 3 MCP servers (100 ms): median {}  p99 {}   = slowest + {} ({:.3}x)   (goal: within 5 ms)",
            ms(all_median),
            ms(all_p99),
            ms(over),
            all_median.as_secs_f64() / alone_median.as_secs_f64()
        );
    });
}
