//! The official MCP clients (TypeScript SDK from npm, Python SDK from PyPI) against
//! `toolhost mcp` (stdio) and `toolhost serve` (Streamable HTTP): listing and schemas,
//! calls, progress, cancellation reaching the tool's abort handler, invalid parameters,
//! list_changed after an edit, 100 concurrent calls. The checks are in the client scripts
//! under tests/mcp-clients/; each exits non-zero on the first failure.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;

use std::process::Command;

use common::{Fixture, Server, clients_dir, python, run_client};
use serde_json::json;

fn stdio_args(f: &Fixture) -> Vec<String> {
    vec![
        "mcp".into(),
        "--data".into(),
        f.data().display().to_string(),
        "--user".into(),
        "tester".into(),
    ]
}

/// The environment `toolhost mcp` gets when a client script starts it.
fn stdio_env(cmd: &mut Command, f: &Fixture) {
    let probe = f.toolhost();
    for (k, v) in probe.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
}

fn node(opts: serde_json::Value) -> Command {
    let dir = clients_dir();
    let mut cmd = Command::new("node");
    cmd.current_dir(&dir)
        .arg(dir.join("ts_client.mjs"))
        .arg(opts.to_string());
    cmd
}

fn py(opts: serde_json::Value) -> Command {
    let mut cmd = Command::new(python());
    cmd.arg(clients_dir().join("py_client.py"))
        .arg(opts.to_string());
    cmd
}

fn serve(f: &Fixture) -> Server {
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data())
        .arg("--user")
        .arg("tester");
    Server::start(cmd)
}

#[test]
fn typescript_sdk_over_stdio() {
    let f = Fixture::new();
    let mut cmd = node(json!({
        "transport": "stdio",
        "bin": env!("CARGO_BIN_EXE_toolhost"),
        "args": stdio_args(&f),
        "home": f.home("tester"),
        "tools": f.tools(),
    }));
    stdio_env(&mut cmd, &f);
    run_client(cmd, "the TypeScript SDK over stdio");
    f.assert_no_tool_processes();
}

#[test]
fn typescript_sdk_over_http() {
    let f = Fixture::new();
    let mut server = serve(&f);
    let cmd = node(json!({
        "transport": "http",
        "url": server.url,
        "home": f.home("tester"),
        "tools": f.tools(),
    }));
    run_client(cmd, "the TypeScript SDK over HTTP");
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}

/// The Python SDK's default: the stateless 2026-07-28 revision (server/discover, list
/// changes on a subscriptions/listen stream).
#[test]
fn python_sdk_over_stdio_2026_07_28() {
    let f = Fixture::new();
    let mut cmd = py(json!({
        "transport": "stdio",
        "mode": "auto",
        "bin": env!("CARGO_BIN_EXE_toolhost"),
        "args": stdio_args(&f),
        "home": f.home("tester"),
        "tools": f.tools(),
    }));
    stdio_env(&mut cmd, &f);
    run_client(cmd, "the Python SDK over stdio (2026-07-28)");
    f.assert_no_tool_processes();
}

/// The initialize handshake (2025-11-25) from the Python SDK.
#[test]
fn python_sdk_over_stdio_2025_11_25() {
    let f = Fixture::new();
    let mut cmd = py(json!({
        "transport": "stdio",
        "mode": "legacy",
        "bin": env!("CARGO_BIN_EXE_toolhost"),
        "args": stdio_args(&f),
        "home": f.home("tester"),
        "tools": f.tools(),
    }));
    stdio_env(&mut cmd, &f);
    run_client(cmd, "the Python SDK over stdio (2025-11-25)");
    f.assert_no_tool_processes();
}

#[test]
fn python_sdk_over_http_2026_07_28() {
    let f = Fixture::new();
    let mut server = serve(&f);
    let cmd = py(json!({
        "transport": "http",
        "mode": "auto",
        "url": server.url,
        "home": f.home("tester"),
        "tools": f.tools(),
    }));
    run_client(cmd, "the Python SDK over HTTP (2026-07-28)");
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}

#[test]
fn python_sdk_over_http_2025_11_25() {
    let f = Fixture::new();
    let mut server = serve(&f);
    let cmd = py(json!({
        "transport": "http",
        "mode": "legacy",
        "url": server.url,
        "home": f.home("tester"),
        "tools": f.tools(),
    }));
    run_client(cmd, "the Python SDK over HTTP (2025-11-25)");
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}
