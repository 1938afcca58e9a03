//! A loopback HTTP/1.1 server for the standard tools' tests: each connection is answered
//! on a thread of its own by a handler that writes the response itself (so it can trickle
//! a slow body), and every request is recorded (method, path, decoded query, headers) so
//! that a test asserts what a tool sent as well as what it made of the answer.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One request a fake received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: BTreeMap<String, String>,
    pub headers: BTreeMap<String, String>,
}

pub type Handler = dyn Fn(&Request, &mut TcpStream) + Send + Sync;

/// A loopback HTTP server answering each connection on a thread of its own with
/// `handler`; returns its base URL and the requests so far.
pub fn serve(handler: Arc<Handler>) -> (String, Arc<Mutex<Vec<Request>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let handler = handler.clone();
            let log = log.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() || line.is_empty() {
                    return;
                }
                let mut parts = line.split_whitespace();
                let method = parts.next().unwrap_or_default().to_string();
                let target = parts.next().unwrap_or_default().to_string();
                let mut headers = BTreeMap::new();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() {
                        return;
                    }
                    let h = h.trim_end();
                    if h.is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                    }
                }
                let (path, query) = target.split_once('?').unwrap_or((&target, ""));
                let request = Request {
                    method,
                    path: path.to_string(),
                    query: url::form_urlencoded::parse(query.as_bytes())
                        .into_owned()
                        .collect(),
                    headers,
                };
                log.lock().unwrap().push(request.clone());
                handler(&request, &mut stream);
            });
        }
    });
    (base, seen)
}

pub fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// `toolhost.toml` opening the host's loopback (any port) to networked tools, then `extra`.
pub fn config(extra: &str) -> String {
    format!("[sandbox]\nnetwork_private = [\"127.0.0.1/32\"]\nnetwork_ports = []\n\n{extra}")
}
