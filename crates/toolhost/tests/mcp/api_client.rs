//! A client of `/api/v1` for the tests of `serve --database`: JSON requests with a bearer
//! token, problem+json checks, and server-sent events read off a connection.
#![allow(dead_code)]

use serde_json::Value;

use crate::raw_http::{Response, send_to};

pub struct Api<'a> {
    pub addr: &'a str,
    pub token: Option<String>,
}

impl Api<'_> {
    pub fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Response {
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut headers: Vec<(&str, &str)> = vec![("Host", "127.0.0.1")];
        if let Some(a) = &auth {
            headers.push(("Authorization", a));
        }
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        if !body.is_empty() {
            headers.push(("Content-Type", "application/json"));
        }
        send_to(
            self.addr,
            method,
            &format!("/api/v1{path}"),
            &headers,
            body.as_bytes(),
        )
    }
}

pub fn json_of(r: &Response) -> Value {
    serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body))
}

/// A problem+json answer with `status`, whose detail contains `says`.
pub fn problem(r: &Response, status: u16, says: &str) -> Value {
    assert_eq!(r.status, status, "{}", r.body);
    assert_eq!(
        r.header("content-type"),
        Some("application/problem+json"),
        "{}",
        r.body
    );
    let p = json_of(r);
    assert_eq!(p["status"], status);
    assert!(
        p["detail"].as_str().unwrap().contains(says),
        "{says:?} not in {p}"
    );
    p
}

/// The body of a `Transfer-Encoding: chunked` response, its chunks joined.
pub fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct Sse {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: Value,
}

/// The events in `text` (an event stream), comments and keep-alives left out.
pub fn sse_events(text: &str) -> Vec<Sse> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut id = None;
            let mut event = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            let data = serde_json::from_str(&data).ok()?;
            Some(Sse { id, event, data })
        })
        .collect()
}
