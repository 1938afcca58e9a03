//! Each example, run as a user would run it.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The example `name`, as `cargo test` (and nextest) built it beside this test: in
/// `target/PROFILE/examples/`.
fn example(name: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let path = profile.join("examples").join(name);
    assert!(
        path.is_file(),
        "{} is missing: the examples are built by `cargo test` or `cargo nextest run`",
        path.display()
    );
    Command::new(path)
}

#[test]
fn custom_source_serves_its_tool_over_mcp() {
    let mut child = example("custom_source")
        .env(
            "XDG_DATA_HOME",
            std::env::temp_dir().join("toolhost-examples-data"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    let mut answer = |id: u64| loop {
        let line = lines.next().expect("the server closed stdout").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == id {
            return v;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}),
    );
    assert_eq!(answer(1)["result"]["serverInfo"]["name"], "toolhost");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let list = answer(2);
    assert_eq!(list["result"]["tools"][0]["name"], "roll_dice");
    assert_eq!(list["result"]["tools"][0]["title"], "Roll dice");
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "roll_dice", "arguments": {"sides": 6, "count": 3, "seed": 7}}}));
    let text = answer(3)["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.starts_with("rolled [") && text.contains("sum "),
        "{text}"
    );
    // The runtime validates against the tool's schema before the tool runs.
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "roll_dice", "arguments": {"sides": 1}}}));
    let bad = answer(4);
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(bad.to_string().contains("sides"), "{bad}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn embed_runtime_calls_a_folder_tool_in_the_sandbox() {
    let tools = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools");
    let out = example("embed_runtime")
        .args([tools, "hash", "text=hello world"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"),
        "{stdout}"
    );
    // An error result is exit 1, a usage error 2.
    let bad = example("embed_runtime")
        .args([tools, "hash", "algorithm=md9", "text=x"])
        .output()
        .unwrap();
    assert_eq!(
        bad.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&bad.stdout)
    );
    assert!(String::from_utf8_lossy(&bad.stdout).contains("algorithm"));
    let missing = example("embed_runtime")
        .args([tools, "nope"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn native_plugin_serves_its_tool_to_the_agent_granted_it() {
    let out = example("native_plugin").arg("hello").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "HELLO!!!\n");
    assert!(stderr.contains(r#"the writer sees: ["shout"]"#), "{stderr}");
    assert!(stderr.contains("progress: shouting"), "{stderr}");
    // Over the plugin's own setting (max_chars = 100): the tool's typed error.
    let long = example("native_plugin")
        .arg("x".repeat(101))
        .output()
        .unwrap();
    assert_eq!(long.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&long.stderr).contains("longer than 100 characters"),
        "{}",
        String::from_utf8_lossy(&long.stderr)
    );
}
