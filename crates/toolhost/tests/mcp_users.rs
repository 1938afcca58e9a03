//! Users on `toolhost serve`: bearer tokens (stored as hashes) name the user; each user's
//! own tools override the global ones for them alone and run in their home; no token or a
//! wrong one gets a bare 401; without tokens the server will not leave loopback.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/raw_tcp.rs"]
mod raw_tcp;

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
    cmd.args(["serve", "--no-store"])
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
    // S9: the very answer a session that does not exist gets, so it tells bob nothing of
    // ada's session and runs nothing in it (a negative check alone passes on any error).
    let unknown = Session {
        addr: addr.to_string(),
        id: "no-such-session".into(),
        revision: hijack.revision.clone(),
        extra: hijack.extra.clone(),
    }
    .post(&call(4, "echo", json!({"text": "hi"})));
    assert_eq!(
        (r.status, r.body.as_str()),
        (404, "Not Found: Session not found"),
        "{}",
        r.body
    );
    assert_eq!((r.status, &r.body), (unknown.status, &unknown.body));
    hijack.extra.clear();
    assert_eq!(hijack.post(LIST).status, 401);
}

#[test]
fn a_session_answers_only_the_user_who_opened_it() {
    // F13: with b's token and a's `Mcp-Session-Id`, DELETE ended a's session and a GET
    // stream received a's `list_changed`. Another user's session is now as unknown to
    // them as a made-up one: 404 for POST, GET and DELETE alike.
    let f = Fixture::new();
    let hash = toolhost_host::hash_token;
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
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data());
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
        .args([
            "serve",
            "--no-store",
            "--listen",
            "0.0.0.0:0",
            "--tools-dir",
        ])
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
        .args(["token", "new", "--no-store", "--user", "ada@example.com"])
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

/// A token as long as `token new` makes them, with letters (so its upper-case is another).
const ADA_TOKEN: &str = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";
const BOB_TOKEN: &str = "bob-token-6e0d2a";

/// `serve --data` with tokens for ada@example.com and bob@example.com.
fn serve_ada_and_bob(f: &Fixture) -> Server {
    let hash = toolhost_host::hash_token;
    std::fs::write(
        f.config(),
        f.config_text()
            + &format!(
                "[[serve.tokens]]\nuser = \"ada@example.com\"\nsha256 = \"{}\"\n\n[[serve.tokens]]\nuser = \"bob@example.com\"\nsha256 = \"{}\"\n",
                hash(ADA_TOKEN),
                hash(BOB_TOKEN),
            ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data());
    Server::start(cmd)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// Review row 43: only `Bearer` with the exact token authenticates. Missing, wrong or
/// empty values, the scheme alone, Basic, a prefix of the token, its stored hash, its
/// upper-case, and the token with more after it each get a bare 401 with
/// `WWW-Authenticate: Bearer`.
#[test]
fn only_the_exact_bearer_token_authenticates() {
    let f = Fixture::new();
    let server = serve_ada_and_bob(&f);
    let addr = server.addr.as_str();
    let hash = toolhost_host::hash_token(ADA_TOKEN);
    let upper = ADA_TOKEN.to_uppercase();
    assert_ne!(upper, ADA_TOKEN);
    let wrong = [
        None,
        Some("Bearer wrong".to_string()),
        Some(String::new()),
        Some("Bearer".to_string()),
        Some("Bearer ".to_string()),
        Some(format!("Basic {ADA_TOKEN}")),
        Some("Basic YWRhQGV4YW1wbGUuY29tOmFkYQ==".to_string()),
        Some(ADA_TOKEN.to_string()),
        Some(format!("Bearer {}", &ADA_TOKEN[..32])),
        Some(format!("Bearer {hash}")),
        Some(format!("Bearer {upper}")),
        Some(format!("Bearer {ADA_TOKEN}x")),
        Some(format!("Bearer {ADA_TOKEN} {ADA_TOKEN}")),
    ];
    for auth in &wrong {
        let mut headers = MCP_POST.to_vec();
        if let Some(a) = auth {
            headers.push(("Authorization", a));
        }
        let r = send(addr, "POST", &headers, INIT.as_bytes());
        assert_eq!(r.status, 401, "{auth:?}: {}", r.body);
        assert_eq!(r.body, "", "a 401 tells nothing");
        assert_eq!(r.header("www-authenticate"), Some("Bearer"), "{auth:?}");
    }
    let right = format!("Bearer {ADA_TOKEN}");
    let s = Session::open(addr, &[("Authorization", &right)]);
    assert_eq!(s.post(LIST).status, 200);
}

/// Review row 44: a token in the query string (`?access_token=`, `?token=`) is not a token:
/// 401, while the same path with the token in `Authorization` is served.
#[test]
fn a_token_in_the_query_string_is_not_a_token() {
    let f = Fixture::new();
    let server = serve_ada_and_bob(&f);
    let addr = server.addr.as_str();
    let request = |path: &str, auth: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n{auth}\
             Content-Length: {}\r\n\r\n{INIT}",
            INIT.len()
        )
    };
    for path in [
        format!("/mcp?access_token={ADA_TOKEN}"),
        format!("/mcp?token={ADA_TOKEN}"),
        format!("/mcp?access_token={ADA_TOKEN}&token={ADA_TOKEN}"),
    ] {
        let replies = raw_tcp::exchange(addr, request(&path, "").as_bytes());
        let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [401], "{path}: {replies:?}");
        assert_eq!(replies[0].header("www-authenticate"), Some("Bearer"));
    }
    let auth = format!("Authorization: Bearer {ADA_TOKEN}\r\n");
    let path = format!("/mcp?access_token={ADA_TOKEN}");
    let replies = raw_tcp::exchange(addr, request(&path, &auth).as_bytes());
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200], "{replies:?}");
}

/// Review row 45 (with tokens): a valid token does not make a foreign `Host` or `Origin`
/// acceptable: still 403.
#[test]
fn foreign_hosts_and_origins_are_refused_even_with_a_token() {
    let f = Fixture::new();
    let server = serve_ada_and_bob(&f);
    let addr = server.addr.as_str();
    let auth = format!("Bearer {ADA_TOKEN}");
    let with = |name: &'static str, value: &str| {
        let mut headers = MCP_POST.to_vec();
        headers.push(("Authorization", &auth));
        headers.push((name, value));
        send(addr, "POST", &headers, INIT.as_bytes())
    };
    for host in common::FOREIGN_HOSTS {
        let r = with("Host", host);
        assert_eq!(r.status, 403, "Host {host}: {}", r.body);
    }
    for origin in common::FOREIGN_ORIGINS {
        let r = with("Origin", origin);
        assert_eq!(r.status, 403, "Origin {origin}: {}", r.body);
    }
    let r = with("Origin", "http://localhost:3000");
    assert_eq!(r.status, 200, "a loopback Origin: {}", r.body);
}

/// Review row 33: a user's own tool is no tool at all for another user: not listed, and
/// calling it is `-32602` unknown tool (it does not run), while its owner calls it.
#[test]
fn another_users_own_tool_is_unknown_to_them() {
    let f = Fixture::new();
    let own = f.data().join("ada@example.com/tools/ada_only");
    copy_dir(&f.tools().join("echo"), &own);
    let md = own.join("TOOL.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(&md, text.replace("name: echo", "name: ada_only")).unwrap();
    let server = serve_ada_and_bob(&f);
    let addr = server.addr.as_str();
    let (ada_auth, bob_auth) = (format!("Bearer {ADA_TOKEN}"), format!("Bearer {BOB_TOKEN}"));
    let ada = Session::open(addr, &[("Authorization", &ada_auth)]);
    let bob = Session::open(addr, &[("Authorization", &bob_auth)]);
    assert!(ada.post(LIST).body.contains(r#""name":"ada_only""#));
    let r = ada.post(&call(3, "ada_only", json!({"text": "mine"})));
    assert!(r.body.contains(r#""text":"mine""#), "{}", r.body);

    let listed = bob.post(LIST).body;
    assert!(
        listed.contains(r#""name":"echo""#) && !listed.contains("ada_only"),
        "{listed}"
    );
    let r = bob.post(&call(4, "ada_only", json!({"text": "theirs"})));
    let answer: serde_json::Value = serde_json::from_str(
        r.body
            .lines()
            .find_map(|l| l.strip_prefix("data:"))
            .unwrap_or(&r.body)
            .trim(),
    )
    .unwrap_or_else(|e| panic!("{e}: {}", r.body));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{answer}"
    );
}

/// The host's first non-loopback IPv4 address, as the kernel's local routes list it.
fn own_interface_address() -> Option<std::net::Ipv4Addr> {
    let text = std::fs::read_to_string("/proc/net/fib_trie").ok()?;
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .filter(|w| w[1].contains("/32 host LOCAL"))
        .filter_map(|w| w[0].split_whitespace().last()?.parse().ok())
        .find(|ip: &std::net::Ipv4Addr| !ip.is_loopback())
}

/// Review row 54: without tokens, `serve` refuses every address that is not loopback,
/// however it is spelt (the IPv6 wildcard, IPv4-mapped IPv6 forms, the host's own
/// interface address): exit 2 before binding. Other loopback addresses (127.0.0.2, ::1)
/// are served.
#[test]
fn without_tokens_serve_stays_on_loopback_in_every_spelling() {
    let f = Fixture::new();
    let own = own_interface_address().unwrap_or_else(|| {
        panic!(
            "this machine has no non-loopback IPv4 address to test with (see /proc/net/fib_trie)"
        )
    });
    for listen in [
        "[::]:0".to_string(),
        "[::ffff:127.0.0.1]:0".to_string(),
        "[::ffff:0.0.0.0]:0".to_string(),
        format!("{own}:0"),
    ] {
        let out = f
            .toolhost()
            .args(["serve", "--no-store", "--listen", &listen, "--tools-dir"])
            .arg(f.tools())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{listen}: {err}");
        assert!(
            err.contains(&format!(
                "refusing to listen on {listen} without authentication"
            )),
            "{listen}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    let ipv6 = std::fs::read_to_string("/proc/net/if_inet6").unwrap_or_default();
    assert!(
        ipv6.lines()
            .any(|l| l.starts_with("00000000000000000000000000000001")),
        "this machine has no IPv6 loopback address (::1 is not in /proc/net/if_inet6)"
    );
    for listen in ["127.0.0.2:0", "[::1]:0"] {
        let mut cmd = f.toolhost();
        cmd.args(["serve", "--no-store"])
            .arg("--tools-dir")
            .arg(f.tools());
        let mut server = Server::start_at(cmd, listen);
        let r = Session::open(&server.addr, &[]).post(LIST);
        assert!(r.body.contains(r#""name":"echo""#), "{listen}: {}", r.body);
        assert!(server.stop().success(), "{listen}");
    }
}
