//! The cost of a turn with 20 Platypus plugin tool sets, 5 of them factories (one per
//! plugin, each called on its plugin's warm worker and registering a closer), against a
//! turn of the same plugins' 15 static sets alone (the baseline), alternated turn by turn.
//!
//! Goal: resolving the 20-set turn takes at most 5 ms (p50). Ending it (the 5 factories'
//! closers, one worker round trip each) is reported beside it.
//!
//! Run: `cargo bench -p toolhost-host --bench plugin_turns` (`-- --quick` for fewer rounds).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use toolhost_host::plugins::{RuntimeRunner, load_all, no_secrets};
use toolhost_runtime::{Runtime, RuntimeConfig, ToolEnv};
use toolhost_sandbox::SandboxConfig;
use toolhost_toolsets::{
    BootOptions, CorePlugins, Grant, PluginRunner, Registry, ToolsetsConfig, TurnRequest,
};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PLUGINS: usize = 5;
const SETS_PER_PLUGIN: usize = 4;

/// Plugin `n`: set `s0` a factory (async, registers a closer), `s1`..`s3` static maps;
/// three zod tools each.
fn plugin_source(n: usize) -> String {
    let tools = |set: usize| {
        (0..3)
            .map(|t| {
                format!(
                    "s{set}_t{t}: tool({{ description: 'Tool {t} of set {set}.', inputSchema: z.object({{ q: z.string().describe('A query.'), n: z.number().int().default(1) }}), execute: async ({{ q }}) => q }})"
                )
            })
            .collect::<Vec<_>>()
            .join(",\n")
    };
    let mut sets = vec![format!(
        "{{ id: 's0', name: 'Set 0', category: 'Bench', tools: async (ctx, plugin) => {{ ctx.registerCloser(() => {{}}); return {{ {} }}; }} }}",
        tools(0)
    )];
    for s in 1..SETS_PER_PLUGIN {
        sets.push(format!(
            "{{ id: 's{s}', name: 'Set {s}', category: 'Bench', tools: {{ {} }} }}",
            tools(s)
        ));
    }
    format!(
        "import {{ tool }} from 'ai';\nimport {{ z }} from 'zod';\nexport const plugin = {{ name: 'bench-{n}', version: '1.0.0', apiVersion: 3, contributes: {{ toolSets: [{}] }} }};\n",
        sets.join(",\n")
    )
}

fn main() -> std::process::ExitCode {
    if let Some(code) = toolhost_sandbox::helper_main() {
        return code;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let n = if quick { 200 } else { 2000 };
    let dir = tempfile::tempdir().unwrap();
    let mut specs = Vec::new();
    for p in 0..PLUGINS {
        let pkg = dir.path().join(format!("bench-{p}"));
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            format!(
                r#"{{"name":"bench-{p}","version":"1.0.0","type":"module","main":"index.js"}}"#
            ),
        )
        .unwrap();
        std::fs::write(pkg.join("index.js"), plugin_source(p)).unwrap();
        specs.push(pkg.display().to_string());
    }
    let config = RuntimeConfig {
        cache_dir: Some(dir.path().join("cache")),
        sandbox: SandboxConfig::disabled(),
        ..RuntimeConfig::default()
    };
    let env = ToolEnv {
        homes: Some(dir.path().join("homes")),
        ..ToolEnv::default()
    };
    let data = dir.path().join("homes");
    std::fs::create_dir_all(&data).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut full, mut statics, mut ends) = rt
        .block_on(rt.spawn(async move {
            let runtime = Runtime::new(config, env).unwrap();
            let runner: Arc<dyn PluginRunner> = Arc::new(RuntimeRunner::new(
                runtime.clone(),
                Some(data),
                Some("bench".into()),
            ));
            let third_party = load_all(
                &specs,
                std::path::Path::new("."),
                &Default::default(),
                &runner,
                &no_secrets,
            )
            .await
            .unwrap();
            let registry = Registry::boot(
                CorePlugins::new(),
                BootOptions {
                    config: ToolsetsConfig::default(),
                    third_party,
                    ..BootOptions::default()
                },
            )
            .unwrap();
            let all: Vec<Grant> = (0..PLUGINS)
                .flat_map(|p| (0..SETS_PER_PLUGIN).map(move |s| (p, s)))
                .map(|(p, s)| Grant::tool_set(&format!("bench-{p}.s{s}")))
                .collect();
            let only_static: Vec<Grant> = (0..PLUGINS)
                .flat_map(|p| (1..SETS_PER_PLUGIN).map(move |s| (p, s)))
                .map(|(p, s)| Grant::tool_set(&format!("bench-{p}.s{s}")))
                .collect();
            let req = TurnRequest {
                user_id: Some("bench".into()),
                ..TurnRequest::default()
            };
            let (mut full, mut statics, mut ends) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..n + 50 {
                let t = Instant::now();
                let turn = registry.resolve_grants("bench", &all, &req).await;
                let resolved = t.elapsed();
                assert_eq!(
                    turn.tools.len(),
                    PLUGINS * SETS_PER_PLUGIN * 3,
                    "{:?}",
                    turn.warnings
                );
                let t = Instant::now();
                let report = turn.end().await;
                let ended = t.elapsed();
                assert!(report.failed.is_empty(), "{report:?}");
                let t = Instant::now();
                let turn = registry.resolve_grants("bench", &only_static, &req).await;
                let baseline = t.elapsed();
                assert_eq!(turn.tools.len(), PLUGINS * (SETS_PER_PLUGIN - 1) * 3);
                turn.end().await;
                if i >= 50 {
                    full.push(resolved);
                    ends.push(ended);
                    statics.push(baseline);
                }
            }
            runtime.shutdown().await;
            (full, statics, ends)
        }))
        .unwrap();
    let (f50, f99) = pct(&mut full);
    let (s50, s99) = pct(&mut statics);
    let (e50, e99) = pct(&mut ends);
    println!(
        "plugin turn benchmark ({n} turns: {PLUGINS} plugins x {SETS_PER_PLUGIN} sets, 3 tools each; one factory per plugin)"
    );
    println!(
        "  20 sets, 5 factories: resolve     p50 {:>8.3} ms  p99 {:>8.3} ms   (goal: p50 ≤ 5 ms)",
        ms(f50),
        ms(f99)
    );
    println!(
        "  the 15 static sets alone          p50 {:>8.3} ms  p99 {:>8.3} ms   (baseline)",
        ms(s50),
        ms(s99)
    );
    println!(
        "  ratio                             p50 {:>8.2}x",
        f50.as_secs_f64() / s50.as_secs_f64()
    );
    println!(
        "  ending the turn (5 closers)       p50 {:>8.3} ms  p99 {:>8.3} ms",
        ms(e50),
        ms(e99)
    );
    std::process::ExitCode::SUCCESS
}

fn pct(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[(v.len() - 1) * 99 / 100])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
