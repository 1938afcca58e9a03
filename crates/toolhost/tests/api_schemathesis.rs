//! schemathesis (from PyPI, pinned and installed by `scripts/test`) against the live API of
//! `serve --database`, on SQLite and on the PostgreSQL `scripts/test` starts (some inputs
//! fail on one engine only): every operation of the document the server serves, with generated
//! requests (valid and invalid ones: coverage, fuzzing and stateful phases), a fixed seed
//! and a bounded number of examples. No answer may be a 5xx, and each must be one the
//! document declares: its status, content type, headers and body schema; a request
//! without a valid token must be refused; a deleted object must stay gone and a created
//! one must be there.
//!
//! Its token is a `[[serve.tokens]]` entry of toolhost.toml, not a stored one: the run
//! revokes tokens (`DELETE /tokens/{id}`, with ids it lists from `GET /tokens`) and changes
//! roles (`PUT /users/{name}`), which would lock it out halfway with the first admin's
//! token, and turn the rest of the run into 401s that pass unnoticed. A token of the
//! configuration file has the admin role and every scope, and nothing in the API can
//! revoke or demote it; so every operation stays in the run, destructive ones included.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Fixture, Server};
use raw_http::{Session, send_to};
use serde_json::Value;
use stored::admin_token;

/// The run's token: only its hash is in toolhost.toml.
const TOKEN: &str = "schemathesis-7f3a9c1e5b2d4f60";
/// Generated requests per operation and phase: the whole run takes seconds, well under
/// two minutes on two busy cores.
const EXAMPLES: &str = "60";
const SEED: &str = "20261201";

/// The schemathesis command of the venv `scripts/test` makes (or
/// `$TOOLHOST_TEST_SCHEMATHESIS`).
fn schemathesis() -> PathBuf {
    let path = std::env::var_os("TOOLHOST_TEST_SCHEMATHESIS")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repo().join("target/schemathesis-venv/bin/schemathesis"));
    assert!(
        path.is_file(),
        "schemathesis is not installed at {}: run `bash scripts/test` (it creates that venv), \
         or set TOOLHOST_TEST_SCHEMATHESIS",
        path.display()
    );
    path
}

/// `toolhost token hash`, fed the token on stdin.
fn token_hash(f: &Fixture) -> String {
    let mut child = f
        .toolhost()
        .args(["token", "hash"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(TOKEN.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn api(addr: &str, token: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let auth = format!("Bearer {token}");
    let mut headers = vec![("Host", "127.0.0.1"), ("Authorization", auth.as_str())];
    let body = body.map(Value::to_string).unwrap_or_default();
    if !body.is_empty() {
        headers.push(("Content-Type", "application/json"));
    }
    let r = send_to(
        addr,
        method,
        &format!("/api/v1{path}"),
        &headers,
        body.as_bytes(),
    );
    (
        r.status,
        serde_json::from_str(&r.body).unwrap_or(Value::Null),
    )
}

/// A new database on the test PostgreSQL server (`scripts/test` starts it).
fn fresh_postgres() -> String {
    let url = std::env::var("TOOLHOST_TEST_DATABASE_URL").unwrap_or_else(|_| {
        panic!(
            "TOOLHOST_TEST_DATABASE_URL is not set: run `bash scripts/test`, which installs \
             PostgreSQL and starts it on loopback for the tests"
        )
    });
    let name = format!("t_{}", toolhost_store::new_id());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            use sqlx::Connection;
            let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut admin)
                .await
                .unwrap();
            admin.close().await.unwrap();
        });
    let mut parsed = url::Url::parse(&url).unwrap();
    parsed.set_path(&name);
    parsed.to_string()
}

#[test]
fn on_sqlite_schemathesis_finds_no_server_error_and_no_answer_the_document_does_not_declare() {
    run(|f| f.dir.path().join("toolhost.db").display().to_string());
}

#[test]
fn on_postgresql_schemathesis_finds_no_server_error_and_no_answer_the_document_does_not_declare() {
    run(|_| fresh_postgres());
}

/// Text no store can hold (PostgreSQL refuses NUL in text) is refused before it reaches
/// one: in a body, a 422 naming the field; in a query string, a 400; in a path, a 404.
fn nul_never_reaches_the_store(addr: &str) {
    let (status, problem) = api(
        addr,
        TOKEN,
        "POST",
        "/tokens",
        Some(&serde_json::json!({"name": "a\u{0}b"})),
    );
    assert_eq!(
        (status, problem["field"].as_str()),
        (422, Some("name")),
        "{problem}"
    );
    let (status, problem) = api(addr, TOKEN, "GET", "/calls?tool=a%00b", None);
    assert_eq!(status, 400, "{problem}");
    for path in ["/agents/a%00b", "/agents/%00/effective-tools"] {
        let (status, problem) = api(addr, TOKEN, "GET", path, None);
        assert_eq!(status, 404, "{path}: {problem}");
    }
    let (status, problem) = api(addr, TOKEN, "DELETE", "/tokens/%00", None);
    assert_eq!(status, 404, "{problem}");
}

fn run(database: impl Fn(&Fixture) -> String) {
    let schemathesis = schemathesis();
    let f = Fixture::new();
    std::fs::write(
        f.config(),
        format!(
            "{}[agents.helper]\ngrants = [{{ tool_set = \"data-tools\", deny = [\"slow\"] }}]\n\n\
             [[serve.tokens]]\nuser = \"fuzzer@example.com\"\nsha256 = \"{}\"\n",
            f.config_text(),
            token_hash(&f)
        ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(database(&f));
    let mut server = Server::start(cmd);
    let addr = server.addr.clone();
    let admin = admin_token(&server.logs());

    // Something to find: a stored agent beside the file's, and calls in the log (one that
    // ran, one refused), made through the real surfaces.
    let (status, created) = api(
        &addr,
        &admin,
        "POST",
        "/agents",
        Some(&serde_json::json!({"id": "stored", "name": "Stored",
            "grants": [{"tool_set": "data-tools", "rules": {"slow": "deny"}}]})),
    );
    assert_eq!(status, 201, "{created}");
    let session = Session::open(&addr, &[("Authorization", &format!("Bearer {admin}"))]);
    let r = session.post(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
    );
    assert!(r.body.contains("hi"), "{}", r.body);
    session.post(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    );
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, page) = api(&addr, TOKEN, "GET", "/calls", None);
        if page["items"].as_array().is_some_and(|i| i.len() == 2) {
            break;
        }
        assert!(
            Instant::now() < until,
            "the calls never reached the log: {page}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    nul_never_reaches_the_store(&addr);

    let reports = f.dir.path().join("schemathesis");
    let mut child = Command::new(&schemathesis)
        .arg("run")
        .arg(format!("http://{addr}/api/v1/openapi.json"))
        .args(["--header", &format!("Authorization: Bearer {TOKEN}")])
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,\
             response_headers_conformance,response_schema_conformance,ignored_auth,\
             use_after_free,ensure_resource_availability",
        ])
        .args(["--max-examples", EXAMPLES, "--seed", SEED, "--workers", "1"])
        .args(["--request-timeout", "20", "--generation-database", "none"])
        .args(["--no-color", "--report", "ndjson", "--report-dir"])
        .arg(&reports)
        .current_dir(f.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained on threads: a full pipe would stall the run.
    let out = std::thread::spawn({
        let mut stdout = child.stdout.take().unwrap();
        move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
            text
        }
    });
    let err = std::thread::spawn({
        let mut stderr = child.stderr.take().unwrap();
        move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
            text
        }
    });
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("schemathesis ran for more than 5 minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    eprintln!("{stdout}{stderr}");
    assert!(
        status.success(),
        "schemathesis found problems ({status}): see its report above"
    );

    // The run reached every operation past authentication, and the reads answered.
    let mut statuses: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for entry in std::fs::read_dir(&reports).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "ndjson") {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let event: Value = serde_json::from_str(line).unwrap();
            let recorder = &event["ScenarioFinished"]["recorder"];
            let Some(interactions) = recorder["interactions"].as_object() else {
                continue;
            };
            for (id, interaction) in interactions {
                let case = &recorder["cases"][id]["value"];
                let (Some(method), Some(path), Some(status)) = (
                    case["method"].as_str(),
                    case["path"].as_str(),
                    interaction["response"]["status_code"].as_u64(),
                ) else {
                    continue;
                };
                statuses
                    .entry(format!("{method} {path}"))
                    .or_default()
                    .insert(status);
            }
        }
    }
    let (_, doc) = api(&addr, TOKEN, "GET", "/openapi.json", None);
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let operation = format!("{} {path}", method.to_uppercase());
            let seen = statuses.get(&operation);
            assert!(
                seen.is_some_and(|s| s.iter().any(|c| *c != 401)),
                "{operation} was never answered past authentication: {seen:?}"
            );
            if method == "get" && !path.contains('{') {
                assert!(
                    seen.is_some_and(|s| s.iter().any(|c| (200..300).contains(c))),
                    "{operation} never answered 2xx: {seen:?}"
                );
            }
        }
    }
    // And the run's token still works: nothing locked it out.
    assert_eq!(api(&addr, TOKEN, "GET", "/agents", None).0, 200);
    assert!(server.stop().success());
}
