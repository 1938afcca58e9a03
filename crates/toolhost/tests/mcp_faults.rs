//! Bad input and faults against `toolhost mcp` and `toolhost serve`: malformed JSON,
//! unknown methods, wrong types, huge messages, clients that go away mid-call or never
//! read. Each gets the protocol's error or is dropped; its calls are cancelled (the tool's
//! abort handler runs); other clients keep being served; no tool process outlives it all.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/raw_tcp.rs"]
mod raw_tcp;

use std::cell::RefCell;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Fixture, Server};
use raw_http::{MCP_POST, Session, read_until, send};
use serde_json::{Value, json};

/// How the client connects the server's stdin and stdout: pipes (Python, most shells) or
/// Unix socket pairs (Node.js), which Toolhost reads and writes by different code.
#[derive(Clone, Copy)]
enum Wiring {
    Pipes,
    Sockets,
}

type Reader = Box<dyn Read + Send>;

/// `toolhost mcp` with its stdout read line by line on a thread, and its stderr collected.
struct Stdio_ {
    child: Child,
    stdin: Option<Box<dyn Write>>,
    lines: mpsc::Receiver<Value>,
    stderr: common::stderr::Collected,
    /// Every message `wait` passed over, for `assert_nothing_else_answered`.
    skipped: RefCell<Vec<Value>>,
}

impl Stdio_ {
    fn start(f: &Fixture, wiring: Wiring) -> Stdio_ {
        let mut command = f.toolhost();
        command
            .args(["mcp", "--data"])
            .arg(f.data())
            .args(["--user", "tester"])
            .stderr(Stdio::piped());
        let (mut child, stdin, stdout): (Child, Box<dyn Write>, Reader) = match wiring {
            Wiring::Pipes => {
                command.stdin(Stdio::piped()).stdout(Stdio::piped());
                let mut child = command.spawn().unwrap();
                let stdin = child.stdin.take().unwrap();
                let stdout = child.stdout.take().unwrap();
                (child, Box::new(stdin), Box::new(stdout))
            }
            Wiring::Sockets => {
                let (ours_in, theirs_in) = UnixStream::pair().unwrap();
                let (ours_out, theirs_out) = UnixStream::pair().unwrap();
                command
                    .stdin(OwnedFd::from(theirs_in))
                    .stdout(OwnedFd::from(theirs_out));
                let child = command.spawn().unwrap();
                // Our copies of the server's ends go with `command`, so that closing
                // `ours_in` is an end of file for the server.
                drop(command);
                (child, Box::new(ours_in), Box::new(ours_out))
            }
        };
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let stderr = common::stderr::Collected::start("mcp", String::new(), stderr);
        let stdout = BufReader::new(stdout);
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let line = line.unwrap();
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Stdio_ {
            stdin: Some(stdin),
            child,
            lines,
            stderr,
            skipped: RefCell::default(),
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message matching `pred`, skipping others.
    fn wait(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let msg = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {what} within 20 s"));
            if pred(&msg) {
                return msg;
            }
            self.skipped.borrow_mut().push(msg);
        }
    }

    /// Fails if any message passed over so far was an answer (a message without a
    /// `method`: a result or an error, with or without an `id`): only notifications and
    /// the server's own requests may come unasked.
    fn assert_nothing_else_answered(&self) {
        let answers: Vec<String> = self
            .skipped
            .borrow()
            .iter()
            .filter(|m| m.get("method").is_none())
            .map(Value::to_string)
            .collect();
        assert!(answers.is_empty(), "answers nobody waited for: {answers:?}");
    }

    fn response(&self, id: u64) -> Value {
        self.wait(&format!("response {id}"), |m| m["id"] == id)
    }
}

fn call(id: u64, name: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": args, "_meta": {"progressToken": id}}})
    .to_string()
}

#[test]
fn stdio_answers_bad_input_and_cancels_calls_when_the_client_goes_away() {
    stdio_faults(Wiring::Pipes);
}

#[test]
fn stdio_over_sockets_answers_bad_input_and_cancels_calls_when_the_client_goes_away() {
    stdio_faults(Wiring::Sockets);
}

fn stdio_faults(wiring: Wiring) {
    let f = Fixture::new();
    let mut s = Stdio_::start(&f, wiring);
    s.send("garbage{");
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
    assert_eq!(s.response(1)["result"]["serverInfo"]["name"], "toolhost");
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send("[1, 2");
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#);
    let e = s.response(2);
    assert_eq!(e["error"]["code"], -32601, "{e}");
    // Not the bare method name: the message says what is wrong with it.
    assert_eq!(
        e["error"]["message"], "method not found: no/such/method",
        "{e}"
    );
    s.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":"x"}}"#);
    let e = s.response(3);
    assert_eq!(e["error"]["code"], -32602, "{e}");
    s.send(&call(4, "slow", json!({"steps": "lots"})));
    let r = s.response(4);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("steps")
    );
    s.send(&call(5, "nope", json!({})));
    assert_eq!(s.response(5)["error"]["code"], -32602);
    // Beyond the 8 MiB line cap: dropped without being buffered whole.
    let huge = call(6, "echo", json!({"text": "a".repeat(9 << 20)}));
    s.send(&huge);
    s.send(&call(7, "echo", json!({"text": "still serving"})));
    let r = s.response(7);
    assert_eq!(r["result"]["content"][0]["text"], "still serving", "{r}");
    // A large answer (beyond a socket's or pipe's buffer, within the runtime's 1 MiB cap)
    // arrives whole.
    let big = "b".repeat(900 << 10);
    s.send(&call(70, "echo", json!({ "text": big })));
    let r = s.response(70);
    assert!(
        r["result"]["content"][0]["text"] == big.as_str(),
        "a 900 KiB answer came back cut or changed"
    );
    // S8: the unparsable lines and the one over the cap were dropped: no parse error
    // (-32700, id null) and nothing for id 6 came back, only the answers asked for.
    s.assert_nothing_else_answered();

    // The client goes away mid-call: the call is cancelled and its abort handler runs.
    s.send(&call(
        8,
        "slow",
        json!({"steps": 400, "marker": "stdio-gone"}),
    ));
    s.wait("progress", |m| m["method"] == "notifications/progress");
    drop(s.stdin.take());
    let until = Instant::now() + Duration::from_secs(10);
    while s.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < until,
            "toolhost mcp kept running after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        f.home("tester").join("stdio-gone").exists(),
        "the abort handler did not run"
    );
    f.assert_no_tool_processes();
    // Review row 75: nothing above made the server panic.
    s.stderr.assert_no_panic();
}

fn serve(f: &Fixture) -> Server {
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data());
    Server::start(cmd)
}

#[test]
fn http_rejects_malformed_oversized_and_cross_origin_requests() {
    let f = Fixture::new();
    let server = serve(&f);
    let addr = server.addr.as_str();

    let r = send(addr, "POST", MCP_POST, b"garbage{");
    assert!(
        (400..500).contains(&r.status),
        "malformed JSON: {} {}",
        r.status,
        r.body
    );
    let r = send(addr, "POST", MCP_POST, &vec![b' '; 5 << 20]);
    assert_eq!(r.status, 413, "a 5 MiB body");
    let r = send(addr, "POST", &[("Content-Type", "text/plain")], b"{}");
    assert!(
        (400..500).contains(&r.status),
        "wrong content type: {}",
        r.status
    );
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut evil = MCP_POST.to_vec();
    evil.push(("Origin", "http://evil.example"));
    assert_eq!(
        send(addr, "POST", &evil, init).status,
        403,
        "a foreign Origin"
    );
    let mut rebinding = MCP_POST.to_vec();
    rebinding.push(("Host", "evil.example"));
    assert_eq!(
        send(addr, "POST", &rebinding, init).status,
        403,
        "a foreign Host"
    );
    let mut local = MCP_POST.to_vec();
    local.push(("Origin", "http://localhost:3000"));
    assert_eq!(
        send(addr, "POST", &local, init).status,
        200,
        "a loopback Origin"
    );

    // Unknown methods and wrong types inside a session are JSON-RPC errors.
    let session = Session::open(addr, &[]);
    let r = session.post(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#);
    assert!(r.body.contains("-32601"), "{}", r.body);
    assert!(
        r.body
            .contains(r#""message":"method not found: no/such/method""#),
        "{}",
        r.body
    );
    let r = session.post(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#);
    assert!(r.body.contains("-32602"), "{}", r.body);
    let r = session.post(&call(4, "echo", json!({"text": "ok"})));
    assert!(r.body.contains(r#""text":"ok""#), "{}", r.body);
    // A closed stream cancels its call, so nothing invites the client to resume one.
    assert!(!r.body.contains("retry:"), "a priming event: {}", r.body);
}

#[test]
fn http_client_leaving_mid_call_cancels_it_and_a_client_that_never_reads_harms_no_one() {
    let f = Fixture::new();
    let mut server = serve(&f);
    let addr = server.addr.clone();

    // Closing the stream of a running call fires the tool's abort signal.
    let session = Session::open(&addr, &[]);
    let mut conn = session.start(&call(
        2,
        "slow",
        json!({"steps": 400, "marker": "http-gone"}),
    ));
    read_until(&mut conn, "step 1 of 400");
    drop(conn);
    let marker = f.home("default").join("http-gone");
    let until = Instant::now() + Duration::from_secs(10);
    while !marker.exists() {
        assert!(Instant::now() < until, "the abort handler did not run");
        std::thread::sleep(Duration::from_millis(20));
    }

    // A client that floods itself with progress and never reads it…
    let stuck =
        Session::open(&addr, &[]).start(&call(2, "slow", json!({"steps": 100000, "delay_ms": 0})));
    std::thread::sleep(Duration::from_millis(500));
    // …does not stop another client from being served.
    let other = Session::open(&addr, &[]);
    for i in 0..5 {
        let r = other.post(&call(3 + i, "echo", json!({"text": format!("n{i}")})));
        assert!(r.body.contains(&format!(r#""text":"n{i}""#)), "{}", r.body);
    }
    assert!(
        !f.tool_processes().is_empty(),
        "the running call's tool process is found (so the orphan check below can fail)"
    );
    drop(stuck);
    assert!(server.stop().success());
    f.assert_no_tool_processes();
}

#[test]
fn stdio_logs_go_to_the_log_file_and_never_to_stdout() {
    let f = Fixture::new();
    let log = f.home("tester").with_file_name("toolhost.log");
    let out = f
        .toolhost()
        .env("TOOLHOST_LOG", "debug")
        .args(["mcp", "--log-file"])
        .arg(&log)
        .arg("--data")
        .arg(f.data())
        .args(["--user", "tester"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)?;
            stdin.write_all(b"\n")?;
            drop(stdin);
            child.wait_with_output()
        })
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "logs reached stderr: {stderr}");
    // S11: stdout holds the `initialize` answer and nothing but JSON-RPC messages (an
    // empty stdout would pass a check of every line).
    let messages: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    assert!(messages.iter().all(|m| m["jsonrpc"] == "2.0"), "{stdout}");
    assert!(
        messages
            .iter()
            .any(|m| m["id"] == 1 && m["result"]["serverInfo"]["name"] == "toolhost"),
        "no answer to initialize on stdout: {stdout}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("stdio session ended"), "{logged}");
    // A log file that cannot be opened is a clear error.
    let bad = f
        .toolhost()
        .args(["mcp", "--log-file", "/nonexistent/dir/toolhost.log"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("cannot open the log file /nonexistent/dir/toolhost.log"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// Review row 32: the client closes the stream of a call whose tool (and its child) ignore
/// SIGTERM; both are killed after the grace period, and the server keeps serving.
#[test]
fn closing_the_stream_kills_a_tool_that_ignores_sigterm() {
    let f = Fixture::new();
    common::copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mcp-hostile/ignores_term"),
        &f.tools().join("ignores_term"),
    );
    let mut server = serve(&f);
    let addr = server.addr.clone();
    let session = Session::open(&addr, &[]);
    let mut conn = session.start(&call(2, "ignores_term", json!({})));
    read_until(&mut conn, "ignoring SIGTERM");
    let running = f.tool_processes();
    assert!(
        running.len() >= 2,
        "the tool and its child are found (so the check below can fail): {running:?}"
    );
    drop(conn);
    f.assert_no_tool_processes();
    let r = session.post(&call(3, "echo", json!({"text": "still serving"})));
    assert!(r.body.contains(r#""text":"still serving""#), "{}", r.body);
    assert!(server.stop().success());
}

/// Review row 45 (without tokens): `Host` names that only look local and foreign or
/// opaque `Origin`s get 403 (DNS rebinding); loopback origins on any port are allowed, as
/// documented.
#[test]
fn foreign_hosts_and_origins_are_refused() {
    let f = Fixture::new();
    let server = serve(&f);
    let addr = server.addr.as_str();
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let with = |name: &'static str, value: &'static str| {
        let mut headers = MCP_POST.to_vec();
        headers.push((name, value));
        send(addr, "POST", &headers, init)
    };
    for host in common::FOREIGN_HOSTS {
        let r = with("Host", host);
        assert_eq!(r.status, 403, "Host {host}: {}", r.body);
    }
    for origin in common::FOREIGN_ORIGINS {
        let r = with("Origin", origin);
        assert_eq!(r.status, 403, "Origin {origin}: {}", r.body);
    }
    for origin in [
        "http://localhost:1",
        "http://127.0.0.1:65535",
        "http://[::1]:8080",
    ] {
        let r = with("Origin", origin);
        assert_eq!(r.status, 200, "Origin {origin}: {}", r.body);
    }
}

/// Review row 46: a body over 4 MiB is refused however it is framed (Content-Length or
/// chunked: 413), and so are a 1 MB header and 10,000 headers (431); the server goes on.
#[test]
fn oversized_bodies_and_headers_are_refused_however_framed() {
    let f = Fixture::new();
    let server = serve(&f);
    let addr = server.addr.as_str();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n"
    );

    let mut chunked = format!("{head}Transfer-Encoding: chunked\r\n\r\n").into_bytes();
    let piece = vec![b' '; 64 << 10];
    for _ in 0..80 {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(&piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let replies = raw_tcp::exchange(addr, &chunked);
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [413], "a 5 MiB chunked body: {replies:?}");

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let tail = format!("Content-Length: {}\r\n\r\n{init}", init.len());
    let big_header = format!("{head}X-Big: {}\r\n{tail}", "a".repeat(1 << 20));
    let replies = raw_tcp::exchange(addr, big_header.as_bytes());
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [431], "a 1 MB header: {replies:?}");

    let many: String = (0..10_000).map(|i| format!("X-H{i}: v\r\n")).collect();
    let replies = raw_tcp::exchange(addr, format!("{head}{many}{tail}").as_bytes());
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [431], "10,000 headers: {replies:?}");

    // The same request with a few headers is answered (so the checks above can fail).
    let few: String = (0..50).map(|i| format!("X-H{i}: v\r\n")).collect();
    let replies = raw_tcp::exchange(addr, format!("{head}{few}{tail}").as_bytes());
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200], "{replies:?}");
    let r = Session::open(addr, &[]).post(&call(2, "echo", json!({"text": "ok"})));
    assert!(r.body.contains(r#""text":"ok""#), "{}", r.body);
}

/// Review row 47: bodies that are not one JSON-RPC message (empty, invalid UTF-8, a batch,
/// `[]`, `null`, an object as id, nesting 100,000 deep) get 415 naming the parse error,
/// in a session or not; a 3 MB id is a valid one and comes back whole. Afterwards the
/// server still runs calls.
#[test]
fn malformed_bodies_get_a_parse_error_and_the_server_goes_on() {
    let f = Fixture::new();
    let server = serve(&f);
    let addr = server.addr.as_str();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let deep = 100_000;
    let mut bad_utf8 = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":""#.to_vec();
    bad_utf8.extend_from_slice(b"\xff\xfe\"}}");
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("an empty body", Vec::new()),
        ("invalid UTF-8", bad_utf8),
        ("a batch", format!("[{init},{init}]").into_bytes()),
        ("an empty batch", b"[]".to_vec()),
        ("null", b"null".to_vec()),
        (
            "an object as id",
            init.replace(r#""id":1"#, r#""id":{"a":1}"#).into_bytes(),
        ),
        (
            "deep arrays",
            format!("{}{}", "[".repeat(deep), "]".repeat(deep)).into_bytes(),
        ),
        (
            "deep objects",
            format!("{}1{}", r#"{"a":"#.repeat(deep), "}".repeat(deep)).into_bytes(),
        ),
        (
            "deep arguments",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{}1{}}}}}"#,
                r#"{"a":"#.repeat(deep),
                "}".repeat(deep)
            )
            .into_bytes(),
        ),
    ];
    let session = Session::open(addr, &[]);
    let session_headers = [
        ("Mcp-Session-Id", session.id.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    for (what, body) in &bodies {
        for in_session in [false, true] {
            let mut headers = MCP_POST.to_vec();
            if in_session {
                headers.extend_from_slice(&session_headers);
            }
            let r = send(addr, "POST", &headers, body);
            assert_eq!(
                r.status, 415,
                "{what} (in a session: {in_session}): {}",
                r.body
            );
            assert!(
                r.body.starts_with("fail to deserialize request body"),
                "{what}: {}",
                r.body
            );
        }
    }
    let id = "i".repeat(3 << 20);
    let big_id = init.replace(r#""id":1"#, &format!(r#""id":"{id}""#));
    let r = send(addr, "POST", MCP_POST, big_id.as_bytes());
    assert_eq!(r.status, 200, "a 3 MB id");
    assert!(
        r.body.contains(&format!(r#""id":"{id}""#)),
        "the id came back cut"
    );
    let r = session.post(&call(2, "echo", json!({"text": "still serving"})));
    assert!(r.body.contains(r#""text":"still serving""#), "{}", r.body);
}

/// The `_meta` every stateless (2026-07-28) request carries.
fn stateless_call(name: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string()
}

/// Review row 49: in the 2026-07-28 revision, `Mcp-Method` and `Mcp-Name` route a request
/// (a proxy may act on them without reading the body): either one contradicting the body
/// gets 400 with `-32020`, and the tool does not run.
#[test]
fn routing_headers_that_contradict_the_body_get_400() {
    let f = Fixture::new();
    let server = serve(&f);
    let addr = server.addr.as_str();
    let body = stateless_call("echo", json!({"text": "ran"}));
    let post = |method: &'static str, name: &'static str| {
        let mut headers = MCP_POST.to_vec();
        headers.extend_from_slice(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
        ]);
        send(addr, "POST", &headers, body.as_bytes())
    };
    for (method, name) in [("tools/call", "slow"), ("tools/list", "echo")] {
        let r = post(method, name);
        assert_eq!(r.status, 400, "{method} {name}: {}", r.body);
        let error: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(error["error"]["code"], -32020, "{method} {name}: {error}");
        assert!(!r.body.contains("ran"), "{}", r.body);
    }
    // Headers that agree with the body (so the checks above can fail).
    let r = post("tools/call", "echo");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains(r#""text":"ran""#), "{}", r.body);
}

/// Review row 50: a made-up session id, a 100 KB one, and none at all after `initialize`
/// get 404, 404 and 400: no session is created or guessed.
#[test]
fn unknown_and_missing_sessions_are_refused() {
    let f = Fixture::new();
    let server = serve(&f);
    let addr = server.addr.as_str();
    let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let session = Session::open(addr, &[]);
    let huge = "a".repeat(100_000);
    for (what, id) in [
        ("a random UUID", "0b7e6b3e-5f57-4a53-9a43-2d1c9c0f0c11"),
        ("a 100 KB id", huge.as_str()),
    ] {
        let mut headers = MCP_POST.to_vec();
        headers.extend_from_slice(&[
            ("Mcp-Session-Id", id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]);
        let r = send(addr, "POST", &headers, list);
        assert_eq!(r.status, 404, "{what}: {}", r.body);
        assert!(!r.body.contains("echo"), "{what}: {}", r.body);
    }
    let mut headers = MCP_POST.to_vec();
    headers.push(("MCP-Protocol-Version", "2025-11-25"));
    let r = send(addr, "POST", &headers, list);
    assert_eq!(r.status, 400, "no session id: {}", r.body);
    assert!(r.body.contains("Session ID is required"), "{}", r.body);
    // The real session answers (so the checks above can fail).
    let r = session.post(std::str::from_utf8(list).unwrap());
    assert!(r.body.contains(r#""name":"echo""#), "{}", r.body);
}
