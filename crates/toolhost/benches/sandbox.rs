//! What the sandbox costs: the same calls with it and without it, interleaved in one run.
//!
//! 1. Cold call: a call of a trivial TypeScript tool that must start a Node.js worker
//!    (with the sandbox: hand a spare helper its spec, build the sandbox), on a started
//!    runtime; and the same right after the runtime was created, before its spare
//!    helpers are ready. Goal: < 5 ms added.
//! 2. Warm call: the same tool on a warm worker. Goal: < 5 % added.
//! 3. A Python tool (a new process every call).
//!
//! Run: `cargo bench -p toolhost --bench sandbox` (`-- --quick` for fewer rounds). Set
//! `TOOLHOST_BENCH_CGROUPS=0` to measure without cgroups.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_catalog::{Catalog, Root, RootOrigin, Tool};
use toolhost_runtime::{CallRequest, Runtime, RuntimeConfig, ToolEnv, ToolRef, UserSpace};
use toolhost_sandbox::SandboxConfig;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TS_MD: &str = "---\nname: trivial\ndescription: Returns its input.\nversion: 1\ninputs:\n  text:\n    type: string\n    description: Text.\n---\n\n# trivial\n";
const TS: &str = "export async function execute(_id: string, p: { text: string }) {\n  return { content: [{ type: 'text', text: p.text }] };\n}\n";
const PY_MD: &str = "---\nname: trivial_py\ndescription: Returns its input.\nversion: 1\nlanguage: python\ninputs:\n  text:\n    type: string\n    description: Text.\n---\n\n# trivial_py\n";
const PY: &str = "import json, sys\nprint(json.load(sys.stdin)['text'])\n";

struct Setup {
    dir: tempfile::TempDir,
    ts: Arc<Tool>,
    py: Arc<Tool>,
    env: ToolEnv,
}

fn setup() -> Setup {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = dir.path().join("tools");
    for (name, md, file, code) in [
        ("trivial", TS_MD, "index.ts", TS),
        ("trivial_py", PY_MD, "index.py", PY),
    ] {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join("TOOL.md"), md).unwrap();
        std::fs::write(root.join(name).join(file), code).unwrap();
    }
    let catalog = Catalog::scan(vec![Root {
        path: root.clone(),
        origin: RootOrigin::Flag,
    }]);
    let get = |n: &str| Arc::clone(&catalog.get(n).unwrap().tool);
    Setup {
        ts: get("trivial"),
        py: get("trivial_py"),
        env: ToolEnv {
            tools_dirs: vec![root],
            ..ToolEnv::default()
        },
        dir,
    }
}

fn config(s: &Setup, sandboxed: bool) -> RuntimeConfig {
    let sandbox = if sandboxed {
        SandboxConfig {
            helper: Some(env!("CARGO_BIN_EXE_toolhost").into()),
            cgroups: std::env::var("TOOLHOST_BENCH_CGROUPS").as_deref() != Ok("0"),
            ..SandboxConfig::default()
        }
    } else {
        SandboxConfig::disabled()
    };
    RuntimeConfig {
        cache_dir: Some(s.dir.path().join("cache")),
        sandbox,
        ..RuntimeConfig::default()
    }
}

fn request(s: &Setup, tool: &Arc<Tool>) -> CallRequest {
    CallRequest {
        tool: ToolRef::Folder(Arc::clone(tool)),
        args: json!({"text": "hi"}),
        user: UserSpace {
            user: "bench".into(),
            home: s.dir.path().join("home"),
        },
        tool_call_id: None,
        timeout: None,
    }
}

async fn timed(runtime: &Runtime, req: CallRequest) -> Duration {
    let t = Instant::now();
    let r = runtime.call(req).result().await;
    let took = t.elapsed();
    assert_eq!(r.joined_text(), "hi", "{r:?}");
    took
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (cold_n, warm_n, py_n) = if quick { (8, 500, 10) } else { (60, 3000, 40) };
    let s = setup();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    // Interleaved, so that drift on a shared machine hits both sides alike. A cold call
    // is one that must start a new worker: on a started host (its spare sandbox helpers
    // ready), and, for the record, right after the runtime was created.
    let mut cold = [Vec::new(), Vec::new()];
    let mut first = [Vec::new(), Vec::new()];
    for i in 0..cold_n + 2 {
        for (side, sandboxed) in [(0, false), (1, true)] {
            let (started, at_once) = rt.block_on(async {
                let runtime = Runtime::new(config(&s, sandboxed), s.env.clone()).unwrap();
                let at_once = timed(&runtime, request(&s, &s.ts)).await;
                runtime.shutdown().await;
                let runtime = Runtime::new(config(&s, sandboxed), s.env.clone()).unwrap();
                runtime.warm_up().await;
                let started = timed(&runtime, request(&s, &s.ts)).await;
                runtime.shutdown().await;
                (started, at_once)
            });
            if i >= 2 {
                cold[side].push(started);
                first[side].push(at_once);
            }
        }
    }

    let mut warm = [Vec::new(), Vec::new()];
    let mut py = [Vec::new(), Vec::new()];
    rt.block_on(async {
        let runtimes = [
            Runtime::new(config(&s, false), s.env.clone()).unwrap(),
            Runtime::new(config(&s, true), s.env.clone()).unwrap(),
        ];
        for r in &runtimes {
            r.warm_up().await;
            for _ in 0..200 {
                timed(r, request(&s, &s.ts)).await;
            }
        }
        for _ in 0..warm_n / 100 {
            for (side, r) in runtimes.iter().enumerate() {
                for _ in 0..100 {
                    warm[side].push(timed(r, request(&s, &s.ts)).await);
                }
            }
        }
        for _ in 0..py_n {
            for (side, r) in runtimes.iter().enumerate() {
                py[side].push(timed(r, request(&s, &s.py)).await);
            }
        }
        for r in &runtimes {
            r.shutdown().await;
        }
    });

    println!(
        "sandbox benchmark ({cold_n} cold starts, {warm_n} warm calls, {py_n} Python calls per side)"
    );
    println!(
        "                          without p50 / p99        with p50 / p99         added (p50)            paired"
    );
    report("cold call (TS)", &mut cold, "goal: < 5 ms added");
    report(
        "first call after start",
        &mut first,
        "(spares not ready yet)",
    );
    report("warm call (TS)", &mut warm, "goal: < 5 % added");
    report("Python call (process)", &mut py, "");
}

fn report(what: &str, sides: &mut [Vec<Duration>; 2], goal: &str) {
    // Samples are taken in pairs, one of each side back to back: the median of the
    // pairs' differences shrugs off the machine's drift better than a difference of
    // medians.
    let mut paired: Vec<f64> = sides[0]
        .iter()
        .zip(&sides[1])
        .map(|(a, b)| ms(*b) - ms(*a))
        .collect();
    paired.sort_by(f64::total_cmp);
    let paired = paired.get(paired.len() / 2).copied().unwrap_or(f64::NAN);
    let [(a50, a99), (b50, b99)] = [pct(&mut sides[0]), pct(&mut sides[1])];
    let added = ms(b50) - ms(a50);
    let ratio = b50.as_secs_f64() / a50.as_secs_f64();
    println!(
        "  {what:<24} {:>8.3} / {:>8.3} ms  {:>8.3} / {:>8.3} ms  {added:>+8.3} ms ({:>+6.1} %)  {paired:>+8.3} ms  {goal}",
        ms(a50),
        ms(a99),
        ms(b50),
        ms(b99),
        (ratio - 1.0) * 100.0
    );
}

fn pct(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[(v.len() - 1) * 99 / 100])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
