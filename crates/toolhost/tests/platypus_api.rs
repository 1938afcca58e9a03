//! Platypus plugins on `serve`: the API shows their tool sets with their origin
//! (`/plugins`, `/tool-sets`, `/tools/{name}`), and an agent's plugin tool is called through
//! `POST /calls` like any other, its progress streamed, its call logged as the agent's.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use std::path::Path;
use std::time::{Duration, Instant};

use api_client::{Api, dechunk, json_of, sse_events};
use common::{Fixture, Server};
use raw_http::send_to;
use serde_json::{Value, json};
use stored::admin_token;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/plugins")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn the_api_shows_plugin_tool_sets_and_calls_their_tools() {
    let f = Fixture::new();
    std::fs::write(
        f.config(),
        format!(
            "{}[agents.helper]\ngrants = [{{ tool_set = \"static-map.greetings\" }}, {{ tool_set = \"generator.progress\" }}]\n",
            f.config_text()
        ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.env(
        "TOOLHOST_PLUGINS",
        format!("{},{}", fixture("static-map"), fixture("generator")),
    )
    .args(["serve", "--data"])
    .arg(f.data())
    .arg("--database")
    .arg(f.dir.path().join("toolhost.db"));
    let mut server = Server::start(cmd);
    let api = Api {
        addr: &server.addr,
        token: Some(admin_token(&server.logs())),
    };

    let plugins = json_of(&api.request("GET", "/plugins", None));
    let greet = plugins["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "static-map")
        .unwrap_or_else(|| panic!("{plugins}"));
    assert_eq!(greet["origin"], "third-party");
    assert_eq!(greet["gating"], "enabled");
    assert_eq!(greet["version"], "1.0.0");
    assert_eq!(greet["api_version"], 3);
    assert!(
        greet["entry"]
            .as_str()
            .unwrap()
            .ends_with("static-map/index.ts"),
        "{greet}"
    );
    assert_eq!(greet["tool_sets"], json!(["static-map.greetings"]));

    let detail = json_of(&api.request("GET", "/tools/static-map__greet?agent=helper", None));
    assert_eq!(detail["tool_set"], "static-map.greetings", "{detail}");
    assert_eq!(detail["plugin"]["name"], "static-map");
    assert_eq!(detail["plugin"]["set"], "greetings");
    assert_eq!(detail["plugin"]["key"], "greet");
    assert_eq!(
        detail["input_schema"]["properties"]["name"]["description"],
        "Who to greet"
    );

    // A generator's yields are the call's progress events; its last yield the result.
    let r = api.request(
        "POST",
        "/calls",
        Some(&json!({"tool": "generator__count", "agent": "helper", "arguments": {"to": 3}})),
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let id = json_of(&r)["id"].as_str().unwrap().to_string();
    let auth = format!("Bearer {}", api.token.as_deref().unwrap());
    let r = send_to(
        api.addr,
        "GET",
        &format!("/api/v1/calls/{id}/events"),
        &[("Host", "127.0.0.1"), ("Authorization", auth.as_str())],
        b"",
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let events = sse_events(&dechunk(&r.body));
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e.event.as_deref() == Some("progress"))
        .map(|e| &e.data)
        .collect();
    assert_eq!(progress.len(), 3, "{events:?}");
    let done = &events
        .iter()
        .find(|e| e.event.as_deref() == Some("result"))
        .unwrap_or_else(|| panic!("{events:?}"))
        .data;
    assert_eq!(done["is_error"], false, "{done}");
    assert_eq!(done["structured_content"], json!({"step": 3, "of": 3}));

    // The call log has it as the agent's, through its tool set.
    let until = Instant::now() + Duration::from_secs(10);
    let row = loop {
        let rows = json_of(&api.request("GET", "/calls?tool=generator__count", None));
        if let Some(row) = rows["items"].as_array().and_then(|a| a.first()).cloned() {
            break row;
        }
        assert!(Instant::now() < until, "never logged: {rows}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(row["agent"], "helper", "{row}");
    assert_eq!(row["tool_set"], "generator.progress", "{row}");
    assert_eq!(row["outcome"], "success", "{row}");
    server.stop();
}
