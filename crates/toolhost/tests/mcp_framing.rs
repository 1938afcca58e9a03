//! Request framing on `toolhost serve`, byte by byte: requests that a proxy and the server
//! could split differently (request smuggling) and pipelined requests. Each is refused
//! with 400, or read as exactly one well-framed request; a request on a connection that
//! another one authenticated still needs its own token.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_tcp.rs"]
mod raw_tcp;

use common::{Fixture, Server};
use raw_tcp::exchange;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const TOKEN: &str = "framing-secret-4f1c";

/// `serve` with one token, so that a request the server wrongly read as two would show up
/// as a second answer (and one without the token as a 200).
fn serve(f: &Fixture) -> Server {
    std::fs::write(
        f.config(),
        f.config_text()
            + &format!(
                "[[serve.tokens]]\nuser = \"ada@example.com\"\nsha256 = \"{}\"\n",
                toolhost_host::hash_token(TOKEN)
            ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data());
    Server::start(cmd)
}

/// A POST to `/mcp` with the token and MCP's headers, then `framing` (the headers that
/// frame the body, each ending in CRLF) and the empty line.
fn post_head(addr: &str, framing: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         {framing}\r\n"
    )
}

fn chunked(body: &str) -> String {
    format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len())
}

/// Review row 48: CL+TE (both orders), two Content-Lengths, `Transfer-Encoding: chunked,
/// identity` and `xchunked`, obs-fold, Content-Length -1, 1e20 and beyond u64, a NUL in
/// Host. Each request carries a smuggled `GET` after its body: a server that framed it
/// otherwise would answer that one too.
#[test]
fn ambiguous_framing_is_refused_or_read_as_one_request() {
    let f = Fixture::new();
    let server = serve(&f);
    let addr = server.addr.as_str();
    // It asks to close: had a server read it as a request, it would answer and close.
    let smuggled = format!(
        "GET /smuggled HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Connection: close\r\n\r\n"
    );

    // Transfer-Encoding wins over Content-Length (RFC 9112 6.3), whichever comes first,
    // and the connection closes after the answer: the bytes after the chunked body are
    // never read as a request.
    for framing in [
        "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
    ] {
        let request = post_head(addr, framing) + &chunked(INIT) + &smuggled;
        let replies = exchange(addr, request.as_bytes());
        assert_eq!(replies.len(), 1, "{framing:?}: {replies:?}");
        let r = &replies[0];
        assert_eq!(r.status, 200, "{framing:?}: {r:?}");
        assert!(
            r.body.contains(r#""protocolVersion""#),
            "{framing:?}: {r:?}"
        );
        assert_eq!(r.header("connection"), Some("close"), "{framing:?}");
    }

    let len = INIT.len();
    let refused = [
        format!("Content-Length: {len}\r\nContent-Length: 4\r\n"),
        "Transfer-Encoding: chunked, identity\r\n".to_string(),
        "Transfer-Encoding: xchunked\r\n".to_string(),
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n".to_string(),
        // obs-fold (RFC 9112 5.2), on the framing header and on any other.
        format!("Transfer-Encoding:\r\n chunked\r\nContent-Length: {len}\r\n"),
        format!("X-Folded: a\r\n b\r\nContent-Length: {len}\r\n"),
        "Content-Length: -1\r\n".to_string(),
        "Content-Length: 1e20\r\n".to_string(),
        "Content-Length: 100000000000000000000\r\n".to_string(),
        format!("Content-Length: +{len}\r\n"),
    ];
    for framing in &refused {
        let body = if framing.contains("chunked") && !framing.contains("Content-Length") {
            chunked(INIT)
        } else {
            INIT.to_string()
        };
        let request = post_head(addr, framing) + &body + &smuggled;
        let replies = exchange(addr, request.as_bytes());
        let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [400], "{framing:?}: {replies:?}");
    }

    // A NUL in Host.
    let request = post_head(addr, &format!("Content-Length: {len}\r\n")).replacen(
        &format!("Host: {addr}"),
        "Host: 127.0.0.1\0.evil.example",
        1,
    ) + INIT
        + &smuggled;
    let replies = exchange(addr, request.as_bytes());
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [400], "a NUL in Host: {replies:?}");

    // Well framed, the same bytes are two requests, and both are answered (so the checks
    // above can fail): the GET finds nothing at /smuggled.
    let request = post_head(addr, &format!("Content-Length: {len}\r\n")) + INIT + &smuggled;
    let replies = exchange(addr, request.as_bytes());
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 404], "{replies:?}");
}

/// Review row 48: a request pipelined behind an authenticated one on the same connection
/// is judged on its own: without a token it gets 401 (with `WWW-Authenticate`), and the
/// authenticated requests around it are answered in order.
#[test]
fn a_pipelined_request_needs_its_own_token() {
    let f = Fixture::new();
    let server = serve(&f);
    let addr = server.addr.as_str();
    let len = INIT.len();
    let with_token = post_head(addr, &format!("Content-Length: {len}\r\n")) + INIT;
    let without = post_head(addr, &format!("Content-Length: {len}\r\n")).replacen(
        &format!("Authorization: Bearer {TOKEN}\r\n"),
        "",
        1,
    ) + INIT;
    let last = post_head(
        addr,
        &format!("Content-Length: {len}\r\nConnection: close\r\n"),
    ) + INIT;
    let replies = exchange(addr, format!("{with_token}{without}{last}").as_bytes());
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 401, 200], "{replies:?}");
    assert_eq!(replies[1].header("www-authenticate"), Some("Bearer"));
    assert_eq!(replies[1].body, "", "a 401 tells nothing");
    assert!(
        replies[2].body.contains(r#""protocolVersion""#),
        "{replies:?}"
    );
}
