//! `toolhost serve` under floods: sockets that never finish a request, request bodies that
//! trickle in, clients that open session after session. Each is bounded by `[serve]`'s
//! timeouts and caps (small here, so the tests run fast), and a well-behaved client is
//! still served.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/raw_tcp.rs"]
mod raw_tcp;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use common::{Fixture, Server};
use raw_http::{MCP_POST, Session, send};

const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// `toolhost serve` over the fixture's tools with `[serve]` set to `serve`.
fn serve_with(f: &Fixture, serve: &str, fd_limit: Option<u32>) -> Server {
    std::fs::write(f.config(), format!("{}[serve]\n{serve}", f.config_text())).unwrap();
    let toolhost = env!("CARGO_BIN_EXE_toolhost");
    let mut cmd = match fd_limit {
        None => Command::new(toolhost),
        Some(n) => {
            let mut sh = Command::new("sh");
            sh.args([
                "-c",
                &format!("ulimit -n {n} && exec \"$0\" \"$@\""),
                toolhost,
            ]);
            sh
        }
    };
    f.environment(&mut cmd);
    cmd.args(["serve", "--no-store"])
        .arg("--tools-dir")
        .arg(f.tools());
    Server::start(cmd)
}

/// Whether the server closes `conn` (after any response) within 20 s.
fn closed_by_server(conn: &mut TcpStream) -> bool {
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

const HALF_HEADERS: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n";

#[test]
fn sockets_that_never_finish_a_request_cannot_lock_a_client_out() {
    // F11: under `ulimit -n 256`, 300 connections that sent nothing kept every legitimate
    // request waiting: the server could not accept another socket. Now the cap binds
    // before the descriptors run out, and each newcomer takes the place of the connection
    // idle the longest (timeouts are long here: only the cap can close them).
    let f = Fixture::new();
    let server = serve_with(
        &f,
        "max_connections = 32\nmax_connections_per_ip = 16\nheader_timeout = 600\nidle_timeout = 600\n",
        Some(256),
    );
    let addr = server.addr.as_str();
    let mut attackers: Vec<TcpStream> = (0..300)
        .map(|i| {
            let mut s = TcpStream::connect(addr).unwrap();
            // Half of them send half a request (slowloris), half nothing.
            if i % 2 == 1 {
                s.write_all(HALF_HEADERS).unwrap();
            }
            s
        })
        .collect();
    let session = Session::open(addr, &[]);
    let r = session.post(LIST);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains(r#""name":"echo""#), "{}", r.body);
    // The first ones made room long ago.
    for (i, s) in attackers.iter_mut().take(100).enumerate() {
        assert!(closed_by_server(s), "idle connection #{i} is still open");
    }
}

#[test]
fn a_half_sent_header_and_a_silent_socket_are_closed_in_time() {
    // F11: partial headers, and connections that sent nothing, stayed open for ever.
    let f = Fixture::new();
    let server = serve_with(&f, "header_timeout = 1\nidle_timeout = 1\n", None);
    let addr = server.addr.as_str();
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(HALF_HEADERS).unwrap();
    let mut silent = TcpStream::connect(addr).unwrap();
    // A connection kept alive after its response is closed once idle, too.
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.write_all(b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    assert!(closed_by_server(&mut half), "half-sent headers kept open");
    assert!(
        closed_by_server(&mut silent),
        "a silent connection kept open"
    );
    assert!(
        closed_by_server(&mut kept),
        "an idle kept-alive connection kept open"
    );
    // The server itself is fine.
    assert_eq!(Session::open(addr, &[]).post(LIST).status, 200);
}

#[test]
fn a_trickled_body_is_cut_off() {
    // F11: a body sent a byte at a time held its connection (and request) for ever.
    let f = Fixture::new();
    let server = serve_with(&f, "body_timeout = 1\n", None);
    let addr = server.addr.as_str();
    let mut conn = TcpStream::connect(addr).unwrap();
    let mut head = String::from("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (k, v) in MCP_POST {
        head += &format!("{k}: {v}\r\n");
    }
    head += "Content-Length: 100000\r\n\r\n{";
    conn.write_all(head.as_bytes()).unwrap();
    let mut trickle = conn.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        for _ in 0..300 {
            if trickle.write_all(b" ").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    assert!(
        closed_by_server(&mut conn),
        "a trickling body kept its connection"
    );
    writer.join().unwrap();
    assert_eq!(Session::open(addr, &[]).post(LIST).status, 200);
}

fn bearer(token: &str) -> [(&'static str, String); 1] {
    [("Authorization", format!("Bearer {token}"))]
}

fn open_as(addr: &str, token: &str) -> Session {
    let auth = bearer(token);
    Session::open(addr, &[(auth[0].0, auth[0].1.as_str())])
}

#[test]
fn sessions_are_capped_per_user_least_recently_used_first_and_overall() {
    // F12: 4,000 `initialize` with one token kept 4,000 sessions (535 MB) until they
    // idled out. Now a user keeps at most `max_sessions_per_user` (a new one ends their
    // least recently used), and the server `max_sessions` (a new one gets 503).
    let f = Fixture::new();
    let mut serve = String::from("max_sessions = 5\nmax_sessions_per_user = 3\n");
    for (user, token) in [
        ("ada@x.org", "ada-t"),
        ("bob@x.org", "bob-t"),
        ("cy@x.org", "cy-t"),
    ] {
        serve += &format!(
            "\n[[serve.tokens]]\nuser = \"{user}\"\nsha256 = \"{}\"\n",
            toolhost_host::hash_token(token)
        );
    }
    let server = serve_with(&f, &serve, None);
    let addr = server.addr.as_str();

    let a: Vec<Session> = (0..3).map(|_| open_as(addr, "ada-t")).collect();
    assert_eq!(a[0].post(LIST).status, 200);
    // a[1] is now ada's least recently used session: her fourth ends it.
    let a4 = open_as(addr, "ada-t");
    assert_eq!(a[1].post(LIST).status, 404);
    for s in [&a[0], &a[2], &a4] {
        assert_eq!(s.post(LIST).status, 200);
    }
    // A client leaking sessions keeps only its last three.
    let leaked: Vec<Session> = (0..20).map(|_| open_as(addr, "ada-t")).collect();
    for s in a.iter().chain([&a4]).chain(&leaked[..17]) {
        assert_eq!(
            s.post(LIST).status,
            404,
            "session {} outlived the cap",
            s.id
        );
    }
    for s in &leaked[17..] {
        assert_eq!(s.post(LIST).status, 200);
    }

    // Another user is not hurt by ada's leak.
    let b1 = open_as(addr, "bob-t");
    let _b2 = open_as(addr, "bob-t");
    assert_eq!(b1.post(LIST).status, 200);
    // Five sessions in all: the server is full, for everyone but users at their own cap.
    let auth = bearer("cy-t");
    let mut headers = MCP_POST.to_vec();
    headers.push((auth[0].0, auth[0].1.as_str()));
    let r = send(addr, "POST", &headers, INIT.as_bytes());
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body.contains("maximum number of sessions"), "{}", r.body);
    assert!(r.header("retry-after").is_some());
    // A user at her own cap trades her oldest session for the new one: no growth.
    let a_again = open_as(addr, "ada-t");
    assert_eq!(a_again.post(LIST).status, 200);
    assert_eq!(leaked[17].post(LIST).status, 404);
    // Once one ends, there is room again.
    let mut delete = headers.clone();
    delete.retain(|(k, _)| *k != "Authorization");
    let bob = bearer("bob-t");
    delete.push((bob[0].0, bob[0].1.as_str()));
    delete.push(("Mcp-Session-Id", b1.id.as_str()));
    delete.push(("MCP-Protocol-Version", "2025-11-25"));
    assert_eq!(send(addr, "DELETE", &delete, b"").status, 202);
    assert_eq!(open_as(addr, "cy-t").post(LIST).status, 200);
}

/// `serve`'s resident memory (KiB) and open descriptors.
fn footprint(server: &Server) -> (u64, usize) {
    let pid = server.child.id();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in /proc/{pid}/status"));
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    (rss, fds)
}

/// One stateless (2026-07-28) request, on a connection of its own; the answer's body.
fn stateless(addr: &str, method: &str, mut params: serde_json::Value) -> String {
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        .to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
    );
    if let Some(name) = params["name"].as_str() {
        head += &format!("Mcp-Name: {name}\r\n");
    }
    let request = format!("{head}Content-Length: {}\r\n\r\n{body}", body.len());
    let replies = raw_tcp::exchange(addr, request.as_bytes());
    assert!(
        replies.len() == 1 && replies[0].status == 200,
        "{replies:?}"
    );
    replies[0].body.clone()
}

/// Review row 53: 2,000 stateless `tools/list` and 300 calls, each on its own connection,
/// leave `serve`'s memory and open descriptors where they were (within allocator noise):
/// a stateless request keeps nothing.
#[test]
fn many_stateless_requests_leave_memory_and_descriptors_flat() {
    let f = Fixture::new();
    let server = serve_with(&f, "", None);
    let addr = server.addr.as_str();
    let list = |_| {
        let body = stateless(addr, "tools/list", serde_json::json!({}));
        assert!(body.contains(r#""name":"echo""#), "{body}");
    };
    let call = |i: usize| {
        let text = format!("n{i}");
        let params = serde_json::json!({"name": "echo", "arguments": {"text": text}});
        let body = stateless(addr, "tools/call", params);
        assert!(body.contains(&format!(r#""text":"{text}""#)), "{body}");
    };
    // Warm up first: the worker, the runtime's threads and caches exist before measuring.
    (0..100).for_each(list);
    (0..30).for_each(call);
    let (rss_before, fds_before) = footprint(&server);
    (0..2000).for_each(list);
    (0..300).for_each(call);
    let (rss_after, fds_after) = footprint(&server);
    eprintln!("serve: VmRSS {rss_before} -> {rss_after} KiB, fds {fds_before} -> {fds_after}");
    assert!(
        rss_after < rss_before + 30 * 1024,
        "VmRSS grew from {rss_before} to {rss_after} KiB"
    );
    assert!(
        fds_after < fds_before + 20,
        "open descriptors grew from {fds_before} to {fds_after}"
    );
}
