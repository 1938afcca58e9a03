//! The web console in a real Chromium: `serve --database` with the fixture tools, driven
//! by `tests/browser/console.mjs` (playwright-core on Debian's chromium, both installed
//! by `scripts/test`): sign in (a wrong token refused; the cookie HttpOnly and
//! SameSite=Strict, never the token), the overview's counts, the catalog searched by a
//! word of `slow`'s description with and without JavaScript, its tool page (TOOL.md
//! rendered, schema shown), its tool set, signing out. Each page's first load is
//! measured against the budgets, and screenshots are kept in
//! `target/console-screenshots/`. Without a browser the test fails, saying what to run.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
#[path = "mcp/browser.rs"]
mod browser;
#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use std::time::{Duration, Instant};

use api_client::{Api, dechunk, json_of};
use browser::{assert_budgets, assert_screenshots, run_script, serve_console};
use common::Fixture;
use raw_http::send_to;
use serde_json::{Value, json};

#[test]
fn the_console_in_chromium() {
    let f = Fixture::new();
    let (mut server, token, base) = serve_console(&f);
    let logs = server.logs();
    assert!(
        logs.contains(&format!("{base}/sign-in")),
        "the first start names the sign-in page:\n{logs}"
    );

    // Calls for the overview: two that succeed and one that fails (no `steps`).
    let api = Api {
        addr: &server.addr,
        token: Some(token.clone()),
    };
    for body in [
        json!({"tool": "echo", "arguments": {"text": "hi"}}),
        json!({"tool": "echo", "arguments": {"text": "again"}}),
        json!({"tool": "slow", "arguments": {}}),
    ] {
        let r = api.request("POST", "/calls", Some(&body));
        assert_eq!(r.status, 202, "{}", r.body);
    }
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let calls = json_of(&api.request("GET", "/calls", None));
        if calls["items"].as_array().unwrap().len() == 3 {
            break;
        }
        assert!(Instant::now() < until, "the calls were not logged: {calls}");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Without a browser: no session, no page; other sites and other Hosts refused.
    let host = [("Host", "127.0.0.1")];
    let r = send_to(&server.addr, "GET", "/catalog", &host, b"");
    assert_eq!(
        (r.status, r.header("location")),
        (303, Some("/sign-in?next=/catalog"))
    );
    let r = send_to(
        &server.addr,
        "POST",
        "/sign-out",
        &[("Host", "127.0.0.1"), ("Origin", "http://evil.com")],
        b"",
    );
    assert_eq!(r.status, 403, "{}", r.body);
    let r = send_to(
        &server.addr,
        "GET",
        "/sign-in",
        &[("Host", "evil.com")],
        b"",
    );
    assert_eq!(r.status, 403, "{}", r.body);
    let r = send_to(&server.addr, "GET", "/sign-in", &host, b"");
    assert_eq!(r.status, 200);
    let csp = r.header("content-security-policy").unwrap_or_default();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    // /mcp and /api/v1 are still theirs.
    assert_eq!(
        send_to(&server.addr, "POST", "/mcp", &host, b"").status,
        401
    );
    let r = send_to(&server.addr, "GET", "/api/v1/healthz", &host, b"");
    assert_eq!(r.status, 200, "{}", r.body);

    // The console's session cookie works on the API too; a change made with it must
    // carry an Origin, and a foreign one is refused; signed out, the cookie is nothing.
    let login = format!("token={token}&next=%2F");
    let r = send_to(
        &server.addr,
        "POST",
        "/sign-in",
        &[
            ("Host", "127.0.0.1"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        login.as_bytes(),
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let set = r.header("set-cookie").unwrap().to_string();
    let cookie = set.split(';').next().unwrap().to_string();
    assert!(cookie.starts_with("toolhost_session=ths_"), "{set}");
    let own = format!("http://{}", server.addr);
    fn with_cookie<'a>(
        cookie: &'a str,
        extra: &[(&'static str, &'a str)],
    ) -> Vec<(&'static str, &'a str)> {
        let mut h = vec![("Host", "127.0.0.1"), ("Cookie", cookie)];
        h.extend_from_slice(extra);
        h
    }
    let with = |extra: &[(&'static str, &'static str)]| with_cookie(&cookie, extra);
    let r = send_to(&server.addr, "GET", "/api/v1/tools", &with(&[]), b"");
    assert_eq!(r.status, 200, "{}", r.body);
    let body = br#"{"name": "from the console"}"#;
    let json = ("Content-Type", "application/json");
    let r = send_to(&server.addr, "POST", "/api/v1/tokens", &with(&[json]), body);
    assert_eq!(r.status, 403, "no Origin: {}", r.body);
    assert!(r.body.contains("must carry an Origin"), "{}", r.body);
    let r = send_to(
        &server.addr,
        "POST",
        "/api/v1/tokens",
        &with(&[json, ("Origin", "http://evil.com")]),
        body,
    );
    assert_eq!(r.status, 403, "a foreign Origin: {}", r.body);
    let r = send_to(
        &server.addr,
        "POST",
        "/api/v1/tokens",
        &with_cookie(&cookie, &[json, ("Origin", own.as_str())]),
        body,
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let r = send_to(
        &server.addr,
        "POST",
        "/sign-out",
        &with_cookie(&cookie, &[("Origin", own.as_str())]),
        b"",
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let r = send_to(&server.addr, "GET", "/api/v1/tools", &with(&[]), b"");
    assert_eq!(r.status, 401, "a signed-out session: {}", r.body);

    // The browser.
    let result: Value = run_script("console", &base, &token, &[]);
    let pages = &result["pages"];

    // The overview's numbers are the host's and the call log's.
    let cards = &pages["overview"]["cards"];
    assert_eq!(cards["Tools"], 2, "{cards}");
    assert_eq!(cards["Calls, last 24 h"], 3, "{cards}");
    assert_eq!(cards["Errors, last 24 h"], 1, "{cards}");
    assert_eq!(cards["Agents"], 0, "{cards}");
    assert!(cards["Tool sets"].as_u64().unwrap() >= 2, "{cards}");
    let latest: Vec<&str> = pages["overview"]["latestTools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(latest, ["slow", "echo", "echo"], "{}", pages["overview"]);
    assert!(
        pages["overview"]["sandbox"]
            .as_str()
            .unwrap()
            .starts_with("Ready"),
        "{}",
        pages["overview"]
    );
    assert!(
        pages["overview"]["icons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i == "i-activity"),
        "{}",
        pages["overview"]
    );
    assert!(
        pages["wrongToken"]
            .as_str()
            .unwrap()
            .contains("not accepted")
    );
    assert_eq!(
        result["cookie"],
        json!({"httpOnly": true, "sameSite": "Strict", "path": "/"})
    );

    // The catalog, its search, the tool's page.
    let categories = pages["catalog"]["categories"].as_array().unwrap();
    assert!(!categories.is_empty(), "{}", pages["catalog"]);
    if let Some(i) = categories.iter().position(|c| c == "Uncategorized") {
        assert_eq!(i, categories.len() - 1, "Uncategorized comes last");
    }
    assert_eq!(pages["search"]["hits"], json!(["slow"]));
    let tool = &pages["tool"];
    assert_eq!(tool["title"], "Slow Steps");
    assert_eq!(tool["docsHeading"], "Slow Steps");
    assert!(
        tool["docsCode"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "step N of M"),
        "{tool}"
    );
    let params: Vec<&str> = tool["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(params, ["steps", "delay_ms", "marker"], "{tool}");
    assert!(
        tool["schema"].as_str().unwrap().contains("\"steps\""),
        "{tool}"
    );
    let mut set_tools: Vec<&str> = pages["toolSet"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    set_tools.sort();
    assert_eq!(set_tools, ["echo", "slow"], "{}", pages["toolSet"]);
    assert_eq!(
        pages["pluginTool"]["set"],
        json!(["/catalog", "/catalog/sets/time"]),
        "{}",
        pages["pluginTool"]
    );

    assert_eq!(
        pages["expired"],
        json!({"next": "/catalog", "form": 1}),
        "an htmx request without a session leads the page to sign in"
    );
    assert_budgets(&result, 6);
    assert_screenshots(&[
        "sign-in",
        "overview",
        "catalog",
        "catalog-search",
        "tool",
        "tool-set",
    ]);
    server.stop();
}

/// The history pages the whole call log, newest first: 50 calls a page, an "Older" link
/// to the rest, every call once (without a browser: the pages are plain HTML). Calls past
/// the API's limit of running calls are logged as denied, not as cancelled.
#[test]
fn the_history_pages_every_call_once() {
    let f = Fixture::new();
    let (mut server, token, _base) = serve_console(&f);
    let api = Api {
        addr: &server.addr,
        token: Some(token.clone()),
    };
    for i in 0..55 {
        // At most 32 calls of a user run at once: past that, wait for some to end.
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let r = api.request(
                "POST",
                "/calls",
                Some(&json!({"tool": "echo", "arguments": {"text": format!("call {i}")}})),
            );
            if r.status == 202 {
                break;
            }
            assert!(r.status == 429 && Instant::now() < until, "{}", r.body);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // Every call is logged; one refused for being past the limit is logged as denied,
    // never as a call that ran and was cancelled.
    let until = Instant::now() + Duration::from_secs(60);
    let logged: Vec<Value> = loop {
        let calls = json_of(&api.request("GET", "/calls?limit=500", None));
        let items = calls["items"].as_array().unwrap().clone();
        if items.iter().filter(|c| c["outcome"] == "success").count() == 55 {
            break items;
        }
        assert!(Instant::now() < until, "the calls were not logged: {calls}");
        std::thread::sleep(Duration::from_millis(200));
    };
    for c in logged.iter().filter(|c| c["outcome"] != "success") {
        assert_eq!(c["outcome"], "denied", "{c}");
        assert!(
            c["error"]
                .as_str()
                .unwrap()
                .contains("calls running already"),
            "{c}"
        );
    }
    let logged: Vec<String> = logged
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let login = format!("token={token}");
    let r = send_to(
        &server.addr,
        "POST",
        "/sign-in",
        &[
            ("Host", "127.0.0.1"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        login.as_bytes(),
    );
    let cookie = r
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let page = |path: &str| {
        let r = send_to(
            &server.addr,
            "GET",
            path,
            &[("Host", "127.0.0.1"), ("Cookie", cookie.as_str())],
            b"",
        );
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        let body = if r.header("transfer-encoding") == Some("chunked") {
            dechunk(&r.body)
        } else {
            r.body.clone()
        };
        let ids: Vec<String> = body
            .split("data-call=\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].to_string())
            .collect();
        let older = body.split_once("data-older").and_then(|(head, _)| {
            let at = head.rfind("href=\"")?;
            let rest = &head[at + 6..];
            Some(rest[..rest.find('"')?].replace("&amp;", "&"))
        });
        (ids, older, body.contains("data-older"))
    };
    let (first, older, has_older) = page("/history");
    assert_eq!(first.len(), 50, "a page holds 50 calls");
    assert!(has_older, "the first page links the older calls");
    let mut seen = first;
    let mut next = older;
    while let Some(path) = next {
        let (ids, older, _) = page(&path);
        assert!(!ids.is_empty() && ids.len() <= 50, "{path}");
        seen.extend(ids);
        next = older;
    }
    // Newest first, as the API lists them, each once.
    assert_eq!(seen, logged);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), logged.len(), "every call once");
    server.stop();
}
