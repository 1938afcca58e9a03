//! `serve --database`: a fresh store prints its admin's token once; `token new` writes to
//! the store while the server runs; every HTTP request then needs a token; a token bound
//! to an agent is that agent on `/mcp`; scopes are enforced; calls land in the call log.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use common::{Fixture, Server};
use raw_http::{MCP_POST, Session, send};
use stored::{admin_token, new_token};

const AGENT: &str =
    "[agents.helper]\ngrants = [{ tool_set = \"data-tools\", deny = [\"slow\"] }]\n";

fn tool_names(session: &Session) -> Vec<String> {
    let r = session.post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    let body = r.body.trim_start_matches("data: ");
    let json: serde_json::Value = serde_json::from_str(body.trim())
        .or_else(|_| {
            let line = r.body.lines().find(|l| l.starts_with("data: ")).unwrap();
            serde_json::from_str(&line["data: ".len()..])
        })
        .unwrap();
    let mut names: Vec<String> = json["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[test]
fn serve_with_a_store_authenticates_stored_tokens_and_logs_calls() {
    let f = Fixture::new();
    std::fs::write(f.config(), format!("{}{AGENT}", f.config_text())).unwrap();
    let db = f.dir.path().join("store/toolhost.db");
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(&db);
    let mut server = Server::start(cmd);

    // A fresh store: the admin's token, printed once.
    let admin = admin_token(&server.logs());
    let key = std::fs::metadata(f.dir.path().join("store/toolhost.db.key")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&key.permissions()) & 0o777,
        0o600
    );

    // Tokens made while the server runs work at once.
    let alice = new_token(&f, &db, &["--user", "alice", "--agent", "helper"]);
    let bob = new_token(&f, &db, &["--user", "bob", "--scope", "tools:read"]);

    // Every request needs a token now, even on loopback.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    for auth in [None, Some("Bearer th_000000000000_nope".to_string())] {
        let mut headers = MCP_POST.to_vec();
        if let Some(a) = &auth {
            headers.push(("Authorization", a));
        }
        let r = send(&server.addr, "POST", &headers, init.as_bytes());
        assert_eq!(r.status, 401, "{auth:?}: {}", r.body);
    }

    // The admin sees the catalog; alice, bound to the agent, sees the agent's tools.
    let as_admin = Session::open(&server.addr, &[("Authorization", &bearer(&admin))]);
    assert_eq!(tool_names(&as_admin), ["echo", "slow"]);
    let as_alice = Session::open(&server.addr, &[("Authorization", &bearer(&alice))]);
    assert_eq!(tool_names(&as_alice), ["echo"]);
    let r = as_alice.post(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi from alice"}}}"#,
    );
    assert!(r.body.contains("hi from alice"), "{}", r.body);
    let r = as_alice.post(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
    );
    assert!(r.body.contains("unknown tool: slow"), "{}", r.body);

    // Bob may list but not call.
    let as_bob = Session::open(&server.addr, &[("Authorization", &bearer(&bob))]);
    assert_eq!(tool_names(&as_bob), ["echo", "slow"]);
    let r = as_bob.post(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}"#,
    );
    // Refused at the HTTP layer, with the challenge an OAuth client would act on.
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        r.header("www-authenticate"),
        Some(
            r#"Bearer error="insufficient_scope", scope="tools:read tools:call", error_description="this token lacks tools:call""#
        )
    );
    assert!(
        r.body.contains("insufficient scope") && r.body.contains("tools:call"),
        "{}",
        r.body
    );
    assert!(server.stop().success());

    // The call is in the store's call log, written before the server exited.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = toolhost_store::Store::open(toolhost_store::Location::Sqlite(db.clone()), None)
            .await
            .unwrap();
        let calls = store
            .calls(&toolhost_store::CallFilter::default(), None, 50)
            .await
            .unwrap()
            .items;
        use toolhost_store::Outcome;
        let find = |user: &str, tool: &str| {
            calls
                .iter()
                .find(|c| c.principal == user && c.tool == tool)
                .unwrap_or_else(|| panic!("no call of {tool} by {user}: {calls:?}"))
        };
        let echo = find("alice", "echo");
        assert_eq!(echo.outcome, Outcome::Success);
        assert_eq!(echo.transport, "mcp-http");
        assert_eq!(echo.agent_id.as_deref(), Some("helper"));
        let alice_id = alice.split('_').nth(1).unwrap();
        assert_eq!(echo.token_id.as_deref(), Some(alice_id));
        assert_eq!(echo.arguments, r#"{"text":"hi from alice"}"#);
        assert!(echo.result_bytes > 0);
        // Refusals are calls too: a tool the agent does not have, a scope the token lacks.
        let slow = find("alice", "slow");
        assert_eq!(slow.outcome, Outcome::Denied);
        assert!(
            slow.error.as_deref().unwrap().contains("unknown tool"),
            "{slow:?}"
        );
        let bob_echo = find("bob", "echo");
        assert_eq!(bob_echo.outcome, Outcome::Denied);
        assert!(
            bob_echo.error.as_deref().unwrap().contains("tools:call"),
            "{bob_echo:?}"
        );
        let audit = store.audit(None, 50).await.unwrap().items;
        let actions: Vec<&str> = audit.iter().map(|e| e.action.as_str()).collect();
        assert!(actions.contains(&"token.create"), "{actions:?}");
        store.close().await;
    });
    // A second start finds users: no new admin token.
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(&db);
    let mut again = Server::start(cmd);
    assert!(!again.logs().contains("th_"), "{}", again.logs());
    let stopped = again.stop();
    assert!(stopped.success(), "{stopped:?}: {}", again.logs());
}

#[test]
fn token_options_that_need_a_store_say_so_without_one() {
    let f = Fixture::new();
    let out = f
        .toolhost()
        .args([
            "token",
            "new",
            "--no-store",
            "--user",
            "alice",
            "--agent",
            "helper",
        ])
        .env_remove("TOOLHOST_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("need a store"), "{stderr}");
    let out = f
        .toolhost()
        .args([
            "token",
            "new",
            "--database",
            "mysql://nope",
            "--user",
            "alice",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("mysql://"),
        "{stderr}"
    );
}

#[test]
fn serve_keeps_its_state_in_the_embedded_store_by_default() {
    let f = Fixture::new();
    let mut cmd = f.toolhost();
    cmd.env_remove("TOOLHOST_DATABASE_URL")
        .args(["serve", "--data"])
        .arg(f.data());
    let mut server = Server::start(cmd);
    // The embedded SQLite file, in Toolhost's data folder, with its key beside it.
    let db = f.dir.path().join("xdg-data/toolhost/toolhost.db");
    assert!(db.is_file(), "no {}", db.display());
    assert!(
        f.dir
            .path()
            .join("xdg-data/toolhost/toolhost.db.key")
            .is_file()
    );
    let admin = admin_token(&server.logs());
    // Loopback, yet every request needs a token.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let r = send(&server.addr, "POST", MCP_POST, init.as_bytes());
    assert_eq!(r.status, 401, "{}", r.body);
    let session = Session::open(&server.addr, &[("Authorization", &bearer(&admin))]);
    assert!(tool_names(&session).contains(&"echo".to_string()));
    // `token new` without a store named writes to the same one.
    let out = f
        .toolhost()
        .env_remove("TOOLHOST_DATABASE_URL")
        .args(["token", "new", "--user", "bob"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let bob = stdout
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap_or_else(|| panic!("{stdout}{}", String::from_utf8_lossy(&out.stderr)));
    let session = Session::open(&server.addr, &[("Authorization", &bearer(bob))]);
    assert!(tool_names(&session).contains(&"echo".to_string()));
    assert!(server.stop().success());
}

#[test]
fn toolhost_call_records_in_a_named_store_only() {
    let f = Fixture::new();
    let db = f.dir.path().join("calls.db");
    let call = |extra: &[&str]| {
        let out = f
            .toolhost()
            .env_remove("TOOLHOST_DATABASE_URL")
            .args(["call", "echo", "text=hello", "--data"])
            .arg(f.data())
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    };
    call(&[]);
    // Without a store named, nothing was made in the data folder.
    assert!(!f.dir.path().join("xdg-data/toolhost/toolhost.db").exists());
    call(&["--database", db.to_str().unwrap()]);
    let calls = logged_calls(&db);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(
        (
            calls[0].tool.as_str(),
            calls[0].transport.as_str(),
            calls[0].outcome
        ),
        ("echo", "cli", toolhost_store::Outcome::Success)
    );
    assert!(calls[0].arguments.contains("hello"), "{:?}", calls[0]);
}

#[test]
fn a_start_killed_while_migrating_leaves_a_store_the_next_start_uses() {
    let f = Fixture::new();
    let db = f.dir.path().join("killed.db");
    // Killed at once, and at points through opening and migrating the store.
    for delay_ms in [0u64, 2, 5, 10, 20, 40, 80] {
        let mut child = f
            .toolhost()
            .args(["serve", "--listen", "127.0.0.1:0", "--data"])
            .arg(f.data())
            .arg("--database")
            .arg(&db)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(&db);
    let mut server = Server::start(cmd);
    // Whether or not a killed start got as far as making the admin, a token made now
    // works.
    let token = new_token(&f, &db, &["--user", "ada"]);
    let session = Session::open(&server.addr, &[("Authorization", &bearer(&token))]);
    assert!(tool_names(&session).contains(&"echo".to_string()));
    assert!(server.stop().success());
}

#[test]
fn mcp_on_stdio_serves_a_stored_agent_and_records_its_calls() {
    let f = Fixture::new();
    let db = f.dir.path().join("stdio.db");
    let file = f.dir.path().join("agent.toml");
    std::fs::write(
        &file,
        "[agents.web]\nname = \"Web\"\ngrants = [{ tool_set = \"data-tools\", deny = [\"slow\"] }]\n",
    )
    .unwrap();
    let out = f
        .toolhost()
        .arg("import")
        .arg(&file)
        .arg("--database")
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut cmd = f.toolhost();
    cmd.args(["mcp", "--agent", "web", "--tools-dir"])
        .arg(f.tools())
        .arg("--database")
        .arg(&db);
    let mut client = line_client::LineClient::start(cmd);
    client.initialize("2025-11-25");
    let listed = client.ask(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo"], "{listed}");
    let answer = client.ask(
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}}),
    );
    assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");
    assert!(client.close().success());
    // Written before the process exited.
    let calls = logged_calls(&db);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(
        (
            calls[0].transport.as_str(),
            calls[0].agent_id.as_deref(),
            calls[0].tool_set.as_deref()
        ),
        ("mcp-stdio", Some("web"), Some("data-tools"))
    );
}

/// The call log of the SQLite store `db`, newest first.
fn logged_calls(db: &std::path::Path) -> Vec<toolhost_store::CallRow> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let at = toolhost_store::Location::Sqlite(db.to_path_buf());
        let store = toolhost_store::Store::open(at, None).await.unwrap();
        let filter = toolhost_store::CallFilter::default();
        let calls = store.calls(&filter, None, 50).await.unwrap().items;
        store.close().await;
        calls
    })
}
