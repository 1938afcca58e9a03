//! A loopback HTTP/1.1 server for the standard tools' tests: each connection on a thread of
//! its own (tools fetch in parallel), every request recorded (method, path, decoded query,
//! headers, body) before a handler written by the test answers it: with an [`Answer`]
//! ([`FakeServer::start`]), or by writing the response itself, to trickle a slow body or
//! send raw bytes ([`serve`] with [`respond`]). Speaks just enough HTTP for Node's fetch:
//! `Content-Length` bodies, one request per connection.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path without the query, still percent-encoded.
    pub path: String,
    /// The query's pairs, decoded, in order.
    pub query: Vec<(String, String)>,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    pub body: String,
}

impl Request {
    /// The first value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of query parameter `name`.
    pub fn params(&self, name: &str) -> Vec<&str> {
        self.query
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// The query as a map (the last value of a repeated name).
    pub fn query_map(&self) -> BTreeMap<String, String> {
        self.query.iter().cloned().collect()
    }

    /// The body as `application/x-www-form-urlencoded` pairs.
    pub fn form(&self) -> BTreeMap<String, String> {
        pairs(&self.body).into_iter().collect()
    }
}

/// An answer: status, extra headers, body (sent as `application/json` unless a
/// `content-type` is among the headers).
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn json(status: u16, body: &serde_json::Value) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }
}

pub type Handler = dyn Fn(&Request) -> Answer + Send + Sync;

/// A handler that writes the whole response to the connection itself.
pub type RawHandler = dyn Fn(&Request, &mut TcpStream) + Send + Sync;

pub struct FakeServer {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub seen: Arc<Mutex<Vec<Request>>>,
}

impl FakeServer {
    pub fn start(handler: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> FakeServer {
        let (base, seen) = serve(Arc::new(move |r: &Request, stream: &mut TcpStream| {
            write_answer(stream, &handler(r));
        }));
        FakeServer { base, seen }
    }

    /// What was received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }

    pub fn clear(&self) {
        self.seen.lock().unwrap().clear();
    }
}

/// A server whose `handler` writes each response itself; its base URL and the requests
/// so far.
pub fn serve(handler: Arc<RawHandler>) -> (String, Arc<Mutex<Vec<Request>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let log = log.clone();
            let handler = handler.clone();
            std::thread::spawn(move || {
                if let Some(request) = read_request(&stream) {
                    log.lock().unwrap().push(request.clone());
                    handler(&request, &mut stream);
                }
            });
        }
    });
    (base, seen)
}

/// One request from `stream`, its body included.
fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || line.is_empty() {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    Some(Request {
        method,
        path: path.to_string(),
        query: pairs(query),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn write_answer(stream: &mut TcpStream, answer: &Answer) {
    let reason = match answer.status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        _ => "Status",
    };
    let mut headers: Vec<(&str, &str)> = answer
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        headers.insert(0, ("Content-Type", "application/json; charset=utf-8"));
    }
    respond(
        stream,
        &format!("{} {reason}", answer.status),
        &headers,
        answer.body.as_bytes(),
    );
}

/// Writes a whole response: `status` such as `200 OK`, `headers`, then `body`.
pub fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// `toolhost.toml` opening the host's loopback (any port) to networked tools, then `extra`.
pub fn config(extra: &str) -> String {
    format!("[sandbox]\nnetwork_private = [\"127.0.0.1/32\"]\nnetwork_ports = []\n\n{extra}")
}

/// `a=1&b=x+y` → [("a", "1"), ("b", "x y")], percent-decoded.
pub fn pairs(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

pub fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(
                    std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                    16,
                ) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64, padded.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, &b| (n << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Base64url without padding, as the Gmail API sends bodies and attachments.
pub fn base64url(data: &[u8]) -> String {
    base64(data)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}
