//! Call benchmarks, each against a floor measured in the same run.
//!
//! 1. Warm round trip of a trivial TypeScript tool through the library API, against the
//!    same `execute` called in-process in one Node.js process (the floor).
//! 2. Cold first call (new runtime: start a worker, load and transpile the tool), against
//!    `node -e 0`.
//!
//! Run: `cargo bench -p toolhost-runtime --bench calls` (`-- --quick` for fewer rounds).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_catalog::{Catalog, Root, RootOrigin};
use toolhost_runtime::{CallRequest, Runtime, RuntimeConfig, ToolEnv, ToolRef, UserSpace};
use toolhost_sandbox::SandboxConfig;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TOOL_MD: &str = "---\nname: trivial\ndescription: Returns its input.\nversion: 1\ninputs:\n  text:\n    type: string\n    description: Text.\n---\n\n# trivial\n\nEchoes.\n";
const INDEX_TS: &str = "type P = { text: string };\nexport async function execute(_id: string, p: P) {\n  return { content: [{ type: 'text', text: p.text }] };\n}\n";

fn main() -> std::process::ExitCode {
    // This binary is not `toolhost`: should a sandbox ever start it as its helper, it must
    // act as one rather than run the benchmark again (and again).
    if let Some(code) = toolhost_sandbox::helper_main() {
        return code;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let (warm_n, mut cold_n) = if quick { (500, 5) } else { (5000, 20) };
    if std::env::args().any(|a| a == "--warm-only") {
        cold_n = 1;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tools");
    std::fs::create_dir_all(root.join("trivial")).unwrap();
    std::fs::write(root.join("trivial/TOOL.md"), TOOL_MD).unwrap();
    std::fs::write(root.join("trivial/index.ts"), INDEX_TS).unwrap();
    let catalog = Catalog::scan(vec![Root {
        path: root.clone(),
        origin: RootOrigin::Flag,
    }]);
    let tool = Arc::clone(&catalog.get("trivial").unwrap().tool);
    let user = UserSpace {
        user: "bench".into(),
        home: dir.path().join("home"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    // 1. Warm calls.
    let cache = dir.path().join("cache");
    // The runtime's own cost; what the sandbox adds is `toolhost`'s `sandbox` benchmark.
    let config = RuntimeConfig {
        cache_dir: Some(cache.clone()),
        sandbox: SandboxConfig::disabled(),
        ..RuntimeConfig::default()
    };
    // Run on a worker task, as a server's request handler would. Each warm call alternates
    // with a raw round trip to a bare Node.js echo, so both meet the same machine noise.
    let (tool2, user2, config2, dir2) = (
        Arc::clone(&tool),
        user.clone(),
        config.clone(),
        dir.path().to_path_buf(),
    );
    let (mut warm, mut pipe) = rt
        .block_on(rt.spawn(async move {
            let (tool, user, config) = (tool2, user2, config2);
            let runtime = Runtime::new(config.clone(), ToolEnv::default()).unwrap();
            let mut echo = Echo::start(&dir2).await;
            let mut times = Vec::with_capacity(warm_n);
            let mut pipe = Vec::with_capacity(warm_n);
            for i in 0..warm_n + 200 {
                let req = CallRequest {
                    tool: ToolRef::Folder(Arc::clone(&tool)),
                    args: json!({"text": "hi"}),
                    user: user.clone(),
                    tool_call_id: None,
                    timeout: None,
                };
                let t = Instant::now();
                let r = runtime.call(req).result().await;
                let took = t.elapsed();
                assert_eq!(r.joined_text(), "hi");
                let raw = echo.round_trip().await;
                if i >= 200 {
                    times.push(took);
                    pipe.push(raw);
                }
            }
            runtime.shutdown().await;
            (times, pipe)
        }))
        .unwrap();
    let mut floor = in_process_floor(&cache, &root.join("trivial/index.ts"), warm_n);

    // 2. Cold first calls, each with a fresh runtime (the transpile cache is kept, as on
    // any start after the first), against `node -e 0`.
    let mut cold = Vec::new();
    let mut node = Vec::new();
    for _ in 0..cold_n {
        let t = Instant::now();
        assert!(
            Command::new("node")
                .args(["-e", "0"])
                .status()
                .unwrap()
                .success()
        );
        node.push(t.elapsed());
        cold.push(rt.block_on(async {
            let runtime = Runtime::new(config.clone(), ToolEnv::default()).unwrap();
            let req = CallRequest {
                tool: ToolRef::Folder(Arc::clone(&tool)),
                args: json!({"text": "hi"}),
                user: user.clone(),
                tool_call_id: None,
                timeout: None,
            };
            let t = Instant::now();
            let r = runtime.call(req).result().await;
            let took = t.elapsed();
            assert_eq!(r.joined_text(), "hi");
            runtime.shutdown().await;
            took
        }));
    }

    let (w50, w99) = pct(&mut warm);
    let (f50, f99) = pct(&mut floor);
    let (p50, p99) = pct(&mut pipe);
    let (c50, c99) = pct(&mut cold);
    let (n50, n99) = pct(&mut node);
    println!("runtime call benchmark ({warm_n} warm calls, {cold_n} cold starts)");
    println!(
        "  warm call, library API           p50 {:>8.3} ms  p99 {:>8.3} ms",
        ms(w50),
        ms(w99)
    );
    println!(
        "  floor: execute in-process (Node) p50 {:>8.3} ms  p99 {:>8.3} ms",
        ms(f50),
        ms(f99)
    );
    println!(
        "  overhead over the floor          p50 {:>8.3} ms  p99 {:>8.3} ms   (goal: p50 < 0.15 ms)",
        ms(w50.saturating_sub(f50)),
        ms(w99.saturating_sub(f99))
    );
    println!(
        "  context: raw socket round trip   p50 {:>8.3} ms  p99 {:>8.3} ms   (Tokio <-> a bare Node.js echo, interleaved)",
        ms(p50),
        ms(p99)
    );
    println!(
        "  warm call - raw round trip       p50 {:>8.3} ms",
        ms(w50.saturating_sub(p50))
    );
    println!(
        "  cold first call                  p50 {:>8.3} ms  p99 {:>8.3} ms",
        ms(c50),
        ms(c99)
    );
    println!(
        "  node -e 0                        p50 {:>8.3} ms  p99 {:>8.3} ms",
        ms(n50),
        ms(n99)
    );
    println!(
        "  cold / node -e 0                 p50 {:>8.2}x    (goal: within 1.3x)",
        c50.as_secs_f64() / n50.as_secs_f64()
    );
    std::process::ExitCode::SUCCESS
}

/// A Node.js process that only echoes what it reads: a frame's round trip to it is the
/// cost of the transport alone on this machine.
struct Echo {
    stream: tokio::net::UnixStream,
    _child: tokio::process::Child,
}

const FRAME: &[u8] = br#"{"type":"call","id":1,"entry":"/x/index.ts","params":{"text":"hi"}}"#;

impl Echo {
    async fn start(dir: &Path) -> Echo {
        let script = dir.join("echo.mjs");
        let echo = "import net from 'node:net';\nconst s = net.createConnection(process.argv[2]);\ns.on('data', (d) => s.write(d));\n";
        std::fs::write(&script, echo).unwrap();
        let sock = dir.join("echo.sock");
        let listener = tokio::net::UnixListener::bind(&sock).unwrap();
        let child = tokio::process::Command::new("node")
            .arg(&script)
            .arg(&sock)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        Echo {
            stream,
            _child: child,
        }
    }

    async fn round_trip(&mut self) -> Duration {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buf = [0u8; FRAME.len()];
        let t = Instant::now();
        self.stream.write_all(FRAME).await.unwrap();
        self.stream.read_exact(&mut buf).await.unwrap();
        t.elapsed()
    }
}

/// Times `execute` called directly in one Node.js process, loaded through the same module
/// hooks (so it is the same transpiled code).
fn in_process_floor(cache: &Path, entry: &Path, n: usize) -> Vec<Duration> {
    let harness_dir = std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("harness-"))
        .unwrap()
        .path();
    // The benchmark's one user has the one directory of transpiled code.
    let transpiled = std::fs::read_dir(cache.join("ts"))
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .unwrap()
        .path();
    let script = format!(
        r#"import {{ register }} from 'node:module';
import {{ pathToFileURL }} from 'node:url';
register(pathToFileURL({hooks:?}).href, {{ data: {{ cacheDir: {ts:?} }} }});
const {{ execute }} = await import(pathToFileURL({entry:?}).href);
const times = [];
for (let i = 0; i < {total}; i++) {{
  const t = process.hrtime.bigint();
  const r = await execute('id', {{ text: 'hi' }});
  const took = process.hrtime.bigint() - t;
  if (r.content[0].text !== 'hi') throw new Error('wrong');
  if (i >= 200) times.push(Number(took));
}}
console.log(JSON.stringify(times));"#,
        hooks = harness_dir.join("hooks.mjs").display().to_string(),
        ts = transpiled.display().to_string(),
        entry = entry.display().to_string(),
        total = n + 200,
    );
    let file = cache.join("floor.mjs");
    std::fs::write(&file, script).unwrap();
    let out = Command::new("node").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nanos: Vec<u64> = serde_json::from_slice(&out.stdout).unwrap();
    nanos.into_iter().map(Duration::from_nanos).collect()
}

fn pct(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[(v.len() - 1) * 99 / 100])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
