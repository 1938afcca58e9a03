//! A warm call of a Platypus plugin's tool (an AI SDK `tool()` with a zod schema, Toolhost's
//! vendored `ai` and `zod`) against a warm call of the equivalent folder tool (TOOL.md and
//! `execute`), alternated call by call so both meet the same machine noise.
//!
//! Goal: the plugin call within 10% of the folder call (p50).
//!
//! Run: `cargo bench -p toolhost-runtime --bench plugins` (`-- --quick` for fewer rounds).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_catalog::{Catalog, Root, RootOrigin};
use toolhost_runtime::{
    CallRequest, DescribedPlugin, PluginModule, PluginOp, PluginTool, Runtime, RuntimeConfig,
    ToolEnv, ToolRef, UserSpace,
};
use toolhost_sandbox::SandboxConfig;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TOOL_MD: &str = "---\nname: echo\ndescription: Returns its input.\nversion: 1\ninputs:\n  text:\n    type: string\n    description: Text to return.\n---\n\n# echo\n\nEchoes.\n";
const INDEX_JS: &str = "export async function execute(_id, p) {\n  return p.text;\n}\n";
const PLUGIN_JS: &str = r#"import { tool } from 'ai';
import { z } from 'zod';

export const plugin = {
  name: 'bench',
  version: '1.0.0',
  apiVersion: 3,
  contributes: {
    toolSets: [{
      id: 'echo',
      name: 'Echo',
      category: 'Bench',
      tools: {
        echo: tool({
          description: 'Returns its input.',
          inputSchema: z.object({ text: z.string().describe('Text to return.') }),
          execute: async ({ text }) => text,
        }),
      },
    }],
  },
};
"#;

fn main() -> std::process::ExitCode {
    if let Some(code) = toolhost_sandbox::helper_main() {
        return code;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let n = if quick { 500 } else { 5000 };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tools");
    std::fs::create_dir_all(root.join("echo")).unwrap();
    std::fs::write(root.join("echo/TOOL.md"), TOOL_MD).unwrap();
    std::fs::write(root.join("echo/index.js"), INDEX_JS).unwrap();
    let plugin_dir = dir.path().join("plugin");
    std::fs::create_dir_all(&plugin_dir).unwrap();
    std::fs::write(
        plugin_dir.join("package.json"),
        r#"{"name":"bench","version":"1.0.0","type":"module","main":"index.js"}"#,
    )
    .unwrap();
    std::fs::write(plugin_dir.join("index.js"), PLUGIN_JS).unwrap();
    let catalog = Catalog::scan(vec![Root {
        path: root.clone(),
        origin: RootOrigin::Flag,
    }]);
    let folder = Arc::clone(&catalog.get("echo").unwrap().tool);
    let user = UserSpace {
        user: "bench".into(),
        home: dir.path().join("home"),
    };
    let config = RuntimeConfig {
        cache_dir: Some(dir.path().join("cache")),
        sandbox: SandboxConfig::disabled(),
        ..RuntimeConfig::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut folder_times, mut plugin_times) = rt
        .block_on(rt.spawn(async move {
            let runtime = Runtime::new(config, ToolEnv::default()).unwrap();
            let module = Arc::new(
                PluginModule::at("bench", &plugin_dir.join("index.js"))
                    .unwrap()
                    .named("bench"),
            );
            let described = runtime
                .executor()
                .plugin_op(&user, &module, &PluginOp::Load, Duration::from_secs(60))
                .await
                .unwrap();
            let described: DescribedPlugin = serde_json::from_value(described).unwrap();
            let tool = described.tool_sets[0].tools[0].clone();
            let plugin = Arc::new(PluginTool::new(Arc::clone(&module), "echo", tool, None));
            let call = |tool: ToolRef| CallRequest {
                tool,
                args: json!({"text": "hi"}),
                user: user.clone(),
                tool_call_id: None,
                timeout: None,
            };
            let mut folder_times = Vec::with_capacity(n);
            let mut plugin_times = Vec::with_capacity(n);
            for i in 0..n + 200 {
                let t = Instant::now();
                let r = runtime
                    .call(call(ToolRef::Folder(Arc::clone(&folder))))
                    .result()
                    .await;
                let f = t.elapsed();
                assert_eq!(r.joined_text(), "hi");
                let t = Instant::now();
                let r = runtime
                    .call(call(ToolRef::Plugin(Arc::clone(&plugin))))
                    .result()
                    .await;
                let p = t.elapsed();
                assert_eq!(r.joined_text(), "hi", "{r:?}");
                if i >= 200 {
                    folder_times.push(f);
                    plugin_times.push(p);
                }
            }
            runtime.shutdown().await;
            (folder_times, plugin_times)
        }))
        .unwrap();
    // Each plugin call against the folder call just before it: the median of those
    // ratios drifts less with the machine's load than the ratio of the two medians.
    let mut paired: Vec<f64> = folder_times
        .iter()
        .zip(&plugin_times)
        .map(|(f, p)| p.as_secs_f64() / f.as_secs_f64())
        .collect();
    paired.sort_by(f64::total_cmp);
    let paired = paired[paired.len() / 2];
    let (f50, f99) = pct(&mut folder_times);
    let (p50, p99) = pct(&mut plugin_times);
    println!("plugin call benchmark ({n} warm calls of each, alternated)");
    println!(
        "  folder tool (TOOL.md + execute)    p50 {:>8.3} ms  p99 {:>8.3} ms   (baseline)",
        ms(f50),
        ms(f99)
    );
    println!(
        "  plugin tool (ai tool() + zod)      p50 {:>8.3} ms  p99 {:>8.3} ms",
        ms(p50),
        ms(p99)
    );
    println!(
        "  plugin / folder                    p50 {:>8.3}x     p99 {:>8.3}x      (goal: p50 ≤ 1.10x)",
        p50.as_secs_f64() / f50.as_secs_f64(),
        p99.as_secs_f64() / f99.as_secs_f64()
    );
    println!("  paired: median of call-by-call ratios {paired:>6.3}x");
    std::process::ExitCode::SUCCESS
}

fn pct(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[(v.len() - 1) * 99 / 100])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
