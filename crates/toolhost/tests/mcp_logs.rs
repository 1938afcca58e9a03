//! Logs keep `sensitive` inputs out at every level, `trace` included, for `serve` and for
//! stdio `mcp`: the call is logged, its secret is not.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;
#[path = "mcp/raw_http.rs"]
mod raw_http;

use std::path::Path;

use common::{Fixture, Server};
use line_client::LineClient;
use raw_http::Session;
use serde_json::json;

const SECRET: &str = "pa55-LEAKME-7f3e9";

/// A tool with a `sensitive` input, next to the fixture's.
fn add_sens_tool(f: &Fixture) {
    let dir = f.tools().join("sens");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        "---\nname: sens\ndescription: Says how long the key it was given is.\nversion: 1\n\
         inputs:\n  apikey:\n    type: string\n    description: The key.\n    sensitive: true\n---\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("index.ts"),
        "export async function execute(_id: string, p: { apikey: string }) {\n\
         return `a key of ${p.apikey.length} characters`;\n}\n",
    )
    .unwrap();
}

fn call_sens() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
           "params": {"name": "sens", "arguments": {"apikey": SECRET}}})
}

/// The log holds the call (so this check can fail) and not the secret.
fn assert_logged_without_secret(log: &Path) {
    let text = std::fs::read_to_string(log).unwrap();
    assert!(
        text.contains(r#""apikey":"[REDACTED]""#),
        "the call is not in the log:\n{text}"
    );
    let leaks: Vec<&str> = text.lines().filter(|l| l.contains(SECRET)).collect();
    assert!(
        leaks.is_empty(),
        "the secret is in the log:\n{}",
        leaks.join("\n")
    );
}

#[test]
fn serve_logs_at_trace_hold_no_secret() {
    // F10: at TOOLHOST_LOG=debug or trace, the MCP layer (rmcp) logged `received request
    // ... arguments: {"apikey": String("…")}` before anything knew the input was sensitive.
    let f = Fixture::new();
    add_sens_tool(&f);
    let log = f.dir.path().join("serve.log");
    let mut cmd = f.toolhost();
    cmd.env("TOOLHOST_LOG", "trace")
        .arg("--log-file")
        .arg(&log)
        .args(["serve", "--no-store"])
        .arg("--tools-dir")
        .arg(f.tools());
    let mut server = Server::start(cmd);
    let session = Session::open(&server.addr, &[]);
    let r = session.post(&call_sens().to_string());
    assert!(r.body.contains("a key of 17 characters"), "{}", r.body);
    assert!(server.stop().success());
    assert_logged_without_secret(&log);
}

#[test]
fn stdio_logs_at_trace_hold_no_secret() {
    // F10, the same over stdio `mcp`.
    let f = Fixture::new();
    add_sens_tool(&f);
    let log = f.dir.path().join("mcp.log");
    let mut cmd = f.toolhost();
    cmd.env("TOOLHOST_LOG", "trace")
        .arg("--log-file")
        .arg(&log)
        .arg("mcp")
        .arg("--tools-dir")
        .arg(f.tools());
    let mut client = LineClient::start(cmd);
    client.initialize("2025-11-25");
    let answer = client.ask(call_sens());
    assert_eq!(
        answer["result"]["content"][0]["text"], "a key of 17 characters",
        "{answer}"
    );
    assert!(client.close().success());
    assert_logged_without_secret(&log);
}
