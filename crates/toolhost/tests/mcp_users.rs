//! Users on `toolhost serve`: bearer tokens (stored as hashes) name the user; each user's
//! own tools override the global ones for them alone and run in their home; no token or a
//! wrong one gets a bare 401; without tokens the server will not leave loopback.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;

use std::io::Write;
use std::process::Stdio;

use common::{Fixture, Server, copy_dir};
use raw_http::{MCP_POST, Session, send};
use serde_json::json;

fn call(id: u64, name: &str, args: serde_json::Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": args}})
    .to_string()
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn token_hash(f: &Fixture, token: &str) -> String {
    let mut child = f
        .toolhost()
        .args(["token", "hash"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{token}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn tokens_map_requests_to_users_with_their_own_tools_and_homes() {
    let f = Fixture::new();
    let ada = "ada@example.com";
    // Ada overrides `echo` with her own: it says whose it is and where it runs.
    let own = f.data().join(ada).join("tools");
    copy_dir(&f.tools().join("echo"), &own.join("echo"));
    let md = own.join("echo/TOOL.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(
        &md,
        text.replace("Returns the text it is given.", "Ada's own echo."),
    )
    .unwrap();
    std::fs::write(
        own.join("echo/index.ts"),
        "import { writeFileSync } from 'node:fs';\n\
         export async function execute(_id: string, p: { text: string }) {\n\
         writeFileSync(`${process.env.HOME}/ran-here`, 'ada');\n\
         return `ada: ${p.text}`;\n}\n",
    )
    .unwrap();
    let config = f.dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        f.config_text()
            + &format!(
            "[[serve.tokens]]\nuser = \"{ada}\"\nsha256 = \"{}\"\n\n[[serve.tokens]]\nuser = \"bob@example.com\"\nsha256 = \"{}\"\n",
            token_hash(&f, "ada-secret"),
            token_hash(&f, "bob-secret").to_uppercase(),
        ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.arg("serve")
        .arg("--data")
        .arg(f.data())
        .arg("--config")
        .arg(&config);
    let server = Server::start(cmd);
    let addr = server.addr.as_str();

    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    for auth in [
        None,
        Some("Bearer wrong"),
        Some("Basic ada-secret"),
        Some("ada-secret"),
    ] {
        let mut headers = MCP_POST.to_vec();
        if let Some(a) = auth {
            headers.push(("Authorization", a));
        }
        let r = send(addr, "POST", &headers, init);
        assert_eq!(r.status, 401, "{auth:?}");
        assert_eq!(r.body, "", "a 401 tells nothing");
        assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    }

    let ada_s = Session::open(addr, &[("Authorization", "Bearer ada-secret")]);
    let bob_s = Session::open(addr, &[("Authorization", "Bearer bob-secret")]);
    assert!(ada_s.post(LIST).body.contains("Ada's own echo."));
    let bob_list = bob_s.post(LIST).body;
    assert!(
        bob_list.contains("Returns the text it is given.") && !bob_list.contains("Ada"),
        "{bob_list}"
    );
    let r = ada_s.post(&call(3, "echo", json!({"text": "hi"})));
    assert!(r.body.contains(r#""text":"ada: hi""#), "{}", r.body);
    // Her call ran in her home (whatever path the sandbox shows it at).
    assert!(f.data().join(ada).join("ran-here").is_file());
    let r = bob_s.post(&call(3, "echo", json!({"text": "hi"})));
    assert!(r.body.contains(r#""text":"hi""#), "{}", r.body);
    // A session is no way into another user's tools: it answers only its own user.
    let mut hijack = Session {
        addr: addr.to_string(),
        id: ada_s.id.clone(),
        revision: ada_s.revision.clone(),
        extra: vec![("Authorization".into(), "Bearer bob-secret".into())],
    };
    let r = hijack.post(&call(4, "echo", json!({"text": "hi"})));
    assert_eq!(r.status, 404, "{}", r.body);
    assert!(!r.body.contains("ada:"), "{}", r.body);
    hijack.extra.clear();
    assert_eq!(hijack.post(LIST).status, 401);
}

#[test]
fn a_session_answers_only_the_user_who_opened_it() {
    // F13: with b's token and a's `Mcp-Session-Id`, DELETE ended a's session and a GET
    // stream received a's `list_changed`. Another user's session is now as unknown to
    // them as a made-up one: 404 for POST, GET and DELETE alike.
    let f = Fixture::new();
    let hash = toolhost_mcp::tokens::hash_token;
    std::fs::write(
        f.config(),
        f.config_text()
            + &format!(
                "[[serve.tokens]]\nuser = \"a@x.org\"\nsha256 = \"{}\"\n\n[[serve.tokens]]\nuser = \"b@x.org\"\nsha256 = \"{}\"\n",
                hash("a-secret"),
                hash("b-secret"),
            ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.arg("serve").arg("--data").arg(f.data());
    let server = Server::start(cmd);
    let addr = server.addr.as_str();
    let a = Session::open(addr, &[("Authorization", "Bearer a-secret")]);
    let stolen = Session {
        addr: addr.to_string(),
        id: a.id.clone(),
        revision: a.revision.clone(),
        extra: vec![("Authorization".into(), "Bearer b-secret".into())],
    };
    let not_found = (404, "Not Found: Session not found");
    let r = stolen.post(LIST);
    assert_eq!((r.status, r.body.as_str()), not_found);
    let made_up = "0b7e6b3e-5f57-4a53-9a43-2d1c9c0f0c11";
    for id in [a.id.as_str(), made_up] {
        let b = [
            ("Authorization", "Bearer b-secret"),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", id),
        ];
        let r = send(addr, "DELETE", &b, b"");
        assert_eq!((r.status, r.body.as_str()), not_found, "DELETE {id}");
        let mut get = b.to_vec();
        get.push(("Accept", "text/event-stream"));
        let r = send(addr, "GET", &get, b"");
        assert_eq!((r.status, r.body.as_str()), not_found, "GET {id}");
    }
    // a's session lived through it all, and a can end it.
    assert_eq!(a.post(LIST).status, 200);
    let del = [
        ("Authorization", "Bearer a-secret"),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", a.id.as_str()),
    ];
    assert_eq!(send(addr, "DELETE", &del, b"").status, 202);
    assert_eq!(a.post(LIST).status, 404);
}

#[test]
fn without_tokens_serve_stays_on_loopback() {
    let f = Fixture::new();
    let out = f
        .toolhost()
        .args(["serve", "--listen", "0.0.0.0:0", "--tools-dir"])
        .arg(f.tools())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without authentication"),
        "{err}"
    );
}

#[test]
fn token_new_prints_a_token_and_the_entry_holding_its_hash() {
    let f = Fixture::new();
    let out = f
        .toolhost()
        .args(["token", "new", "--user", "ada@example.com"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let token = text
        .lines()
        .next()
        .unwrap()
        .strip_prefix("token: ")
        .unwrap();
    assert_eq!(token.len(), 64);
    let hash = token_hash(&f, token);
    assert!(text.contains(&format!("sha256 = \"{hash}\"")), "{text}");
    assert!(text.contains("user = \"ada@example.com\""), "{text}");
    assert!(!text[text.find("[[serve.tokens]]").unwrap()..].contains(token));
}
