//! Catalog scan benchmark: 10,000 generated tool folders.
//!
//! Measures, in one run so the figures are comparable on a noisy machine:
//! - the floor: listing the root and reading every TOOL.md, sequentially, doing nothing else;
//! - a cold scan: building a catalog from nothing (parse, validate, schemas, entry stat,
//!   hashing, name resolution), with the default thread pool and with one thread;
//! - an incremental re-scan after one TOOL.md changes;
//! - the watcher's end-to-end latency from a write to the published event (includes its
//!   50 ms quiet period, so it is reported, not judged).
//!
//! Run: `cargo bench -p toolhost-catalog --bench scan` (`-- --tools N` to change the count).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use toolhost_catalog::{Catalog, Root, RootOrigin, watch};

// The same allocator as the `toolhost` binary, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tools: usize = args
        .iter()
        .position(|a| a == "--tools")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let dir = std::env::temp_dir().join(format!("toolhost-bench-scan-{}", std::process::id()));
    let root = dir.join("tools");
    generate(&root, tools);
    let roots = vec![Root {
        path: root.clone(),
        origin: RootOrigin::Flag,
    }];

    // Warm the page cache once so every measurement below sees the same conditions.
    read_floor(&root);
    let rounds = 7;
    let mut floor = Vec::new();
    let mut cold = Vec::new();
    let mut cold_1 = Vec::new();
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for _ in 0..rounds {
        floor.push(time(|| {
            read_floor(&root);
        }));
        // Each catalog is dropped after its timing: freeing it is not part of a scan.
        let (t, c) = timed(|| Catalog::scan(roots.clone()));
        assert_eq!(c.len(), tools);
        cold.push(t);
        let (t, c) = timed(|| one_thread.install(|| Catalog::scan(roots.clone())));
        assert_eq!(c.len(), tools);
        cold_1.push(t);
    }
    let (floor, cold, cold_1) = (median(&mut floor), median(&mut cold), median(&mut cold_1));

    let mut catalog = Catalog::scan(roots.clone());
    let mut rescans = Vec::new();
    for i in 0..300u64 {
        let name = format!("tool_{:05}", i % tools as u64);
        write_tool_md(&root.join(&name), &name, 2 + i);
        let t = Instant::now();
        let events = catalog.rescan_folders([(0, name.clone())]);
        rescans.push(t.elapsed());
        assert_eq!(events.len(), 1, "one change event per edit");
    }
    rescans.sort();
    let p = |q: f64| rescans[((rescans.len() - 1) as f64 * q) as usize];

    let shared = Arc::new(RwLock::new(catalog));
    let watcher = watch::watch(Arc::clone(&shared)).unwrap();
    let mut rx = watcher.subscribe();
    let mut latencies = Vec::new();
    for i in 0..20u64 {
        let name = format!("tool_{:05}", (i * 37) % tools as u64);
        let t = Instant::now();
        write_tool_md(&root.join(&name), &name, 1000 + i);
        loop {
            match rx.try_recv() {
                Ok(_) => break,
                Err(_) if t.elapsed() < Duration::from_secs(10) => {
                    std::thread::sleep(Duration::from_micros(200))
                }
                Err(e) => panic!("no event: {e:?}"),
            }
        }
        latencies.push(t.elapsed());
    }
    latencies.sort();

    println!(
        "catalog scan benchmark: {tools} tool folders, median of {rounds} rounds, {} threads",
        rayon::current_num_threads()
    );
    println!(
        "  floor (list + read every TOOL.md, 1 thread)  {:>9.2} ms",
        ms(floor)
    );
    println!(
        "  cold scan (default pool)                     {:>9.2} ms   {:.2}x floor   (goal <= 3x)",
        ms(cold),
        ratio(cold, floor)
    );
    println!(
        "  cold scan (1 thread)                         {:>9.2} ms   {:.2}x floor",
        ms(cold_1),
        ratio(cold_1, floor)
    );
    println!(
        "  incremental re-scan of one edited TOOL.md    p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms   (goal < 5 ms)",
        ms(p(0.5)),
        ms(p(0.99)),
        ms(p(1.0))
    );
    println!(
        "  watcher, write -> event (incl. 50 ms quiet)  p50 {:.1} ms  max {:.1} ms",
        ms(latencies[latencies.len() / 2]),
        ms(latencies[latencies.len() - 1])
    );
    drop(watcher);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let out = f();
    (t.elapsed(), out)
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn read_floor(root: &Path) -> usize {
    let mut bytes = 0;
    for entry in std::fs::read_dir(root).unwrap() {
        let path: PathBuf = entry.unwrap().path().join("TOOL.md");
        bytes += std::fs::read(path).unwrap().len();
    }
    bytes
}

fn generate(root: &Path, n: usize) {
    for i in 0..n {
        let name = format!("tool_{i:05}");
        let dir = root.join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        write_tool_md(&dir, &name, 1);
        std::fs::write(
            dir.join("index.ts"),
            "export async function execute() { return { content: [] }; }\n",
        )
        .unwrap();
    }
}

/// A realistic TOOL.md: four inputs of every type, a few paragraphs of documentation.
fn write_tool_md(dir: &Path, name: &str, version: u64) {
    let md = format!(
        "---\nname: {name}\nlabel: Tool {name}\ndescription: Looks things up in the {name} service. Use it when the user asks about {name} records.\nversion: {version}\nlanguage: typescript\ninputs:\n  query:\n    type: string\n    description: What to look for.\n  limit:\n    type: number\n    description: Maximum number of results.\n    optional: true\n    default: 10\n  mode:\n    type: enum\n    values: fast,thorough\n    description: Search mode.\n    optional: true\n  token:\n    type: string\n    description: API token override.\n    optional: true\n    sensitive: true\n---\n\n# {name}\n\nSearches the service and returns matching records.\n\n## Usage\n\nCall with `query`. Use `mode=thorough` for exhaustive results.\n\n## Errors\n\nReturns an error when the service is unreachable.\n"
    );
    std::fs::write(dir.join("TOOL.md"), md).unwrap();
}
