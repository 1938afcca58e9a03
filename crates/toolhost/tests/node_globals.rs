//! What a seed tool finds on Node.js's global object, in the sandbox: `fetch`, and
//! `WebSocket` even on Node.js 20, where it is off the global object unless asked for (the
//! browser tool speaks CDP over it, with no package to bring one).
#![allow(clippy::unwrap_used)]

use std::process::Command;

mod machine;

#[test]
fn websocket_and_fetch_are_globals() {
    machine::sandbox();
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("tools/globals");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        "---\nname: globals\ndescription: Reports the globals it sees.\nversion: 1\n---\n\n# globals\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("index.ts"),
        "export async function execute() {\n  return { content: [{ type: 'text', text: \
         `${typeof WebSocket} ${typeof fetch} ${process.version}` }] };\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_CONFIG")
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .env("XDG_DATA_HOME", t.path().join("data"))
        .args(["call", "globals", "--tools-dir"])
        .arg(t.path().join("tools"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("function function v"),
        "WebSocket and fetch are globals: {stdout}{stderr}"
    );
    assert!(!stderr.contains("ExperimentalWarning"), "{stderr}");
}
