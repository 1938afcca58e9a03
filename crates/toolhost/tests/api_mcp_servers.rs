//! MCP servers managed through `/api/v1`, over real HTTP, against the official Python SDK's
//! server (which insists on a bearer token and a header): a test that lists tools and
//! calls none, a stored server granted to an agent and called, its secrets never shown,
//! never in the database file in clear, kept across a replace that sends them as `null`
//! and across a restart; the file's servers read-only; stale versions refused.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
#[path = "mcp/common.rs"]
mod common;
#[path = "../../mcp-client/tests/mcp-servers/py.rs"]
mod py;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use std::path::Path;
use std::time::Duration;

use api_client::{Api, dechunk, json_of, problem, sse_events};
use common::{Fixture, Server};
use py::py_server;
use raw_http::{Session, open, read_until, send_to};
use serde_json::{Value, json};
use stored::{admin_token, new_token};

fn serve(f: &Fixture, db: &Path) -> Server {
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(db);
    Server::start(cmd)
}

/// Calls `tool` as `agent` and returns the result event's data.
fn call(api: &Api, agent: &str, tool: &str, args: Value) -> Value {
    let r = api.request(
        "POST",
        "/calls",
        Some(&json!({"tool": tool, "agent": agent, "arguments": args})),
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let id = json_of(&r)["id"].as_str().unwrap().to_string();
    let auth = format!("Bearer {}", api.token.as_deref().unwrap());
    let r = send_to(
        api.addr,
        "GET",
        &format!("/api/v1/calls/{id}/events"),
        &[("Host", "127.0.0.1"), ("Authorization", &auth)],
        b"",
    );
    sse_events(&dechunk(&r.body)).pop().unwrap().data
}

fn tool_names(api: &Api, agent: &str) -> Vec<String> {
    let r = api.request("GET", &format!("/tools?agent={agent}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    json_of(&r)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn mcp_servers_are_managed_through_the_api_with_their_secrets_sealed() {
    let py = py_server("s3cret-token", Some("X-Api-Key=k3y-value"));
    let f = Fixture::new();
    // A server of the file: read-only through the API (never started here).
    std::fs::write(
        f.config(),
        format!(
            "{}[mcp_servers.filed]\ncommand = [\"true\"]\n",
            f.config_text()
        ),
    )
    .unwrap();
    let db = f.dir.path().join("toolhost.db");
    let mut server = serve(&f, &db);
    let admin = admin_token(&server.logs());
    let api = Api {
        addr: &server.addr,
        token: Some(admin.clone()),
    };

    // Testing settings before saving them: a wrong token fails, saying why; the right one
    // lists the tools.
    let settings = json!({"name": "py", "url": py.url, "bearer_token": "wrong",
        "headers": {"X-Api-Key": "k3y-value"}});
    let r = api.request("POST", "/mcp-servers/test", Some(&settings));
    let test = json_of(&r);
    assert_eq!((r.status, &test["success"]), (200, &json!(false)), "{test}");
    assert!(test["error"].as_str().unwrap().contains("401"), "{test}");
    let settings = json!({"name": "py", "url": py.url, "bearer_token": "s3cret-token",
        "headers": {"X-Api-Key": "k3y-value"}, "icon": "calculator"});
    let test = json_of(&api.request("POST", "/mcp-servers/test", Some(&settings)));
    let mut listed: Vec<&str> = test["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    listed.sort();
    assert_eq!(listed, ["greet", "multiply"], "{test}");

    // A client listening on /mcp hears that the tools changed once the server is saved.
    let auth = format!("Bearer {}", api.token.as_deref().unwrap());
    let session = Session::open(api.addr, &[("Authorization", &auth)]);
    let mut listening = open(
        api.addr,
        "GET",
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &session.id),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", &auth),
        ],
        b"",
    );
    read_until(&mut listening, "200 OK");

    // Saved: secrets named, never shown.
    let r = api.request("POST", "/mcp-servers", Some(&settings));
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(
        !r.body.contains("s3cret") && !r.body.contains("k3y"),
        "{}",
        r.body
    );
    let created = json_of(&r);
    assert_eq!(
        (
            &created["headers"],
            &created["bearer_token"],
            &created["version"]
        ),
        (&json!(["X-Api-Key"]), &json!(true), &json!(1))
    );
    read_until(&mut listening, "notifications/tools/list_changed");
    drop(listening);
    let list = json_of(&api.request("GET", "/mcp-servers", None));
    let sources: Vec<(&str, &str)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["source"].as_str().unwrap()))
        .collect();
    assert_eq!(sources, [("filed", "config"), ("py", "store")]);
    let test = json_of(&api.request("POST", "/mcp-servers/py/test", None));
    assert_eq!(test["success"], true, "{test}");

    // Granted to an agent, served from the next turn on, and called.
    let agent = json!({"id": "calc", "name": "Calc", "grants": [{"mcp_server": "py"}]});
    assert_eq!(api.request("POST", "/agents", Some(&agent)).status, 201);
    let names = tool_names(&api, "calc");
    assert!(names.contains(&"py__greet".to_string()), "{names:?}");
    let result = call(&api, "calc", "py__greet", json!({"name": "Ada"}));
    assert_eq!(result["content"][0]["text"], "Hello, Ada!", "{result}");

    // Its health, and the metrics: live; a server that cannot be reached, failing.
    let py_now = json_of(&api.request("GET", "/mcp-servers/py", None));
    assert_eq!(py_now["health"]["state"], "live", "{py_now}");
    let gone = json!({"name": "gone", "url": "http://127.0.0.1:9/mcp", "timeout": 2});
    assert_eq!(api.request("POST", "/mcp-servers", Some(&gone)).status, 201);
    let agent = json!({"id": "lost", "name": "Lost", "grants": [{"mcp_server": "gone"}]});
    assert_eq!(api.request("POST", "/agents", Some(&agent)).status, 201);
    assert!(tool_names(&api, "lost").is_empty());
    let gone_now = json_of(&api.request("GET", "/mcp-servers/gone", None));
    assert_eq!(gone_now["health"]["state"], "failing", "{gone_now}");
    assert!(gone_now["health"]["error"].as_str().is_some(), "{gone_now}");
    let metrics = api.request("GET", "/metrics", None).body;
    for line in [
        r#"toolhost_mcp_server_state{server="py",state="live"} 1"#,
        r#"toolhost_mcp_server_state{server="gone",state="failing"} 1"#,
        r#"toolhost_call_log_rows_total{result="lost"} 0"#,
        "toolhost_sandbox_starts_total ",
    ] {
        assert!(metrics.contains(line), "{line} not in\n{metrics}");
    }
    assert_eq!(api.request("DELETE", "/mcp-servers/gone", None).status, 204);

    // Replaced with its secrets sent as null: they keep their values.
    let replace = json!({"version": 1, "url": py.url, "headers": {"X-Api-Key": null},
        "description": "The Python SDK's test server"});
    let r = api.request("PUT", "/mcp-servers/py", Some(&replace));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(json_of(&r)["version"], 2);
    let result = call(&api, "calc", "py__multiply", json!({"a": 6, "b": 7}));
    assert_eq!(result["content"][0]["text"], "42.0", "{result}");
    problem(
        &api.request("PUT", "/mcp-servers/py", Some(&replace)),
        409,
        "version 2, not 1",
    );
    let p = problem(
        &api.request(
            "PUT",
            "/mcp-servers/py",
            Some(&json!({"version": 2, "url": py.url, "headers": {"X-Other": null}})),
        ),
        422,
        "null keeps a stored value",
    );
    assert_eq!(p["field"], "headers.X-Other");

    // Sealed at rest: neither secret is in the database's files, nor in the audit log.
    server.stop();
    for file in ["toolhost.db", "toolhost.db-wal"] {
        let path = f.dir.path().join(file);
        if let Ok(bytes) = std::fs::read(&path) {
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains("s3cret-token") && !text.contains("k3y-value"),
                "a secret in clear in {file}"
            );
        }
    }
    // Across a restart: the stored server is served again.
    let server = serve(&f, &db);
    let api = Api {
        addr: &server.addr,
        token: Some(admin),
    };
    let result = call(&api, "calc", "py__greet", json!({"name": "again"}));
    assert_eq!(result["content"][0]["text"], "Hello, again!", "{result}");
    // The call log knows the set each call came through (its rows are written in
    // batches, off the call path).
    let until = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let calls = json_of(&api.request("GET", "/calls?tool=py__greet", None));
        if calls["items"].as_array().unwrap().len() == 2 {
            assert_eq!(calls["items"][0]["tool_set"], "py", "{calls}");
            break;
        }
        assert!(std::time::Instant::now() < until, "{calls}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let audit = api.request("GET", "/audit", None);
    assert!(audit.body.contains("mcp_server.update"), "{}", audit.body);
    assert!(!audit.body.contains("s3cret") && !audit.body.contains("k3y"));

    // Refusals.
    problem(
        &api.request(
            "PUT",
            "/mcp-servers/filed",
            Some(&json!({"version": 0, "command": ["x"]})),
        ),
        409,
        "comes from toolhost.toml",
    );
    problem(
        &api.request(
            "POST",
            "/mcp-servers",
            Some(&json!({"name": "both", "command": ["x"], "url": py.url})),
        ),
        422,
        "not both",
    );
    problem(
        &api.request(
            "POST",
            "/mcp-servers",
            Some(&json!({"name": "a__b", "url": py.url})),
        ),
        422,
        "name",
    );
    problem(
        &api.request(
            "POST",
            "/mcp-servers",
            Some(&json!({"name": "bad", "url": py.url, "headers": {"Bad Header": "x"}})),
        ),
        422,
        "Bad Header",
    );
    problem(
        &api.request(
            "POST",
            "/mcp-servers",
            Some(&json!({"name": "py", "url": py.url})),
        ),
        409,
        "already exists",
    );
    let viewer = Api {
        addr: api.addr,
        token: Some(new_token(
            &f,
            &db,
            &[
                "--user",
                "vic",
                "--role",
                "viewer",
                "--scope",
                "tools:read",
                "--scope",
                "admin",
            ],
        )),
    };
    assert_eq!(viewer.request("GET", "/mcp-servers/py", None).status, 200);
    problem(
        &viewer.request("DELETE", "/mcp-servers/py", None),
        403,
        "needs the role operator",
    );
    problem(
        &viewer.request("POST", "/mcp-servers/py/test", None),
        403,
        "needs the role operator",
    );

    // Deleted: the agent's next turn leaves it out.
    problem(
        &api.request("DELETE", "/mcp-servers/py?version=1", None),
        409,
        "version 2",
    );
    assert_eq!(
        api.request("DELETE", "/mcp-servers/py?version=2", None)
            .status,
        204
    );
    let names = tool_names(&api, "calc");
    assert!(!names.iter().any(|n| n.starts_with("py__")), "{names:?}");
    problem(
        &api.request("GET", "/mcp-servers/py", None),
        404,
        "does not exist",
    );
}
