//! What the call log adds to a warm call, and whether it loses rows under load.
//!
//! 1. Warm calls of a trivial TypeScript tool through the runtime, each followed by its
//!    call-log record: alternately into the store's queue and into the tracing log (what a
//!    host without a store does), so both meet the same machine noise. Reported: p50 and
//!    p99 of each, and the difference of the p50s.
//! 2. 32 concurrent clients making calls, every one recorded: rows written and lost.
//!
//! On SQLite in a temporary file, and on PostgreSQL when `TOOLHOST_TEST_DATABASE_URL` is
//! set (`bash scripts/test` sets it; or source `scripts/postgres.sh`).
//! Run: `cargo bench -p toolhost-store --bench audit` (`-- --quick` for fewer calls).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use toolhost_catalog::{Catalog, Root, RootOrigin};
use toolhost_host::store::{CallLog, CallOutcome, CallRecord, TracingCallLog};
use toolhost_runtime::{CallRequest, Runtime, RuntimeConfig, ToolEnv, ToolRef, UserSpace};
use toolhost_store::{CallQueue, Location, QueueOptions, Store};

const TOOL_MD: &str = "---\nname: trivial\ndescription: Returns its input.\nversion: 1\ninputs:\n  text:\n    type: string\n    description: Text.\n  key:\n    type: string\n    description: A secret.\n    sensitive: true\n---\n\n# trivial\n\nEchoes.\n";
const INDEX_TS: &str = "type P = { text: string };\nexport async function execute(_id: string, p: P) {\n  return { content: [{ type: 'text', text: p.text }] };\n}\n";

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (warm_n, per_client) = if quick { (1000, 50) } else { (5000, 300) };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tools");
    std::fs::create_dir_all(root.join("trivial")).unwrap();
    std::fs::write(root.join("trivial/TOOL.md"), TOOL_MD).unwrap();
    std::fs::write(root.join("trivial/index.ts"), INDEX_TS).unwrap();
    let catalog = Catalog::scan(vec![Root {
        path: root,
        origin: RootOrigin::Flag,
    }]);
    let tool = Arc::clone(&catalog.get("trivial").unwrap().tool);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut engines = vec![("SQLite", Location::Sqlite(dir.path().join("toolhost.db")))];
    match std::env::var("TOOLHOST_TEST_DATABASE_URL") {
        Ok(url) => engines.push(("PostgreSQL", Location::Postgres(url))),
        Err(_) => eprintln!(
            "(PostgreSQL skipped: TOOLHOST_TEST_DATABASE_URL is not set; source scripts/postgres.sh)"
        ),
    }
    println!("call-log benchmark ({warm_n} warm calls per side, 32 clients × {per_client} calls)");
    for (name, location) in engines {
        let (tool, home) = (Arc::clone(&tool), dir.path().join("home"));
        let cache = dir.path().join("cache");
        rt.block_on(rt.spawn(async move {
            let store = Store::open(location, None).await.unwrap();
            let queue = CallQueue::start(store.clone(), QueueOptions::default());
            let config = RuntimeConfig {
                cache_dir: Some(cache),
                sandbox: toolhost_sandbox::SandboxConfig::disabled(),
                ..RuntimeConfig::default()
            };
            let runtime = Runtime::new(config, ToolEnv::default()).unwrap();
            let user = UserSpace {
                user: "bench".into(),
                home,
            };
            let call = |runtime: Runtime, log: Arc<dyn CallLog>, tool, user: UserSpace| async move {
                let args = json!({"text": "hi", "key": "s3cret"});
                let started = (SystemTime::now(), Instant::now());
                let arguments = CallRecord::arguments_for_log(&args, &["key".to_string()]);
                let req = CallRequest {
                    tool: ToolRef::Folder(tool),
                    args,
                    user: user.clone(),
                    tool_call_id: None,
                    timeout: None,
                };
                let r = runtime.call(req).result().await;
                assert_eq!(r.joined_text(), "hi");
                log.record(CallRecord {
                    id: None,
                    tool_set: None,
                    user: user.user,
                    token: Some("0123456789ab".into()),
                    agent: None,
                    tool: "trivial".into(),
                    surface: "mcp-http",
                    started: started.0,
                    duration: started.1.elapsed(),
                    outcome: CallOutcome::Ok,
                    error: None,
                    result_bytes: 64,
                    arguments,
                    result: None,
                });
                started.1.elapsed()
            };
            let with_store: Arc<dyn CallLog> = Arc::new(queue.clone());
            let without: Arc<dyn CallLog> = Arc::new(TracingCallLog);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for i in 0..warm_n + 200 {
                let t_store =
                    call(runtime.clone(), Arc::clone(&with_store), Arc::clone(&tool), user.clone()).await;
                let t_plain =
                    call(runtime.clone(), Arc::clone(&without), Arc::clone(&tool), user.clone()).await;
                if i >= 200 {
                    a.push(t_store);
                    b.push(t_plain);
                }
            }
            let (p50a, p99a) = percentiles(&mut a);
            let (p50b, p99b) = percentiles(&mut b);
            println!("{name}:");
            println!("  warm call + tracing log      p50 {:>8.3} ms  p99 {:>8.3} ms", ms(p50b), ms(p99b));
            println!("  warm call + store's call log p50 {:>8.3} ms  p99 {:>8.3} ms", ms(p50a), ms(p99a));
            println!(
                "  the call log adds            p50 {:>8.3} ms  ({:.2}x)   (goal: <= 0.1 ms)",
                ms(p50a) - ms(p50b),
                p50a.as_secs_f64() / p50b.as_secs_f64()
            );

            // 32 clients at once.
            let before = queue.counts().accepted.load(std::sync::atomic::Ordering::Relaxed);
            let started = Instant::now();
            let mut clients = Vec::new();
            for c in 0..32 {
                let (runtime, log, tool) = (runtime.clone(), Arc::clone(&with_store), Arc::clone(&tool));
                let user = UserSpace {
                    user: format!("bench{c}"),
                    home: user.home.parent().unwrap().join(format!("home{c}")),
                };
                clients.push(tokio::spawn(async move {
                    for _ in 0..per_client {
                        call(runtime.clone(), Arc::clone(&log), Arc::clone(&tool), user.clone()).await;
                    }
                }));
            }
            for c in clients {
                c.await.unwrap();
            }
            let calls_took = started.elapsed();
            let flushed = queue.flush(Duration::from_secs(60)).await;
            let accepted = queue.counts().accepted.load(std::sync::atomic::Ordering::Relaxed) - before;
            let lost = queue.counts().lost.load(std::sync::atomic::Ordering::Relaxed);
            println!(
                "  32 clients: {} calls in {:.2} s ({:.0} calls/s); rows queued {accepted}, lost {lost}, all written: {flushed}",
                32 * per_client,
                calls_took.as_secs_f64(),
                (32 * per_client) as f64 / calls_took.as_secs_f64()
            );
            runtime.shutdown().await;
            store.close().await;
        }))
        .unwrap();
    }
}

fn percentiles(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[v.len() * 99 / 100])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
