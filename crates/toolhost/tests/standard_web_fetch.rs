//! The standard tool `web_fetch` (`seed/tools/web_fetch`), through `toolhost call` and
//! `toolhost mcp`, in the sandbox (network on, the host's loopback opened with
//! `[sandbox] network_private`), against a loopback web site written here that records
//! what it was sent: an article with boilerplate, a 301 → 302 chain, ISO-8859-1 pages, a
//! gzip-encoded page, a large page, 404/500, a slow body, a PDF, JSON and an image.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/fake_http.rs"]
mod fake_http;
#[path = "mcp/line_client.rs"]
mod line_client;
mod machine;
#[path = "mcp/pdf.rs"]
mod pdf;
#[path = "mcp/standard.rs"]
mod standard;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_http::{Request, config, respond, serve};
use serde_json::json;
use standard::Officer;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-c")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(data).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    out.stdout
}

const ARTICLE: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Tide tables &amp; the moon</title>
<style>body { color: red }</style>
<script>document.write("<p>SCRIPTED</p>")</script></head>
<body>
<header class="site"><a href="/">Example News</a><nav><ul><li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li></ul></nav></header>
<div id="cookie-consent">We use cookies. <button>Accept</button></div>
<main>
<article>
<h1>How the <em>moon</em> moves the sea</h1>
<p>The tide rises twice a day. Read the <a href="../guides/tides.html?x=1">tide guide</a>
or the <a href="https://other.example/atlas">atlas</a>.</p>
<h2>Why twice</h2>
<p>Gravity &mdash; and <strong>inertia</strong> &ndash; make two bulges.</p>
<ul><li>Spring tides<li>Neap tides</ul>
<ol><li>First high water</li><li>Second high water</li></ol>
<table><tr><th>Port</th><th>High water</th></tr><tr><td>Brest</td><td>06:12</td></tr></table>
<pre><code>tide = sun + moon</code></pre>
<img src="img/moon.png" alt="The moon">
<aside class="related">Related: ten best beaches</aside>
</article>
</main>
<footer>Copyright Example News. <a href="/privacy">Privacy</a></footer>
<script>trackVisitor()</script>
</body></html>"#;

fn site() -> (String, Arc<Mutex<Vec<Request>>>) {
    let pdf_bytes = pdf::text_pdf(&[
        &["Annual report 2026", "Revenue grew by 12 percent"],
        &["Second page", "Outlook stable"],
    ]);
    let big: String = (0..30_000).map(|i| format!("line {i:05}\n")).collect();
    serve(Arc::new(move |r: &Request, s: &mut TcpStream| {
        let html = [("Content-Type", "text/html; charset=utf-8")];
        match r.path.as_str() {
            "/news/2026/tides.html" => respond(s, "200 OK", &html, ARTICLE.as_bytes()),
            "/r1" => respond(s, "301 Moved Permanently", &[("Location", "/r2")], b""),
            "/r2" => respond(
                s,
                "302 Found",
                &[("Location", "news/2026/tides.html")],
                b"",
            ),
            "/loop" => respond(s, "302 Found", &[("Location", "/loop")], b""),
            "/latin1" => {
                let mut body = b"<html><head><title>Caf\xe9</title></head><body><main><p>Gr\xf6\xdfe: 5 \xb0C, Stra\xdfe</p></main></body></html>".to_vec();
                body.extend_from_slice(b"\n");
                respond(
                    s,
                    "200 OK",
                    &[("Content-Type", "text/html; charset=ISO-8859-1")],
                    &body,
                );
            }
            "/latin1-meta" => respond(
                s,
                "200 OK",
                &[("Content-Type", "text/html")],
                b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"></head><body><p>Na\xefve r\xe9sum\xe9</p></body></html>",
            ),
            "/gzip" => respond(
                s,
                "200 OK",
                &[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
                &gzip(b"<html><body><article><h2>Compressed</h2><p>This body travelled gzip-encoded.</p></article></body></html>"),
            ),
            "/big.txt" => respond(
                s,
                "200 OK",
                &[("Content-Type", "text/plain; charset=utf-8")],
                big.as_bytes(),
            ),
            "/missing" => respond(
                s,
                "404 Not Found",
                &html,
                b"<html><body><h1>Not Found</h1><p>No page at this address.</p></body></html>",
            ),
            "/broken" => respond(
                s,
                "500 Internal Server Error",
                &[("Content-Type", "text/plain")],
                b"database is down",
            ),
            "/slow" => {
                let _ = s.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\nConnection: close\r\n\r\n",
                );
                for _ in 0..100 {
                    if s.write_all(b"x").is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(300));
                }
            }
            "/report.pdf" => respond(
                s,
                "200 OK",
                &[("Content-Type", "application/pdf")],
                &pdf_bytes,
            ),
            "/api/data" => respond(
                s,
                "200 OK",
                &[("Content-Type", "application/json")],
                br#"{"name":"tides","ports":[{"id":1,"city":"Brest"}]}"#,
            ),
            "/chart.png" => respond(
                s,
                "200 OK",
                &[("Content-Type", "image/png")],
                b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR fake image bytes",
            ),
            _ => respond(s, "404 Not Found", &[("Content-Type", "text/plain")], b"no"),
        }
    }))
}

#[test]
fn web_fetch_reads_an_article_as_markdown_after_redirects() {
    machine::program("pdftotext", "poppler-utils");
    let (base, seen) = site();
    let o = Officer::new(&config(""));

    let text = o.ok("web_fetch", json!({"url": format!("{base}/r1")}));
    let expected = format!(
        "URL: {base}/news/2026/tides.html\n\
         Redirected: {base}/r1 → {base}/r2 → {base}/news/2026/tides.html (301, 302)\n\
         Status: 200 OK\n\
         Content-Type: text/html; charset=utf-8\n\
         Title: Tide tables & the moon\n\n\
         # How the *moon* moves the sea\n\n\
         The tide rises twice a day. Read the [tide guide]({base}/news/guides/tides.html?x=1) \
         or the [atlas](https://other.example/atlas).\n\n\
         ## Why twice\n\n\
         Gravity — and **inertia** – make two bulges.\n\n\
         - Spring tides\n\
         - Neap tides\n\n\
         1. First high water\n\
         2. Second high water\n\n\
         | Port | High water |\n\
         | --- | --- |\n\
         | Brest | 06:12 |\n\n\
         ```\n\
         tide = sun + moon\n\
         ```\n\n\
         ![The moon]({base}/news/2026/img/moon.png)"
    );
    assert_eq!(text, expected);
    for junk in [
        "SCRIPTED",
        "World",
        "cookies",
        "Related",
        "Copyright",
        "trackVisitor",
        "color: red",
    ] {
        assert!(!text.contains(junk), "`{junk}` kept: {text}");
    }
    // What the tool sent: GETs along the chain, as a browser-like client.
    let requests = seen.lock().unwrap().clone();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/r1",
            "/r2",
            "/news/2026/tides.html",
            "/r1",
            "/r2",
            "/news/2026/tides.html",
        ]
    );
    for r in &requests {
        assert_eq!(r.method, "GET");
        assert!(r.headers["user-agent"].contains("OfficerWebFetch"), "{r:?}");
        assert!(r.headers["accept"].starts_with("text/html"), "{r:?}");
    }

    // Plain text: the same content without Markdown.
    let text = o.ok(
        "web_fetch",
        json!({"url": format!("{base}/news/2026/tides.html"), "format": "text"}),
    );
    assert!(
        text.contains("\n\nHow the moon moves the sea\n\nThe tide rises twice a day. Read the tide guide or the atlas."),
        "{text}"
    );
    assert!(text.contains("Port\tHigh water\nBrest\t06:12"), "{text}");
    // HTML: the page without scripts and styles; raw: the body exactly.
    let text = o.ok(
        "web_fetch",
        json!({"url": format!("{base}/news/2026/tides.html"), "format": "html"}),
    );
    assert!(text.contains("<nav><ul><li><a href=\"/world\">"), "{text}");
    assert!(
        !text.contains("<script") && !text.contains("<style"),
        "{text}"
    );
    let text = o.ok("web_fetch",
        json!({"url": format!("{base}/news/2026/tides.html"), "format": "raw", "max_length": 200000}),
    );
    assert!(text.ends_with(ARTICLE), "{text}");

    // Redirect loops end.
    let text = o.fails("web_fetch", json!({"url": format!("{base}/loop")}));
    assert!(text.contains("redirects more than 10 times"), "{text}");
}

#[test]
fn web_fetch_decodes_charsets_gzip_pdf_and_json_and_pages_long_content() {
    machine::program("pdftotext", "poppler-utils");
    let (base, seen) = site();
    let o = Officer::new(&config(""));

    // ISO-8859-1 by the header and by a meta tag.
    let text = o.ok("web_fetch", json!({"url": format!("{base}/latin1")}));
    assert!(
        text.contains("Title: Café\n\nGröße: 5 °C, Straße"),
        "{text}"
    );
    let text = o.ok("web_fetch", json!({"url": format!("{base}/latin1-meta")}));
    assert!(text.ends_with("\n\nNaïve résumé"), "{text}");

    // gzip: asked for, and decoded.
    let text = o.ok("web_fetch", json!({"url": format!("{base}/gzip")}));
    assert!(
        text.ends_with("\n\n## Compressed\n\nThis body travelled gzip-encoded."),
        "{text}"
    );
    let r = seen.lock().unwrap().last().unwrap().clone();
    assert!(r.headers["accept-encoding"].contains("gzip"), "{r:?}");

    // A PDF: its text, page by page, through pdftotext.
    let text = o.ok("web_fetch", json!({"url": format!("{base}/report.pdf")}));
    assert!(text.contains("Content-Type: application/pdf"), "{text}");
    assert!(
        text.contains("--- page 1 ---\nAnnual report 2026"),
        "{text}"
    );
    assert!(text.contains("--- page 2 ---\nSecond page"), "{text}");
    assert!(text.contains("Revenue grew by 12 percent"), "{text}");

    // JSON, pretty-printed.
    let text = o.ok("web_fetch", json!({"url": format!("{base}/api/data")}));
    assert!(
        text.ends_with("{\n  \"name\": \"tides\",\n  \"ports\": [\n    {\n      \"id\": 1,\n      \"city\": \"Brest\"\n    }\n  ]\n}"),
        "{text}"
    );

    // A large page, in pieces.
    let text = o.ok("web_fetch", json!({"url": format!("{base}/big.txt")}));
    assert!(
        text.contains("Characters 0-20000 of 330000; next_start_index: 20000 (call again with start_index=20000 for more)\n\nline 00000\n"),
        "{text}"
    );
    assert!(
        text.ends_with("line 01817\nli"),
        "{}",
        &text[text.len() - 40..]
    );
    let text = o.ok(
        "web_fetch",
        json!({"url": format!("{base}/big.txt"), "start_index": 20000, "max_length": 33}),
    );
    assert!(
        text.ends_with("Characters 20000-20033 of 330000; next_start_index: 20033 (call again with start_index=20033 for more)\n\nne 01818\nline 01819\nline 01820\nli"),
        "{text}"
    );
    let text = o.ok(
        "web_fetch",
        json!({"url": format!("{base}/big.txt"), "start_index": 329989}),
    );
    assert!(
        text.ends_with("Characters 329989-330000 of 330000 (the end)\n\nline 29999\n"),
        "{text}"
    );
    let text = o.fails(
        "web_fetch",
        json!({"url": format!("{base}/big.txt"), "start_index": 400000}),
    );
    assert!(
        text.contains("start_index 400000 is past the end: the content has 330000 characters"),
        "{text}"
    );
    // The whole of it to a file.
    let text = o.ok(
        "web_fetch",
        json!({"url": format!("{base}/big.txt"), "output_path": "pages/big.txt"}),
    );
    assert!(
        text.contains("Saved 330000 characters (markdown) to /officer/user/pages/big.txt"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(o.home().join("pages/big.txt"))
            .unwrap()
            .len(),
        330_000
    );

    // A binary file: refused inline, saved with output_path.
    let text = o.fails("web_fetch", json!({"url": format!("{base}/chart.png")}));
    assert!(
        text.contains("is binary (image/png, 33 bytes)") && text.contains("pass output_path"),
        "{text}"
    );
    o.ok(
        "web_fetch",
        json!({"url": format!("{base}/chart.png"), "output_path": "chart.png"}),
    );
    assert!(
        std::fs::read(o.home().join("chart.png"))
            .unwrap()
            .starts_with(b"\x89PNG")
    );
}

#[test]
fn web_fetch_failures_say_what_happened() {
    let (base, _seen) = site();
    let o = Officer::new(&config(""));

    let text = o.fails("web_fetch", json!({"url": format!("{base}/missing")}));
    assert!(
        text.starts_with(&format!(
            "HTTP 404 Not Found for {base}/missing. The page does not exist"
        )),
        "{text}"
    );
    assert!(
        text.contains("The page says: Not Found No page at this address."),
        "{text}"
    );
    let text = o.fails("web_fetch", json!({"url": format!("{base}/broken")}));
    assert!(
        text.contains("HTTP 500 Internal Server Error")
            && text.contains("retry later")
            && text.contains("database is down"),
        "{text}"
    );

    // A body that trickles: the timeout covers it.
    let started = Instant::now();
    let call = o.call(
        "web_fetch",
        json!({"url": format!("{base}/slow"), "timeout_ms": 1500}),
    );
    assert!(call.is_error());
    assert!(
        call.text().contains(&format!(
            "{base}/slow did not answer within 1.5 s (timeout_ms)"
        )),
        "{}",
        call.text()
    );
    assert!(started.elapsed() < Duration::from_secs(15));

    // Nothing listening; not a URL; not http.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let text = o.fails(
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{port}/")}),
    );
    assert!(text.starts_with("Cannot fetch http://127.0.0.1:"), "{text}");
    let text = o.fails("web_fetch", json!({"url": "file:///etc/passwd"}));
    assert!(text.contains("Only http:// and https:// URLs"), "{text}");

    // Without network_private, the sandbox refuses the host's loopback.
    let closed_off = Officer::new("");
    let text = closed_off.fails("web_fetch", json!({"url": format!("{base}/missing")}));
    assert!(text.starts_with("Cannot fetch"), "{text}");
}
