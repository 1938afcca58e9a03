//! The standard tool `apify` (`seed/tools/apify`), through `toolhost call` and `toolhost
//! mcp`, in the sandbox, against a loopback fake of the Apify API v2 that speaks its wire
//! format (paths with `~`, query, Bearer auth, `{"error": {"type", "message"}}` bodies,
//! 201/401/404/408, pagination headers) and records what it was sent.
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

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fake_http::{Answer, FakeServer, Request};
use serde_json::{Value, json};
use standard::{Officer, text_of};

fn apify_error(status: u16, kind: &str, message: &str) -> Answer {
    Answer::json(
        status,
        &json!({"error": {"type": kind, "message": message}}),
    )
}

fn item(i: usize) -> Value {
    json!({"url": format!("https://example.com/place/{i}"), "title": format!("Café {i}"), "rating": 4.5})
}

fn run(id: &str, status: &str) -> Value {
    json!({"data": {"id": id, "actId": "HDSasDasz78YcAPEB", "userId": "7sT5jcggjjA9fNcxF",
                    "status": status, "statusMessage": if status == "FAILED" { "The Actor process exited with code 1" } else { "" },
                    "startedAt": "2026-03-01T10:00:00.000Z", "defaultDatasetId": "DsXyz789",
                    "defaultKeyValueStoreId": "KvS123", "buildNumber": "0.1.2"}})
}

/// The fake: Actor `apify~three-items` (3 items, or `maxItems`), `slow~sleeper` (408),
/// any other Actor 404; runs `RunAbc123` (RUNNING on the first poll, then SUCCEEDED, with
/// 5 items in dataset `DsXyz789`) and `RunFailed`; every token but `good-token` 401.
fn fake_apify() -> FakeServer {
    let polls = Arc::new(AtomicUsize::new(0));
    FakeServer::start(move |r: &Request| {
        if r.header("authorization") != Some("Bearer good-token") {
            return apify_error(401, "token-not-valid", "Authentication token is not valid.");
        }
        let segments: Vec<&str> = r.path.trim_start_matches('/').split('/').collect();
        match (r.method.as_str(), segments.as_slice()) {
            (
                "POST",
                [
                    "v2",
                    "acts",
                    "apify~three-items",
                    "run-sync-get-dataset-items",
                ],
            ) => {
                let max = r
                    .param("maxItems")
                    .map_or(3, |m| m.parse::<usize>().unwrap().min(3));
                Answer::json(201, &Value::Array((1..=max).map(item).collect()))
            }
            ("POST", ["v2", "acts", "slow~sleeper", "run-sync-get-dataset-items"]) => apify_error(
                408,
                "run-timeout-exceeded",
                "Actor run exceeded the timeout of 300 seconds for this API endpoint",
            ),
            ("POST", ["v2", "acts", "apify~three-items", "runs"]) => {
                Answer::json(201, &run("RunAbc123", "READY"))
            }
            ("POST", ["v2", "acts", ..]) => {
                apify_error(404, "record-not-found", "Actor was not found")
            }
            ("GET", ["v2", "actor-runs", "RunAbc123"]) => {
                let status = if polls.fetch_add(1, Ordering::SeqCst) == 0 {
                    "RUNNING"
                } else {
                    "SUCCEEDED"
                };
                Answer::json(200, &run("RunAbc123", status))
            }
            ("GET", ["v2", "actor-runs", "RunFailed"]) => {
                Answer::json(200, &run("RunFailed", "FAILED"))
            }
            ("GET", ["v2", "datasets", "DsXyz789", "items"]) => {
                let offset: usize = r.param("offset").unwrap_or("0").parse().unwrap();
                let limit: usize = r.param("limit").unwrap_or("1000").parse().unwrap();
                let items: Vec<Value> = (1..=5).skip(offset).take(limit).map(item).collect();
                let mut answer = Answer::json(200, &Value::Array(items.clone()));
                answer.headers = vec![
                    ("X-Apify-Pagination-Total".into(), "5".into()),
                    ("X-Apify-Pagination-Offset".into(), offset.to_string()),
                    ("X-Apify-Pagination-Limit".into(), limit.to_string()),
                    ("X-Apify-Pagination-Count".into(), items.len().to_string()),
                ];
                answer
            }
            _ => apify_error(404, "record-not-found", "Record was not found"),
        }
    })
}

fn config(base: &str, rest: &str) -> String {
    format!("[sandbox]\nnetwork_private = [\"127.0.0.1/32\"]\nnetwork_ports = []\n\n{rest}")
        .replace("@BASE@", base)
}

fn items_of(text: &str) -> Vec<Value> {
    let json = &text[text.find("\n\n[").unwrap() + 2..];
    serde_json::from_str::<Vec<Value>>(json).unwrap()
}

#[test]
fn runs_an_actor_synchronously_and_reports_failures() {
    let fake = fake_apify();
    let o = Officer::new(&config(
        &fake.base,
        "[env]\nOFFICER_APIFY_TOKEN = \"good-token\"\nOFFICER_APIFY_BASE_URL = \"@BASE@\"\n",
    ));

    // Three items; `/` became `~`; options as Apify's query; the input as the body.
    let input = r#"{"searchStringsArray": ["coffee"], "locationQuery": "Köln"}"#;
    let text = o.ok(
        "apify",
        json!({"actor": "apify/three-items", "input": input, "max_items": 10,
               "timeout_secs": 60, "memory_mbytes": 256}),
    );
    assert!(
        text.starts_with("Actor apify~three-items: 3 items:\n\n"),
        "{text}"
    );
    assert_eq!(items_of(&text), [item(1), item(2), item(3)]);
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "one per transport: {requests:?}");
    for r in &requests {
        assert_eq!(r.method, "POST");
        assert_eq!(
            r.path,
            "/v2/acts/apify~three-items/run-sync-get-dataset-items"
        );
        assert_eq!(r.header("authorization"), Some("Bearer good-token"));
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(
            r.query,
            [
                ("timeout", "60"),
                ("memory", "256"),
                ("maxItems", "10"),
                ("format", "json"),
                ("clean", "1")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(
            serde_json::from_str::<Value>(&r.body).unwrap(),
            serde_json::from_str::<Value>(input).unwrap()
        );
    }

    // max_items is forwarded (the fake honours it) and no input means {}.
    fake.clear();
    let text = o.ok(
        "apify",
        json!({"actor": "apify~three-items", "max_items": 2}),
    );
    assert_eq!(items_of(&text), [item(1), item(2)]);
    let r = &fake.requests()[0];
    assert_eq!(
        (r.param("maxItems"), r.param("timeout"), r.body.as_str()),
        (Some("2"), None, "{}")
    );

    // output_path: all items to a file in the home, a preview inline.
    let call = o.call(
        "apify",
        json!({"actor": "apify/three-items", "output_path": "scrapes/places.json"}),
    );
    assert!(!call.is_error(), "{}", call.text());
    assert!(
        call.text().starts_with("Actor apify~three-items: 3 items, saved to /officer/user/scrapes/places.json. The first 3:"),
        "{}",
        call.text()
    );
    let saved: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(o.home().join("scrapes/places.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved, [item(1), item(2), item(3)]);

    // A run past the synchronous limit: 408, and what to do.
    let text = o.fails("apify", json!({"actor": "slow/sleeper", "input": "{}"}));
    assert!(text.starts_with("The Actor run did not finish within 300 s (408 run-timeout-exceeded: Actor run exceeded"), "{text}");
    assert!(
        text.contains("mode=async") && text.contains("run_id"),
        "{text}"
    );

    // An unknown Actor and a bad token, from Apify's error bodies.
    let text = o.fails("apify", json!({"actor": "nobody/nothing"}));
    assert!(text.starts_with("No Actor \"nobody~nothing\""), "{text}");
    assert!(
        text.contains("(404 record-not-found: Actor was not found)"),
        "{text}"
    );
    fake.clear();
    let text = o.fails(
        "apify",
        json!({"actor": "apify/three-items", "api_token": "wrong-token"}),
    );
    assert!(
        text.starts_with(
            "Apify rejected the API token (401 token-not-valid: Authentication token is not valid.)"
        ),
        "{text}"
    );
    assert!(text.contains("Settings → Integrations → Apify"), "{text}");
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer wrong-token"))
    );

    // Input that is not a JSON object, and bad ids: refused with nothing sent.
    fake.clear();
    let text = o.fails(
        "apify",
        json!({"actor": "apify/three-items", "input": "{\"startUrls\": [ oops"}),
    );
    assert!(
        text.starts_with("input is not valid JSON (") && text.contains("nothing was sent to Apify"),
        "{text}"
    );
    let text = o.fails(
        "apify",
        json!({"actor": "apify/three-items", "input": "[1, 2]"}),
    );
    assert!(text.starts_with("input must be a JSON object"), "{text}");
    let text = o.fails(
        "apify",
        json!({"actor": "../../v2/users/me", "input": "{}"}),
    );
    assert!(text.contains("is not an Actor id"), "{text}");
    let text = o.fails("apify", json!({"input": "{}"}));
    assert!(text.starts_with("actor is required"), "{text}");
    let text = o.fails(
        "apify",
        json!({"actor": "apify/three-items", "timeout_secs": 900}),
    );
    assert!(
        text.contains("timeout_secs must be a whole number from 1 to 300"),
        "{text}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());

    // The token from OFFICER_RESOURCES.apify, and none at all.
    std::fs::write(
        o.config(),
        config(
            &fake.base,
            "[resources.apify]\ntoken = \"good-token\"\nbaseUrl = \"@BASE@\"\n",
        ),
    )
    .unwrap();
    let text = o.ok(
        "apify",
        json!({"actor": "apify/three-items", "max_items": 1}),
    );
    assert_eq!(items_of(&text), [item(1)]);
    std::fs::write(o.config(), config(&fake.base, "")).unwrap();
    let text = o.fails("apify", json!({"actor": "apify/three-items"}));
    assert!(
        text.starts_with("Apify is not configured") && text.contains("OFFICER_APIFY_TOKEN"),
        "{text}"
    );
}

#[test]
fn an_async_run_is_started_polled_and_its_items_paged() {
    let fake = fake_apify();
    let o = Officer::new(&config(
        &fake.base,
        "[env]\nOFFICER_APIFY_TOKEN = \"good-token\"\nOFFICER_APIFY_BASE_URL = \"@BASE@\"\n",
    ));

    let call = o.call(
        "apify",
        json!({"actor": "apify/three-items", "mode": "async", "input": "{\"q\": 1}", "max_items": 500, "timeout_secs": 3600}),
    );
    assert!(!call.is_error(), "{}", call.text());
    assert!(call.text().starts_with("Started run RunAbc123 of Actor apify~three-items (status READY). Call again with run_id=RunAbc123"), "{}", call.text());
    let r = &fake.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v2/acts/apify~three-items/runs")
    );
    assert_eq!(
        (r.param("maxItems"), r.param("timeout")),
        (Some("500"), Some("3600"))
    );
    assert_eq!(r.body, "{\"q\":1}");

    // First poll: still running (through `call`); then finished (through MCP).
    fake.clear();
    let call = o.call("apify", json!({"run_id": "RunAbc123", "wait_secs": 5}));
    assert!(!call.is_error(), "{}", call.text());
    assert!(call.text().starts_with("Run RunAbc123 is still RUNNING, started 2026-03-01T10:00:00.000Z. Call again with run_id=RunAbc123"), "{}", call.text());
    let mcp = o.mcp_call("apify", json!({"run_id": "RunAbc123", "max_items": 2}));
    let text = text_of(&mcp);
    assert!(mcp["isError"] != true, "{mcp}");
    assert!(
        text.starts_with(
            "Run RunAbc123 succeeded: 2 items (items 1-2 of 5); 3 more: call again with offset=2"
        ),
        "{text}"
    );
    assert_eq!(items_of(&text), [item(1), item(2)]);
    let requests = fake.requests();
    let seen: Vec<(&str, &str)> = requests
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("GET", "/v2/actor-runs/RunAbc123"),
            ("GET", "/v2/actor-runs/RunAbc123"),
            ("GET", "/v2/datasets/DsXyz789/items")
        ]
    );
    assert_eq!(requests[0].param("waitForFinish"), Some("5"));
    assert_eq!(requests[1].param("waitForFinish"), Some("60"));
    assert_eq!(
        requests[2].query,
        [("format", "json"), ("clean", "1"), ("limit", "2")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer good-token"))
    );

    // The rest, by offset.
    let text = o.ok("apify", json!({"run_id": "RunAbc123", "offset": 2}));
    assert!(
        text.starts_with("Run RunAbc123 succeeded: 3 items (items 3-5 of 5):"),
        "{text}"
    );
    assert_eq!(items_of(&text), [item(3), item(4), item(5)]);

    // A failed run and an unknown one.
    let text = o.fails("apify", json!({"run_id": "RunFailed"}));
    assert!(
        text.starts_with("Run RunFailed ended with status FAILED: The Actor process exited with code 1. Its log: https://console.apify.com/actors/runs/RunFailed"),
        "{text}"
    );
    let text = o.fails("apify", json!({"run_id": "RunMissing"}));
    assert!(text.starts_with("No run \"RunMissing\""), "{text}");
    let text = o.fails("apify", json!({"run_id": "../x"}));
    assert!(text.contains("is not an Apify run id"), "{text}");
}
