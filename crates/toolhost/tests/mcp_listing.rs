//! `tools/list` over a catalog larger than one page: every tool exactly once, in name
//! order, across pages chained by `nextCursor`.
#![allow(clippy::unwrap_used)]

#[path = "mcp/line_client.rs"]
mod line_client;

use std::process::Command;

use line_client::LineClient;
use serde_json::json;

#[test]
fn large_catalogs_are_listed_in_name_order_across_pages() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools");
    let count: usize = 1234;
    for i in 0..count {
        let name = format!("tool_{i:04}");
        let folder = tools.join(&name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("TOOL.md"),
            format!("---\nname: {name}\nlabel: Tool {i}\ndescription: Number {i}.\nversion: 1\n---\n\n# Tool {i}\n"),
        )
        .unwrap();
        std::fs::write(
            folder.join("index.ts"),
            "export async function execute() { return 'ok'; }\n",
        )
        .unwrap();
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_CONFIG")
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .arg("mcp")
        .arg("--tools-dir")
        .arg(&tools);
    let mut client = LineClient::start(cmd);
    client.initialize("2025-11-25");
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages: usize = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = client.ask(
            json!({"jsonrpc": "2.0", "id": pages + 1, "method": "tools/list", "params": params}),
        );
        pages += 1;
        let result = &r["result"];
        for t in result["tools"].as_array().unwrap() {
            names.push(t["name"].as_str().unwrap().to_string());
        }
        match result["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    let expected: Vec<String> = (0..count).map(|i| format!("tool_{i:04}")).collect();
    assert_eq!(names, expected);
    assert_eq!(pages, count.div_ceil(500));
    assert!(client.close().success());
}
