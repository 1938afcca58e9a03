//! Bytes written exactly as given on one TCP connection, and every response read back until
//! the server closes it: for requests whose framing is the point (smuggling, chunked
//! bodies, header floods, pipelining), which `raw_http`'s request builder cannot send.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// De-chunked.
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body: String = self.body.chars().take(300).collect();
        write!(f, "{} {body:?}", self.status)
    }
}

/// Writes `bytes` (from another thread, so a server that answers before reading them all
/// cannot deadlock the test) and returns every response, in order, once the server has
/// closed the connection. Each exchange must end with something that makes the server
/// close (`Connection: close`, or an error): a connection kept open for 20 s fails.
pub fn exchange(addr: &str, bytes: &[u8]) -> Vec<Reply> {
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut writer = conn.try_clone().unwrap();
    let bytes = bytes.to_vec();
    // A server that answered and closed early resets the rest: not the test's concern.
    let written = std::thread::spawn(move || {
        let _ = writer.write_all(&bytes);
    });
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            // The server closed with our bytes unread: what it sent before still counts.
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                panic!(
                    "the server kept the connection open for 20 s after {:?}",
                    parse_all(&raw)
                );
            }
            Err(e) => panic!("reading the responses: {e}"),
        }
    }
    let _ = conn.shutdown(Shutdown::Both);
    written.join().unwrap();
    parse_all(&raw)
}

/// The responses in `raw`, which the server has ended by closing.
fn parse_all(mut raw: &[u8]) -> Vec<Reply> {
    let mut replies = Vec::new();
    while !raw.is_empty() {
        let Some(end) = find(raw, b"\r\n\r\n") else {
            panic!(
                "a truncated response head: {:?}",
                String::from_utf8_lossy(raw)
            );
        };
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        raw = &raw[end + 4..];
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {head:?}"));
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        let value = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let body = if value("transfer-encoding").is_some_and(|te| te.contains("chunked")) {
            let (body, rest) = dechunk(raw);
            raw = rest;
            body
        } else if let Some(len) = value("content-length") {
            let len: usize = len.parse().unwrap();
            assert!(raw.len() >= len, "a truncated body after {head:?}");
            let (body, rest) = raw.split_at(len);
            raw = rest;
            body.to_vec()
        } else {
            std::mem::take(&mut raw).to_vec()
        };
        replies.push(Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
    }
    replies
}

fn dechunk(mut raw: &[u8]) -> (Vec<u8>, &[u8]) {
    let mut body = Vec::new();
    loop {
        let end = find(raw, b"\r\n").expect("a chunk size line");
        let line = String::from_utf8_lossy(&raw[..end]);
        let size = usize::from_str_radix(line.split(';').next().unwrap().trim(), 16)
            .unwrap_or_else(|_| panic!("a chunk size, not {line:?}"));
        raw = &raw[end + 2..];
        if size == 0 {
            // No trailers from this server: the empty line ends the message.
            let end = find(raw, b"\r\n").expect("the end of a chunked body");
            return (body, &raw[end + 2..]);
        }
        body.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
