//! ARCHITECTURE.md's invariants, executed. The layer order is the order of the crate
//! sections of its code map (`### `crates/NAME``), so the document and the workspace
//! cannot drift apart:
//!
//! - every crate of the workspace has a section, and depends (normal, build and dev
//!   dependencies alike) only on crates whose sections come before its own;
//! - `unsafe` appears in the sandbox crate only;
//! - processes are started in the launcher (`runtime/src/launch.rs`) and the sandbox
//!   crate only.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// The crate folders (`crates/NAME`) in the order ARCHITECTURE.md's code map gives them.
fn layers() -> Vec<String> {
    let text = std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("### `crates/"))
        .filter_map(|l| l.split('`').next())
        .map(|name| format!("crates/{name}"))
        .collect()
}

/// Each workspace crate: its folder (relative to the workspace) and the folders of the
/// workspace crates it depends on.
fn crates() -> Vec<(String, String, Vec<String>)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let root = workspace();
    let folder = |manifest: &str| {
        Path::new(manifest)
            .parent()
            .unwrap()
            .strip_prefix(&root)
            .unwrap()
            .display()
            .to_string()
    };
    let packages = meta["packages"].as_array().unwrap();
    let by_name: std::collections::HashMap<&str, String> = packages
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap(),
                folder(p["manifest_path"].as_str().unwrap()),
            )
        })
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|d| by_name.get(d["name"].as_str().unwrap()).cloned())
                .collect();
            (
                p["name"].as_str().unwrap().to_string(),
                folder(p["manifest_path"].as_str().unwrap()),
                deps,
            )
        })
        .collect()
}

#[test]
fn crates_depend_only_on_the_layers_below_them() {
    let layers = layers();
    assert!(
        layers.len() >= 6,
        "no code map in ARCHITECTURE.md? {layers:?}"
    );
    let mut wrong = Vec::new();
    for (name, folder, deps) in crates() {
        // The examples sit on top of everything; nothing may depend on them (below).
        let mine = if folder.starts_with("crates/") {
            layers.iter().position(|l| *l == folder)
        } else {
            Some(layers.len())
        };
        let Some(mine) = mine else {
            wrong.push(format!(
                "{name} ({folder}) has no `### `{folder}`` section in ARCHITECTURE.md's code map"
            ));
            continue;
        };
        for dep in deps {
            match layers.iter().position(|l| *l == dep) {
                Some(theirs) if theirs < mine => {}
                _ => wrong.push(format!(
                    "{folder} depends on {dep}, which is not a layer below it"
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every `.rs` file under `crates/`, with its path relative to the workspace.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name == "node_modules" || name.to_string_lossy().starts_with('.')
            {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = workspace();
    let mut files = Vec::new();
    walk(&root.join("crates"), &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&root).unwrap().display().to_string();
            (rel, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

/// The code of `text` without its comments (line comments only: the project writes no
/// block comments), so that a comment naming a word is not the word.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let code = l.split("//").next().unwrap_or("");
        (!code.trim().is_empty()).then_some((i + 1, code))
    })
}

#[test]
fn unsafe_code_lives_in_the_sandbox_crate_only() {
    let mut found = Vec::new();
    for (path, text) in sources() {
        if path.starts_with("crates/sandbox/") || path == "crates/toolhost/tests/architecture.rs" {
            continue;
        }
        for (line, code) in code_lines(&text) {
            let words: Vec<&str> = code
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .collect();
            if words.contains(&"unsafe") || words.contains(&"unsafe_code") {
                found.push(format!("{path}:{line}: {}", code.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "unsafe outside crates/sandbox:\n{}",
        found.join("\n")
    );
}

#[test]
fn processes_start_in_the_launcher_only() {
    // Library code only: tests and benches start servers and clients of their own.
    let allowed = |path: &str| {
        path.starts_with("crates/sandbox/src/") || path == "crates/runtime/src/launch.rs"
    };
    let starts = [
        "Command::new",
        "process::Command",
        "CommandWrap",
        "fork(",
        "posix_spawn",
        "execve",
    ];
    let mut found = Vec::new();
    for (path, text) in sources() {
        if !path.contains("/src/") || allowed(&path) {
            continue;
        }
        let mut in_tests = false;
        for (line, code) in code_lines(&text) {
            // A module's unit tests may start what they test against.
            if code.trim_start().starts_with("#[cfg(test)]") {
                in_tests = true;
            }
            if in_tests {
                continue;
            }
            if let Some(s) = starts.iter().find(|s| code.contains(*s)) {
                found.push(format!("{path}:{line}: `{s}` in {}", code.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "processes started outside the launcher (runtime/src/launch.rs) and the sandbox:\n{}",
        found.join("\n")
    );
}
