//! The console's chat in a real Chromium (`tests/browser/chat.mjs`), against a real
//! `toolhost serve` with its store and a scripted fake chat-completions server that the
//! script runs on loopback: the model is configured (its key sealed, never shown again),
//! the agent's tools are offered, the model's tool call runs through Toolhost and its card
//! goes from running to completed, the answer streams in, and Stop cancels a running tool.
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

use api_client::{Api, json_of};
use browser::{assert_budgets, assert_screenshots, run_script, serve_console};
use common::Fixture;
use serde_json::{Value, json};

#[test]
fn chat_with_an_agent_whose_tools_run_through_toolhost() {
    let f = Fixture::new();
    let (mut server, token, base) = serve_console(&f);
    let api = Api {
        addr: &server.addr,
        token: Some(token.clone()),
    };
    let r = api.request(
        "POST",
        "/agents",
        Some(&json!({"id": "helper", "name": "Helper", "icon": "bot",
                     "grants": [{"tool_set": "data-tools"}]})),
    );
    assert_eq!(r.status, 201, "{}", r.body);

    let result: Value = run_script("chat", &base, &token, &[("AGENT", "helper")]);
    let pages = &result["pages"];

    // The agent's tools were offered, on the page and to the model.
    let offered = pages["offered"].as_array().unwrap();
    assert!(offered.iter().any(|t| t == "echo"), "{offered:?}");
    let requests = result["requests"].as_array().unwrap();
    assert!(requests.len() >= 3, "{requests:?}");
    for r in requests {
        assert_eq!(r["path"], "/v1/chat/completions", "{r}");
        assert_eq!(
            r["authorization"], "Bearer sk-test-chat-key-0123456789",
            "{r}"
        );
        assert_eq!(
            (r["model"].as_str(), r["stream"].as_bool()),
            (Some("fake-1"), Some(true))
        );
        let tools = r["tools"].as_array().unwrap();
        assert!(
            tools.iter().any(|t| t == "echo") && tools.iter().any(|t| t == "slow"),
            "{r}"
        );
    }
    // The tool's result went back to the model as a `tool` message after the assistant's
    // tool call.
    let second = &requests[1];
    assert_eq!(
        second["roles"],
        json!(["user", "assistant", "tool"]),
        "{second}"
    );
    assert_eq!(second["last"]["tool_call_id"], "call_echo", "{second}");
    assert_eq!(second["last"]["content"], "hello from chat", "{second}");
    // The next turn carried the whole conversation.
    let third = &requests[2];
    assert_eq!(
        third["roles"],
        json!(["user", "assistant", "tool", "assistant", "user"]),
        "{third}"
    );

    // The card: running, then completed, with the result and the parameters.
    let echo = &pages["echo"];
    assert_eq!(echo["finalState"], "completed", "{echo}");
    assert!(
        echo["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "running" || s == "pending"),
        "{echo}"
    );
    assert!(
        echo["result"].as_str().unwrap().contains("hello from chat"),
        "{echo}"
    );
    assert!(
        echo["params"]
            .as_str()
            .unwrap()
            .contains("\"text\": \"hello from chat\""),
        "{echo}"
    );
    // Its set names no icon: the wrench.
    assert_eq!(echo["icon"], "#i-wrench", "{echo}");
    assert_eq!(echo["stateLabel"], "Completed", "{echo}");
    let assistant: Vec<&str> = echo["assistant"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(
        assistant,
        ["Let me echo that.", "The tool answered: hello from chat"]
    );

    // The slow tool showed its progress, and Stop cancelled it.
    assert!(
        pages["slow"]["progress"]
            .as_str()
            .unwrap()
            .contains("of 40"),
        "{}",
        pages["slow"]
    );
    assert_eq!(pages["slow"]["afterStop"], "Stopped", "{}", pages["slow"]);

    // Both calls are in the call log, as the console's, as the agent; the slow one
    // cancelled well before its 10 s.
    let until = Instant::now() + Duration::from_secs(20);
    let calls = loop {
        let calls = json_of(&api.request("GET", "/calls?agent=helper", None));
        let items = calls["items"].as_array().unwrap().clone();
        if items.len() >= 2 {
            break items;
        }
        assert!(
            Instant::now() < until,
            "the chat's calls were not logged: {calls}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let slow = calls.iter().find(|c| c["tool"] == "slow").unwrap();
    assert_eq!(slow["transport"], "console", "{slow}");
    assert_eq!(slow["outcome"], "cancelled", "{slow}");
    assert!(slow["duration_ms"].as_i64().unwrap() < 9000, "{slow}");
    let echo = calls.iter().find(|c| c["tool"] == "echo").unwrap();
    assert_eq!(echo["outcome"], "success", "{echo}");

    assert_budgets(&result, 1);
    assert_screenshots(&["chat", "chat-running", "chat-stopped"]);
    server.stop();
}
