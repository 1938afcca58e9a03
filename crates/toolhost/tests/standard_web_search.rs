//! The standard tool `web_search` (`seed/tools/web_search`), through `toolhost call` and
//! `toolhost mcp`, in the sandbox, against a fake SearXNG on loopback written here: its
//! JSON API's shape (results, answers, infoboxes, suggestions, corrections,
//! `unresponsive_engines`), the 403 it gives when `json` is not in `search.formats` and the
//! 429 of its limiter; the fake records each request so the query parameters are asserted.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/fake_http.rs"]
mod fake_http;
#[path = "mcp/line_client.rs"]
mod line_client;
mod machine;
#[path = "mcp/standard.rs"]
mod standard;

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use fake_http::{Request, config, respond, serve};
use serde_json::{Value, json};
use standard::Officer;

#[derive(Clone, Copy)]
enum Mode {
    Json,
    Forbidden,
    Limited,
}

/// A fake SearXNG: `GET /search` with `format=json` answers in SearXNG's JSON shape.
fn searxng(mode: Mode) -> (String, Arc<Mutex<Vec<Request>>>) {
    serve(Arc::new(move |r: &Request, s: &mut TcpStream| {
        if r.path != "/search" {
            return respond(
                s,
                "404 Not Found",
                &[("Content-Type", "text/html")],
                b"<h1>Not found</h1>",
            );
        }
        match mode {
            Mode::Forbidden => {
                return respond(
                    s,
                    "403 FORBIDDEN",
                    &[("Content-Type", "text/html; charset=utf-8")],
                    b"<!doctype html><title>403 Forbidden</title><h1>Forbidden</h1>",
                );
            }
            Mode::Limited => {
                return respond(
                    s,
                    "429 TOO MANY REQUESTS",
                    &[("Content-Type", "text/plain"), ("Retry-After", "60")],
                    b"Too Many Requests",
                );
            }
            Mode::Json => {}
        }
        if r.param("format") != Some("json") {
            return respond(
                s,
                "200 OK",
                &[("Content-Type", "text/html")],
                b"<html>results page</html>",
            );
        }
        let q = r.param("q").unwrap_or_default().to_string();
        let answer = match q.as_str() {
            "nothing" => json!({"query": q, "number_of_results": 0, "results": [], "answers": [],
                "corrections": [], "infoboxes": [], "suggestions": [],
                "unresponsive_engines": [["google", "timeout"], ["bing", "CAPTCHA"]]}),
            "quiet" => json!({"query": q, "number_of_results": 0, "results": [], "answers": [],
                "corrections": ["quite"], "infoboxes": [], "suggestions": ["quiet places"],
                "unresponsive_engines": []}),
            _ => {
                let results: Vec<Value> = (1..=25)
                    .map(|i| json!({
                        "url": format!("https://example.org/{i}"),
                        "title": format!("Result {i} for {q}"),
                        "content": format!("Snippet   number {i}\nabout {q}."),
                        "engine": "duckduckgo",
                        "engines": if i == 1 { json!(["duckduckgo", "bing"]) } else { json!(["duckduckgo"]) },
                        "score": 1.0 / f64::from(i),
                        "category": "general",
                        "parsed_url": ["https", "example.org", format!("/{i}"), "", "", ""],
                        "positions": [i],
                        "publishedDate": if i == 2 { json!("2026-03-01T10:00:00") } else { Value::Null },
                        "template": "default.html"
                    }))
                    .collect();
                json!({"query": q, "number_of_results": 12300, "results": results,
                    "answers": [{"answer": "42 is the answer", "url": "https://answers.example/42"}],
                    "corrections": ["tide tables"],
                    "infoboxes": [{"infobox": "Tide", "id": "https://en.wikipedia.org/wiki/Tide",
                        "content": "Tides are the rise and fall of sea levels.",
                        "engine": "wikipedia", "engines": ["wikipedia"],
                        "urls": [{"title": "Wikipedia", "url": "https://en.wikipedia.org/wiki/Tide"}],
                        "attributes": [{"label": "Caused by", "value": "the Moon"}]}],
                    "suggestions": ["tide times", "spring tide"],
                    "unresponsive_engines": [["wikidata", "timeout"]]})
            }
        };
        respond(
            s,
            "200 OK",
            &[("Content-Type", "application/json")],
            answer.to_string().as_bytes(),
        );
    }))
}

#[test]
fn web_search_asks_searxng_for_json_and_shows_everything_it_gives() {
    let (base, seen) = searxng(Mode::Json);
    let o = Officer::new(&config(&format!("[env]\nPI_SEARXNG_URL = \"{base}/\"\n")));

    let text = o.ok(
        "web_search",
        json!({"query": "tide tabels ü", "max_results": 3, "categories": "general, news",
               "language": "en-GB", "time_range": "week", "safesearch": "1", "page": 2}),
    );
    assert_eq!(
        text,
        "Search: \"tide tabels ü\" (page 2): 3 results shown, about 12,300 in all\n\n\
         1. Result 1 for tide tabels ü\n   https://example.org/1\n   Snippet number 1 about tide tabels ü.\n   [duckduckgo, bing]\n\n\
         2. Result 2 for tide tabels ü\n   https://example.org/2\n   Snippet number 2 about tide tabels ü.\n   [duckduckgo · 2026-03-01]\n\n\
         3. Result 3 for tide tabels ü\n   https://example.org/3\n   Snippet number 3 about tide tabels ü.\n   [duckduckgo]\n\n\
         Answers:\n- 42 is the answer (https://answers.example/42)\n\n\
         Infoboxes:\n- Tide <https://en.wikipedia.org/wiki/Tide>\n  Tides are the rise and fall of sea levels.\n  Caused by: the Moon\n  Wikipedia: https://en.wikipedia.org/wiki/Tide\n\n\
         Suggestions: tide times | spring tide\n\n\
         Did you mean: tide tables\n\n\
         Engines that failed: wikidata (timeout)"
    );
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/search"));
        let want: BTreeMap<String, String> = [
            ("q", "tide tabels ü"),
            ("format", "json"),
            ("pageno", "2"),
            ("categories", "general,news"),
            ("language", "en-GB"),
            ("time_range", "week"),
            ("safesearch", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(r.query_map(), want);
        assert!(r.headers["accept"].contains("application/json"));
    }

    // Defaults: ten results, page 1, nothing else sent.
    seen.lock().unwrap().clear();
    let text = o.ok("web_search", json!({"query": "moon"}));
    assert!(
        text.contains("\n10. Result 10 for moon\n") && !text.contains("\n11. "),
        "{text}"
    );
    let r = seen.lock().unwrap()[0].clone();
    assert_eq!(
        r.query_map().keys().map(String::as_str).collect::<Vec<_>>(),
        ["format", "pageno", "q"]
    );

    // No results because the engines failed: say so; no results at all: say that.
    let text = o.fails("web_search", json!({"query": "nothing"}));
    assert_eq!(
        text,
        "No results for \"nothing\": the search engines failed: google (timeout), bing (CAPTCHA). \
         Retry later, or choose other engines or categories."
    );
    let text = o.ok("web_search", json!({"query": "quiet"}));
    assert_eq!(
        text,
        "No results for \"quiet\" (page 1). Try other words, fewer filters, or page 1.\n\
         Did you mean: quite\nSuggestions: quiet places"
    );

    // The searxng_url parameter overrides the environment.
    let (other, other_seen) = searxng(Mode::Json);
    o.ok(
        "web_search",
        json!({"query": "moon", "searxng_url": format!("{other}/search")}),
    );
    assert_eq!(other_seen.lock().unwrap().len(), 2);
}

#[test]
fn web_search_explains_what_searxng_refuses() {
    let (forbidden, _) = searxng(Mode::Forbidden);
    let (limited, _) = searxng(Mode::Limited);
    let o = Officer::new(&config(""));

    let text = o.fails(
        "web_search",
        json!({"query": "moon", "searxng_url": forbidden.clone()}),
    );
    assert!(
        text.contains("refused JSON output (403 Forbidden)")
            && text.contains("settings.yml (search: formats: [html, json])"),
        "{text}"
    );
    let text = o.fails(
        "web_search",
        json!({"query": "moon", "searxng_url": limited}),
    );
    assert!(
        text.contains(
            "bot limiter refused the request (429 Too Many Requests); it asks to retry after 60 s"
        ),
        "{text}"
    );

    // Nothing configured: say how to configure it.
    let text = o.fails("web_search", json!({"query": "moon"}));
    assert!(
        text.starts_with("No SearXNG instance is configured")
            && text.contains("[env] PI_SEARXNG_URL"),
        "{text}"
    );

    // OFFICER_RESOURCES is read too; an HTML answer is explained.
    let (html, _) = serve(Arc::new(|_r: &Request, s: &mut TcpStream| {
        respond(
            s,
            "200 OK",
            &[("Content-Type", "text/html")],
            b"<html><body>SearXNG</body></html>",
        );
    }));
    let o = Officer::new(&config(&format!("[resources.searxng]\nurl = \"{html}\"\n")));
    let text = o.fails("web_search", json!({"query": "moon"}));
    assert!(
        text.contains("answered with an HTML page instead of JSON"),
        "{text}"
    );
}
