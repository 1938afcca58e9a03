//! Fixture builders shared by the catalog tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use toolhost_catalog::{Root, RootOrigin};

pub const ENTRY: &str =
    "export async function execute() {\n  return { content: [{ type: 'text', text: 'ok' }] };\n}\n";

/// Writes a valid tool folder `root/folder` defining `name` at `version`.
pub fn tool(root: &Path, folder: &str, name: &str, version: u64) -> PathBuf {
    tool_with(root, folder, name, version, "")
}

pub fn tool_with(root: &Path, folder: &str, name: &str, version: u64, extra_body: &str) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: The {name} tool.\nversion: {version}\n---\n\n# {name}\n{extra_body}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("index.ts"), ENTRY).unwrap();
    dir
}

pub fn roots(paths: &[&Path]) -> Vec<Root> {
    paths
        .iter()
        .map(|p| Root {
            path: p.to_path_buf(),
            origin: RootOrigin::Flag,
        })
        .collect()
}
