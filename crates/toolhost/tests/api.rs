//! `/api/v1` on `serve --database`, over real HTTP: health and the OpenAPI document
//! without a token; agents created, read, listed beside toolhost.toml's, replaced with
//! their version (409 when stale) and deleted; every error a problem+json naming what is
//! wrong; roles, scopes and the `Host`/`Origin` checks enforced; an agent created through
//! the API is served on `/mcp` to a token bound to it, and its creation is audited.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use api_client::{Api, json_of, problem};
use common::{Fixture, Server};
use raw_http::{Session, send_to};
use serde_json::{Value, json};
use stored::{admin_token, new_token};

const AGENT: &str =
    "[agents.helper]\ngrants = [{ tool_set = \"data-tools\", deny = [\"slow\"] }]\n";

#[test]
fn agents_through_the_api() {
    let f = Fixture::new();
    std::fs::write(f.config(), format!("{}{AGENT}", f.config_text())).unwrap();
    let db = f.dir.path().join("toolhost.db");
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(&db);
    let mut server = Server::start(cmd);
    let admin = admin_token(&server.logs());
    let anonymous = Api {
        addr: &server.addr,
        token: None,
    };
    let api = Api {
        addr: &server.addr,
        token: Some(admin),
    };

    // Open to all: health and the document.
    let r = anonymous.request("GET", "/healthz", None);
    assert_eq!((r.status, json_of(&r)["store"].as_str()), (200, Some("ok")));
    let r = anonymous.request("GET", "/openapi.json", None);
    assert_eq!(json_of(&r)["openapi"], "3.1.0");
    assert_eq!(
        r.body,
        std::fs::read_to_string(common::repo().join("docs/openapi.json")).unwrap(),
        "the served document is the committed one"
    );
    // The rest needs a token.
    let r = anonymous.request("GET", "/agents", None);
    problem(&r, 401, "Authorization: Bearer");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));

    // Create, read, list beside the file's agent.
    let web = json!({"id": "web", "name": "Web", "icon": "globe",
        "grants": [{"tool_set": "data-tools", "rules": {"slow": "deny"}}]});
    let r = api.request("POST", "/agents", Some(&web));
    assert_eq!(r.status, 201, "{}", r.body);
    let created = json_of(&r);
    assert_eq!(
        (created["version"].as_i64(), created["source"].as_str()),
        (Some(1), Some("store"))
    );
    problem(
        &api.request("POST", "/agents", Some(&web)),
        409,
        "already exists",
    );
    let mut helper = web.clone();
    helper["id"] = json!("helper");
    problem(
        &api.request("POST", "/agents", Some(&helper)),
        409,
        "toolhost.toml",
    );
    let list = json_of(&api.request("GET", "/agents", None));
    let ids: Vec<(&str, &str)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["id"].as_str().unwrap(), a["source"].as_str().unwrap()))
        .collect();
    assert_eq!(ids, [("helper", "config"), ("web", "store")]);
    let page = json_of(&api.request("GET", "/agents?limit=1", None));
    assert_eq!(page["next"], "helper");
    let page = json_of(&api.request("GET", "/agents?limit=1&cursor=helper", None));
    assert_eq!(page["items"][0]["id"], "web");

    // What can be granted.
    let sets = json_of(&api.request("GET", "/tool-sets", None));
    let set = sets
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "data-tools")
        .unwrap_or_else(|| panic!("{sets}"));
    assert_eq!(set["owner_kind"], "folder");
    let mut tools: Vec<&str> = set["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    tools.sort();
    assert_eq!(tools, ["echo", "slow"]);
    let plugins = json_of(&api.request("GET", "/plugins", None));
    assert!(
        plugins["plugins"].as_array().is_some_and(|p| !p.is_empty()),
        "{plugins}"
    );

    // What each agent's caller gets now, as `toolhost resolve` shows it.
    for agent in ["web", "helper"] {
        let turn = json_of(&api.request("GET", &format!("/agents/{agent}/effective-tools"), None));
        let names: Vec<&str> = turn["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["echo"], "{turn}");
        assert_eq!(turn["tools"][0]["set"], "data-tools");
        assert_eq!(turn["excluded"][0]["name"], "slow", "{turn}");
    }
    problem(
        &api.request("GET", "/agents/nope/effective-tools", None),
        404,
        "does not exist",
    );

    // Bad input: a problem naming the field.
    let p = problem(
        &api.request(
            "POST",
            "/agents",
            Some(&json!({"id": "x", "name": "X", "colour": "red"})),
        ),
        422,
        "unknown field `colour`",
    );
    assert_eq!(p["field"], "colour", "{p}");
    let p = problem(
        &api.request(
            "POST",
            "/agents",
            Some(
                &json!({"id": "x", "name": "X", "grants": [{"tool_set": "a", "mcp_server": "b"}]}),
            ),
        ),
        422,
        "exactly one",
    );
    assert_eq!(p["field"], "grants[0]");
    let p = problem(
        &api.request(
            "POST",
            "/agents",
            Some(&json!({"id": "x", "name": "X", "grants": [{"tool_set": 7}]})),
        ),
        422,
        "invalid type",
    );
    assert_eq!(p["field"], "grants[0].tool_set");
    problem(
        &api.request("GET", "/agents/nope", None),
        404,
        "`nope` does not exist",
    );
    let p = problem(
        &api.request("POST", "/agents", Some(&json!({"name": "No id"}))),
        422,
        "required to create",
    );
    assert_eq!(p["field"], "id");
    let p = problem(
        &api.request("PUT", "/agents/web", Some(&json!({"name": "No version"}))),
        422,
        "send the version you read",
    );
    assert_eq!(p["field"], "version");
    let big = json!({"id": "big", "name": "x".repeat(1_100_000)});
    problem(
        &api.request("POST", "/agents", Some(&big)),
        413,
        "larger than",
    );

    // Replace with the version read; a stale version is a 409 and loses nothing.
    let mut update =
        json!({"version": 1, "name": "Web search", "grants": [{"tool_set": "data-tools"}]});
    let r = api.request("PUT", "/agents/web", Some(&update));
    assert_eq!(json_of(&r)["version"], 2, "{}", r.body);
    update["name"] = json!("Someone else's edit");
    problem(
        &api.request("PUT", "/agents/web", Some(&update)),
        409,
        "version 2, not 1",
    );
    assert_eq!(
        json_of(&api.request("GET", "/agents/web", None))["name"],
        "Web search"
    );
    problem(
        &api.request("PUT", "/agents/helper", Some(&update)),
        409,
        "toolhost.toml",
    );

    // A viewer reads but does not change; a token without `tools:read` does not read.
    let viewer = Api {
        addr: &server.addr,
        token: Some(new_token(
            &f,
            &db,
            &["--user", "vic", "--scope", "tools:read", "--scope", "admin"],
        )),
    };
    assert_eq!(viewer.request("GET", "/agents/web", None).status, 200);
    problem(
        &viewer.request("DELETE", "/agents/web", None),
        403,
        "needs the role operator",
    );
    let caller_only = Api {
        addr: &server.addr,
        token: Some(new_token(
            &f,
            &db,
            &["--user", "cal", "--scope", "tools:call"],
        )),
    };
    problem(
        &caller_only.request("GET", "/agents", None),
        403,
        "`tools:read`",
    );

    // The checks /mcp makes on Host and Origin.
    let admin_auth = format!("Bearer {}", api.token.as_deref().unwrap());
    let r = send_to(
        &server.addr,
        "GET",
        "/api/v1/agents",
        &[("Host", "evil.com"), ("Authorization", &admin_auth)],
        b"",
    );
    problem(&r, 403, "Host");
    let r = send_to(
        &server.addr,
        "GET",
        "/api/v1/agents",
        &[
            ("Host", "127.0.0.1"),
            ("Origin", "http://evil.com"),
            ("Authorization", &admin_auth),
        ],
        b"",
    );
    problem(&r, 403, "Origin");

    // An agent made through the API is served to a token bound to it.
    let bound = new_token(&f, &db, &["--user", "alice", "--agent", "web"]);
    let session = Session::open(
        &server.addr,
        &[("Authorization", &format!("Bearer {bound}"))],
    );
    let r = session.post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert!(
        r.body.contains("\"echo\"") && r.body.contains("\"slow\""),
        "{}",
        r.body
    );

    // Deleting it with a stale version is refused; with the current one it goes.
    problem(
        &api.request("DELETE", "/agents/web?version=1", None),
        409,
        "version 2",
    );
    assert_eq!(
        api.request("DELETE", "/agents/web?version=2", None).status,
        204
    );
    problem(
        &api.request("GET", "/agents/web", None),
        404,
        "does not exist",
    );
    assert!(server.stop().success());

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = toolhost_store::Store::open(toolhost_store::Location::Sqlite(db), None)
            .await
            .unwrap();
        let audit = store.audit(None, 100).await.unwrap().items;
        let agent_changes: Vec<(&str, &str)> = audit
            .iter()
            .filter(|e| e.target_kind == "agent")
            .map(|e| (e.actor.as_str(), e.action.as_str()))
            .collect();
        assert_eq!(
            agent_changes,
            [
                ("admin", "agent.delete"),
                ("admin", "agent.update"),
                ("admin", "agent.create")
            ]
        );
        store.close().await;
    });
}

#[test]
fn tokens_users_calls_and_audit_through_the_api() {
    let f = Fixture::new();
    let db = f.dir.path().join("toolhost.db");
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(&db);
    let mut server = Server::start(cmd);
    let admin = Api {
        addr: &server.addr,
        token: Some(admin_token(&server.logs())),
    };

    // Users and their roles.
    let r = admin.request("PUT", "/users/alice", Some(&json!({"role": "operator"})));
    assert_eq!(json_of(&r)["role"], "operator", "{}", r.body);
    problem(
        &admin.request("PUT", "/users/admin", Some(&json!({"role": "viewer"}))),
        409,
        "cannot lower their own role",
    );
    let p = problem(
        &admin.request("PUT", "/users/alice", Some(&json!({"role": "owner"}))),
        422,
        "unknown variant `owner`",
    );
    assert_eq!(p["field"], "role");
    let users = json_of(&admin.request("GET", "/users", None));
    assert_eq!(users.as_array().unwrap().len(), 2, "{users}");

    // A token for alice, shown once; then alice's own view.
    let r = admin.request(
        "POST",
        "/tokens",
        Some(&json!({"name": "alice's laptop", "user": "alice", "scopes": ["tools:read", "tools:call", "admin"]})),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let made = json_of(&r);
    let secret = made["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with(&format!("th_{}_", made["token"]["id"].as_str().unwrap())));
    let alice = Api {
        addr: &server.addr,
        token: Some(secret.clone()),
    };
    let listed = json_of(&admin.request("GET", "/tokens", None));
    assert_eq!(
        listed.as_array().unwrap().len(),
        2,
        "the admin sees every token"
    );
    assert!(
        !listed.to_string().contains(&secret),
        "secrets are never listed"
    );
    let own = json_of(&alice.request("GET", "/tokens", None));
    assert_eq!(own.as_array().unwrap().len(), 1, "{own}");
    problem(
        &alice.request(
            "POST",
            "/tokens",
            Some(&json!({"name": "x", "user": "admin"})),
        ),
        403,
        "only an admin",
    );
    let r = alice.request(
        "POST",
        "/tokens",
        Some(&json!({"name": "read only", "scopes": ["tools:read"]})),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let reader = json_of(&r)["secret"].as_str().unwrap().to_string();
    let reader_api = Api {
        addr: &server.addr,
        token: Some(reader),
    };
    problem(
        &reader_api.request(
            "POST",
            "/tokens",
            Some(&json!({"name": "more", "scopes": ["tools:call"]})),
        ),
        403,
        "lacks the scope `admin`",
    );
    problem(
        &alice.request(
            "POST",
            "/tokens",
            Some(&json!({"name": "x", "agent": "nobody"})),
        ),
        404,
        "`nobody` does not exist",
    );

    // Alice's call is in her history, and in the admin's, filtered.
    let session = Session::open(
        &server.addr,
        &[("Authorization", &format!("Bearer {secret}"))],
    );
    let r = session.post(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"logged"}}}"#,
    );
    assert!(r.body.contains("logged"), "{}", r.body);
    let mut calls = Value::Null;
    for _ in 0..100 {
        calls = json_of(&alice.request("GET", "/calls", None));
        if !calls["items"].as_array().unwrap().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let item = &calls["items"][0];
    assert_eq!(
        (
            item["tool"].as_str(),
            item["user"].as_str(),
            item["outcome"].as_str(),
            item["transport"].as_str()
        ),
        (
            Some("echo"),
            Some("alice"),
            Some("success"),
            Some("mcp-http")
        ),
        "{calls}"
    );
    let filtered =
        json_of(&admin.request("GET", "/calls?user=alice&tool=echo&outcome=success", None));
    assert_eq!(filtered["items"].as_array().unwrap().len(), 1, "{filtered}");
    let none = json_of(&admin.request("GET", "/calls?tool=slow", None));
    assert!(none["items"].as_array().unwrap().is_empty());
    problem(
        &admin.request("GET", "/calls?colour=red", None),
        400,
        "colour",
    );
    let metrics = admin.request("GET", "/metrics", None);
    assert!(
        metrics
            .header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    assert!(
        metrics
            .body
            .contains("toolhost_calls_total{tool=\"echo\",outcome=\"success\"} 1\n"),
        "{}",
        metrics.body
    );
    assert!(
        metrics
            .body
            .contains("toolhost_call_duration_seconds_count 1\n"),
        "{}",
        metrics.body
    );
    assert!(
        metrics.body.contains("toolhost_workers "),
        "{}",
        metrics.body
    );
    let nobody = Api {
        addr: &server.addr,
        token: None,
    };
    problem(&nobody.request("GET", "/metrics", None), 401, "Bearer");

    // Another user's token is a 404 to alice; the admin revokes hers, and it dies.
    let admin_id = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["user"] == "admin")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    problem(
        &alice.request("DELETE", &format!("/tokens/{admin_id}"), None),
        404,
        "does not exist",
    );
    let alice_id = made["token"]["id"].as_str().unwrap();
    let r = admin.request("DELETE", &format!("/tokens/{alice_id}"), None);
    assert!(json_of(&r)["revoked_at"].is_i64(), "{}", r.body);
    problem(&alice.request("GET", "/agents", None), 401, "Bearer");

    // The audit log: admins only; every change above, by whom.
    problem(&reader_api.request("GET", "/audit", None), 403, "");
    let audit = json_of(&admin.request("GET", "/audit", None));
    let actions: Vec<(&str, &str)> = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["actor"].as_str().unwrap(), e["action"].as_str().unwrap()))
        .collect();
    assert_eq!(
        &actions[..4],
        [
            ("admin", "token.revoke"),
            ("alice", "token.create"),
            ("admin", "token.create"),
            ("admin", "user.put"),
        ],
        "{actions:?}"
    );
    assert!(server.stop().success());
}
