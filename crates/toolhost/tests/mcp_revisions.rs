//! The older protocol revisions rmcp still negotiates work like 2025-11-25, over stdio and
//! HTTP: the server answers `initialize` with the client's revision, lists the tools and
//! runs a call. Widely deployed clients still speak them.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;
#[path = "mcp/raw_http.rs"]
mod raw_http;

use common::{Fixture, Server};
use line_client::LineClient;
use raw_http::Session;
use serde_json::json;

const OLDER: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

fn call(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": "hi"}}})
    .to_string()
}

#[test]
fn older_revisions_over_stdio() {
    let f = Fixture::new();
    for revision in OLDER {
        let mut cmd = f.toolhost();
        cmd.args(["mcp", "--data"])
            .arg(f.data())
            .args(["--user", "tester"]);
        let mut client = LineClient::start(cmd);
        let init = client.initialize(revision);
        assert_eq!(init["result"]["protocolVersion"], revision, "{init}");
        let list = client.ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        let tools = list["result"]["tools"].as_array().unwrap();
        assert!(
            tools.iter().any(|t| t["name"] == "echo"),
            "{revision}: {list}"
        );
        let r = client.ask(serde_json::from_str(&call(3)).unwrap());
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{revision}: {r}");
        assert!(client.close().success(), "{revision}");
    }
    f.assert_no_tool_processes();
}

#[test]
fn older_revisions_over_http() {
    let f = Fixture::new();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data());
    let server = Server::start(cmd);
    for revision in OLDER {
        let session = Session::open_at(&server.addr, &[], revision);
        let r = session.post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
        assert!(
            r.body.contains(r#""name":"echo""#),
            "{revision}: {}",
            r.body
        );
        let r = session.post(&call(3));
        assert!(r.body.contains(r#""text":"hi""#), "{revision}: {}", r.body);
    }
}
