//! The console's administration pages in a real Chromium (`tests/browser/admin.mjs`)
//! against a real `toolhost serve` with its store: an MCP server (the Python SDK's test
//! server, which wants a bearer token and a header) added and tested, its secrets never
//! shown; a token made, used, revoked and refused; a user's role changed; the plugins and
//! sources, the audit log and the settings pages.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
#[path = "mcp/browser.rs"]
mod browser;
#[path = "mcp/common.rs"]
mod common;
#[path = "../../mcp-client/tests/mcp-servers/py.rs"]
mod py;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use api_client::{Api, json_of};
use browser::{assert_budgets, assert_screenshots, run_script, serve_console};
use common::Fixture;
use py::py_server;
use serde_json::{Value, json};

#[test]
fn administration_in_chromium() {
    let py = py_server("s3cret-token", Some("X-Api-Key=k3y-value"));
    let f = Fixture::new();
    let (mut server, token, base) = serve_console(&f);

    let result: Value = run_script(
        "admin",
        &base,
        &token,
        &[
            ("MCP_URL", py.url.as_str()),
            ("BEARER", "s3cret-token"),
            ("HEADER", "X-Api-Key=k3y-value"),
        ],
    );
    let pages = &result["pages"];

    // The test before saving: the wrong token fails saying why; the right one lists.
    assert!(
        pages["failedTest"].as_str().unwrap().contains("401"),
        "{}",
        pages["failedTest"]
    );
    assert_eq!(pages["test"]["tools"], json!(["greet", "multiply"]));
    assert!(
        pages["retest"].as_str().unwrap().contains("2 tools"),
        "{}",
        pages["retest"]
    );
    assert!(
        pages["edited"].as_str().unwrap().starts_with("Saved"),
        "{}",
        pages["edited"]
    );
    let servers = pages["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0]["name"], "py");
    assert!(
        servers[0]["text"]
            .as_str()
            .unwrap()
            .contains("The Python SDK test server")
    );

    // The store has it, its secrets kept, and its tools are served.
    let api = Api {
        addr: &server.addr,
        token: Some(token.clone()),
    };
    let stored = json_of(&api.request("GET", "/mcp-servers/py", None));
    assert_eq!(stored["bearer_token"], true, "{stored}");
    assert_eq!(stored["headers"], json!(["X-Api-Key"]), "{stored}");
    assert_eq!(stored["version"], 2, "{stored}");

    // The token worked, then was refused once revoked.
    assert_eq!(result["tokenBefore"], 200);
    assert_eq!(result["tokenAfter"], 401);
    assert!(pages["revokedRow"].as_str().unwrap().contains("revoked"));
    assert_eq!(pages["bobRole"], "operator");

    // The audit log shows the changes made here.
    let actions: Vec<&str> = pages["audit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for action in [
        "mcp_server.create",
        "mcp_server.update",
        "token.create",
        "token.revoke",
    ] {
        assert!(actions.contains(&action), "{action} not in {actions:?}");
    }
    let settings = pages["settings"].as_str().unwrap();
    assert!(
        settings.contains("Sqlite") && settings.contains("toolhost.db"),
        "{settings}"
    );
    assert!(
        settings.contains("Ready"),
        "the sandbox's status: {settings}"
    );
    assert!(
        pages["plugins"]["roots"].as_u64().unwrap() >= 1,
        "{}",
        pages["plugins"]
    );

    assert_budgets(&result, 6);
    assert_screenshots(&[
        "mcp-servers",
        "mcp-server-test",
        "tokens",
        "audit",
        "settings",
    ]);
    server.stop();
}
