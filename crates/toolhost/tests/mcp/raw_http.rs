//! A deliberately bare HTTP/1.1 client, for requests no well-behaved client would send.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The headers every MCP POST carries.
pub const MCP_POST: &[(&str, &str)] = &[
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// Sends one request to `/mcp` (`Connection: close`) and reads the whole response.
pub fn send(addr: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    send_to(addr, method, "/mcp", headers, body)
}

/// Sends one request to `path` (`Connection: close`) and reads the whole response.
pub fn send_to(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut conn = open_to(addr, method, path, headers, body);
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).unwrap();
    parse(&raw)
}

/// Sends a request to `/mcp` and returns the connection, to read (or not) as the test
/// pleases.
pub fn open(addr: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> TcpStream {
    open_to(addr, method, "/mcp", headers, body)
}

/// Sends a request to `path` and returns the connection.
pub fn open_to(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> TcpStream {
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head += &format!("Host: {addr}\r\n");
    }
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += &format!("Content-Length: {}\r\n\r\n", body.len());
    conn.write_all(head.as_bytes()).unwrap();
    // A server may answer (413) and close before taking a huge body whole.
    let _ = conn.write_all(body);
    conn
}

/// Reads from `conn` until `needle` has arrived; panics after 20 s.
pub fn read_until(conn: &mut TcpStream, needle: &str) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        assert!(
            Instant::now() < until,
            "no {needle:?} in {:?}",
            String::from_utf8_lossy(&seen)
        );
        let n = conn.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "closed before {needle:?}: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

fn parse(raw: &[u8]) -> Response {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Response {
        status,
        headers,
        body: body.to_string(),
    }
}

/// A session opened by hand (2025-11-25 unless opened with another revision).
pub struct Session {
    pub addr: String,
    pub id: String,
    pub revision: String,
    /// Sent with every request (such as `Authorization`).
    pub extra: Vec<(String, String)>,
}

impl Session {
    pub fn open(addr: &str, extra: &[(&str, &str)]) -> Session {
        Session::open_at(addr, extra, "2025-11-25")
    }

    /// Opens a session asking for `revision`; the server must answer with it.
    pub fn open_at(addr: &str, extra: &[(&str, &str)], revision: &str) -> Session {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{revision}","capabilities":{{}},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
        );
        let mut headers = MCP_POST.to_vec();
        headers.extend_from_slice(extra);
        let r = send(addr, "POST", &headers, init.as_bytes());
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(
            r.body
                .contains(&format!(r#""protocolVersion":"{revision}""#)),
            "initialize answered another revision than {revision}: {}",
            r.body
        );
        let session = Session {
            addr: addr.to_string(),
            revision: revision.to_string(),
            id: r
                .header("mcp-session-id")
                .expect("a session id")
                .to_string(),
            extra: extra
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let r = session.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(r.status, 202, "{}", r.body);
        session
    }

    fn headers(&self) -> Vec<(&str, &str)> {
        let mut h = MCP_POST.to_vec();
        h.push(("Mcp-Session-Id", &self.id));
        h.push(("MCP-Protocol-Version", &self.revision));
        h.extend(self.extra.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        h
    }

    pub fn post(&self, body: &str) -> Response {
        send(&self.addr, "POST", &self.headers(), body.as_bytes())
    }

    /// Posts without reading the response.
    pub fn start(&self, body: &str) -> TcpStream {
        open(&self.addr, "POST", &self.headers(), body.as_bytes())
    }
}
