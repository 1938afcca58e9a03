//! What a worker per tool costs: N TypeScript tools of one user, each called once, with
//! `worker_scope = "tool"` (N workers) against `worker_scope = "user"` (one worker for
//! all N, the baseline), in the same run. Memory is the total RSS and PSS of every
//! process in the workers' process groups (Node.js and, with the sandbox, its helper
//! processes), from `/proc/PID/smaps_rollup`; time is the first call of every tool, in
//! total (a worker start per tool with `tool`, one start with `user`).
//!
//! Run: `cargo bench -p toolhost-runtime --bench workers` as root (the sandbox on, as in
//! production). `-- --tools 1,4,8` sets the N to measure, `-- --rounds R` the rounds
//! (medians are reported), `-- --no-sandbox` measures the bare processes.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_catalog::{Catalog, Root, RootOrigin, Tool};
use toolhost_runtime::{
    CallRequest, Runtime, RuntimeConfig, ToolEnv, ToolRef, UserSpace, WorkerScope,
};
use toolhost_sandbox::SandboxConfig;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A small but not empty tool: a built-in module and some code of its own.
const INDEX_TS: &str = r#"import { createHash } from "node:crypto";

type P = { text: string };
const seen = new Map<string, string>();

export async function execute(_id: string, p: P) {
  const digest = createHash("sha256").update(p.text).digest("hex");
  seen.set(p.text, digest);
  return { content: [{ type: "text", text: `${p.text} ${digest.slice(0, 8)} ${seen.size}` }] };
}
"#;

fn tool_md(i: usize) -> String {
    format!(
        "---\nname: tool_{i}\ndescription: Hashes its input.\nversion: 1\ninputs:\n  text:\n    type: string\n    description: Text.\n---\n\n# tool_{i}\n"
    )
}

#[derive(Clone, Copy, Default)]
struct Memory {
    rss_kib: u64,
    pss_kib: u64,
    processes: usize,
}

/// Sums `smaps_rollup` over every process whose process group is one of `groups`.
fn memory_of(groups: &[i32]) -> Memory {
    let groups: HashSet<i32> = groups.iter().copied().collect();
    let mut m = Memory::default();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name (which may hold spaces): state, ppid, pgrp.
        let Some(pgrp) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(2))
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if !groups.contains(&pgrp) {
            continue;
        }
        let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) else {
            continue;
        };
        m.processes += 1;
        for line in rollup.lines() {
            let mut parts = line.split_whitespace();
            let (Some(key), Some(kib)) = (
                parts.next(),
                parts.next().and_then(|v| v.parse::<u64>().ok()),
            ) else {
                continue;
            };
            match key {
                "Rss:" => m.rss_kib += kib,
                "Pss:" => m.pss_kib += kib,
                _ => {}
            }
        }
    }
    m
}

struct Round {
    workers: usize,
    memory: Memory,
    /// The first call of every tool, in total, in milliseconds.
    first_calls_ms: f64,
}

fn round(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    tools: &[Arc<Tool>],
    env: &ToolEnv,
    scope: WorkerScope,
    sandboxed: bool,
) -> Round {
    let n = tools.len();
    let config = RuntimeConfig {
        cache_dir: Some(dir.join("cache")),
        worker_scope: scope,
        max_workers: n.max(1),
        max_workers_per_user: Some(n.max(1)),
        sandbox: if sandboxed {
            SandboxConfig::default()
        } else {
            SandboxConfig::disabled()
        },
        ..RuntimeConfig::default()
    };
    let user = UserSpace {
        user: "bench@example.com".into(),
        home: dir.join("home"),
    };
    rt.block_on(async {
        let runtime = Runtime::new(config, env.clone()).unwrap();
        runtime.warm_up().await;
        let mut first_calls_ms = 0.0;
        for (i, tool) in tools.iter().enumerate() {
            let req = CallRequest {
                tool: ToolRef::Folder(Arc::clone(tool)),
                args: json!({"text": format!("hello {i}")}),
                user: user.clone(),
                tool_call_id: None,
                timeout: None,
            };
            let t = Instant::now();
            let r = runtime.call(req).result().await;
            first_calls_ms += t.elapsed().as_secs_f64() * 1000.0;
            assert!(!r.is_error, "{r:?}");
        }
        // Let start-up garbage settle as it would between calls on a server.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let groups = runtime.worker_process_groups();
        let memory = memory_of(&groups);
        let workers = groups.len();
        runtime.shutdown().await;
        // The killed workers' memory is gone before the next round measures.
        let until = Instant::now() + Duration::from_secs(10);
        while memory_of(&groups).processes > 0 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Round {
            workers,
            memory,
            first_calls_ms,
        }
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn arg_after(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> std::process::ExitCode {
    // The sandbox starts this binary as its helper (the default helper is the running
    // executable): act as one rather than run the benchmark again.
    if let Some(code) = toolhost_sandbox::helper_main() {
        return code;
    }
    let sandboxed = !std::env::args().any(|a| a == "--no-sandbox");
    let counts: Vec<usize> = arg_after("--tools")
        .unwrap_or_else(|| "1,4,8,16".into())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let rounds: usize = arg_after("--rounds").map_or(3, |s| s.parse().unwrap());
    let largest = counts.iter().copied().max().unwrap_or(1);

    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // Sandboxed tools run as other uids: the root must be readable to them.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = dir.path().join("tools");
    for i in 0..largest {
        let folder = root.join(format!("tool_{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("TOOL.md"), tool_md(i)).unwrap();
        std::fs::write(folder.join("index.ts"), INDEX_TS).unwrap();
    }
    let catalog = Catalog::scan(vec![Root {
        path: root.clone(),
        origin: RootOrigin::Flag,
    }]);
    let all: Vec<Arc<Tool>> = (0..largest)
        .map(|i| Arc::clone(&catalog.get(&format!("tool_{i}")).unwrap().tool))
        .collect();
    let env = ToolEnv {
        tools_dirs: vec![root],
        ..ToolEnv::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    println!(
        "worker memory: N tools of one user, each called once; sandbox {}; median of {rounds} rounds",
        if sandboxed { "on" } else { "off" }
    );
    println!(
        "{:>3}  {:<5} {:>7} {:>10} {:>10} {:>10} {:>10} {:>14}",
        "N", "scope", "workers", "processes", "RSS MiB", "PSS MiB", "PSS ratio", "1st calls ms"
    );
    // Once for nothing: the transpile cache, the page cache and the sandbox's first start.
    round(
        &rt,
        dir.path(),
        &all[..1],
        &env,
        WorkerScope::Tool,
        sandboxed,
    );
    for &n in &counts {
        let tools = &all[..n];
        let mut results: [Vec<Round>; 2] = [Vec::new(), Vec::new()];
        for r in 0..rounds {
            // Alternate which scope goes first, so drift hits both alike.
            let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                let scope = [WorkerScope::User, WorkerScope::Tool][side];
                results[side].push(round(&rt, dir.path(), tools, &env, scope, sandboxed));
            }
        }
        let summary = |rs: &[Round]| {
            (
                rs[0].workers,
                median(rs.iter().map(|r| r.memory.processes as f64).collect()),
                median(
                    rs.iter()
                        .map(|r| r.memory.rss_kib as f64 / 1024.0)
                        .collect(),
                ),
                median(
                    rs.iter()
                        .map(|r| r.memory.pss_kib as f64 / 1024.0)
                        .collect(),
                ),
                median(rs.iter().map(|r| r.first_calls_ms).collect()),
            )
        };
        let base = summary(&results[0]);
        for (side, name) in [(0, "user"), (1, "tool")] {
            let (workers, processes, rss, pss, first) = summary(&results[side]);
            println!(
                "{n:>3}  {name:<5} {workers:>7} {processes:>10} {rss:>10.1} {pss:>10.1} {:>9.2}x {first:>14.1}",
                pss / base.3
            );
        }
        let tool = summary(&results[1]);
        if n > 1 {
            println!(
                "     each extra worker: +{:.1} MiB PSS, +{:.1} MiB RSS",
                (tool.3 - base.3) / (n - 1) as f64,
                (tool.2 - base.2) / (n - 1) as f64
            );
        }
    }
    std::process::ExitCode::SUCCESS
}
