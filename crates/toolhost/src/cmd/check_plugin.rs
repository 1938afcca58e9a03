//! `toolhost check PATH` on a Platypus plugin (a package folder or its entry file): the
//! problems boot would find, found the way boot finds them (imported on a worker, its
//! manifest checked, its settings parsed by its own schemas with `[plugins.NAME]` of the
//! configuration, its tools described, its tool sets registered), and what boot would
//! note (tools left out, contributions that are not tool sets).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use serde::Serialize;
use toolhost_host::ConfigFile;
use toolhost_host::plugins::{RuntimeRunner, load_all, no_secrets};
use toolhost_runtime::Runtime;
use toolhost_toolsets::{BootOptions, CorePlugins, PluginRunner, Registry};

use crate::output::print_json;

/// Whether `path` is a plugin rather than tool folders: an entry file, or a folder with a
/// `package.json` and no TOOL.md.
pub fn is_plugin(path: &Path) -> bool {
    if path.is_file() {
        return ["js", "mjs", "cjs", "ts", "mts", "cts"]
            .iter()
            .any(|e| path.extension().is_some_and(|x| x == *e));
    }
    path.join("package.json").is_file() && !path.join("TOOL.md").exists()
}

#[derive(Serialize)]
struct PluginReport {
    path: PathBuf,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    notes: Vec<String>,
    tool_sets: Vec<SetReport>,
}

#[derive(Serialize)]
struct SetReport {
    id: String,
    /// `static` or `factory` (its tools are known per turn).
    tools_kind: &'static str,
    tools: Vec<String>,
}

#[derive(Serialize)]
struct Report {
    plugins: Vec<PluginReport>,
    errors: usize,
    warnings: usize,
}

/// Checks each plugin of `paths` in a runtime of its own.
pub fn run(paths: &[PathBuf], config: &ConfigFile, json: bool) -> Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let reports = rt.block_on(async {
        let mut runtime_config = config.runtime.clone();
        runtime_config.sandbox.spares = 0;
        let env = toolhost_host::tool_env(
            config,
            &toolhost_catalog::Catalog::scan(Vec::new()),
            toolhost_host::homes_dir(None),
        );
        let runtime = Runtime::new(runtime_config, env)?;
        let runner: Arc<dyn PluginRunner> =
            Arc::new(RuntimeRunner::new(runtime.clone(), None, None));
        let mut reports = Vec::new();
        for path in paths {
            reports.push(check_one(path, config, &runner).await);
        }
        runtime.shutdown().await;
        anyhow::Ok(reports)
    })?;
    let errors = reports.iter().filter(|r| !r.ok).count();
    let warnings = reports.iter().map(|r| r.notes.len()).sum();
    if json {
        print_json(&Report {
            plugins: reports,
            errors,
            warnings,
        })?;
    } else {
        for r in &reports {
            match (&r.error, &r.name) {
                (Some(e), _) => println!("error: {e}"),
                (None, Some(name)) => {
                    let tools: usize = r.tool_sets.iter().map(|s| s.tools.len()).sum();
                    println!(
                        "{}: plugin `{name}` ok: {} tool set(s), {tools} static tool(s)",
                        r.path.display(),
                        r.tool_sets.len()
                    );
                    for s in &r.tool_sets {
                        println!("  {} ({}): {}", s.id, s.tools_kind, s.tools.join(", "));
                    }
                }
                (None, None) => {}
            }
            for n in &r.notes {
                println!("warning: {n}");
            }
        }
        eprintln!(
            "checked {} plugin(s): {} error(s), {} warning(s)",
            reports.len(),
            errors,
            warnings
        );
    }
    Ok(if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

async fn check_one(
    path: &Path,
    config: &ConfigFile,
    runner: &Arc<dyn PluginRunner>,
) -> PluginReport {
    let mut report = PluginReport {
        path: path.to_path_buf(),
        ok: false,
        name: None,
        error: None,
        notes: Vec::new(),
        tool_sets: Vec::new(),
    };
    let spec = std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string();
    let toolsets = config.toolsets();
    let loaded = load_all(
        std::slice::from_ref(&spec),
        Path::new("."),
        &toolsets.plugins,
        runner,
        &no_secrets,
    )
    .await;
    let mut loaded = match loaded {
        Ok(l) => l,
        Err(e) => {
            report.error = Some(e.to_string());
            return report;
        }
    };
    let Some(third) = loaded.pop() else {
        return report;
    };
    report.name = Some(third.plugin.name.clone());
    report.notes = third.notes.clone();
    // The registry's own checks (set ids, tool names), with nothing else registered.
    match Registry::boot(
        CorePlugins::new(),
        BootOptions {
            third_party: vec![third],
            ..BootOptions::default()
        },
    ) {
        Ok(registry) => {
            report.ok = true;
            report.tool_sets = registry
                .tool_sets()
                .map(|e| SetReport {
                    id: e.set.id.clone(),
                    tools_kind: e.set.tools.kind(),
                    tools: e.set.known_tools(),
                })
                .collect();
        }
        Err(e) => report.error = Some(e.to_string()),
    }
    report
}
