//! Calling tools through `/api/v1`, over real HTTP: `GET /tools`, `POST /calls` answering
//! at once, the call's progress and result as server-sent events (resumed with
//! `Last-Event-ID`), `DELETE` cancelling a running call, the call's row in the call log
//! under its own id with the transport `api`, and every refusal a problem.
#![allow(clippy::unwrap_used)]

#[path = "mcp/api_client.rs"]
mod api_client;
#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;
#[path = "mcp/stored.rs"]
mod stored;

use std::time::{Duration, Instant};

use api_client::{Api, dechunk, json_of, problem, sse_events};
use common::{Fixture, Server};
use raw_http::{open_to, read_until, send_to};
use serde_json::{Value, json};
use stored::{admin_token, new_token};

const AGENT: &str =
    "[agents.helper]\ngrants = [{ tool_set = \"data-tools\", deny = [\"slow\"] }]\n";

/// The events of call `id`, read to the stream's end, resuming after `last` when given.
fn events(api: &Api, id: &str, last: Option<&str>) -> Vec<api_client::Sse> {
    let auth = format!("Bearer {}", api.token.as_deref().unwrap());
    let mut headers = vec![("Host", "127.0.0.1"), ("Authorization", auth.as_str())];
    if let Some(last) = last {
        headers.push(("Last-Event-ID", last));
    }
    let r = send_to(
        api.addr,
        "GET",
        &format!("/api/v1/calls/{id}/events"),
        &headers,
        b"",
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    sse_events(&dechunk(&r.body))
}

fn start(api: &Api, body: Value) -> String {
    let r = api.request("POST", "/calls", Some(&body));
    assert_eq!(r.status, 202, "{}", r.body);
    let started = json_of(&r);
    let id = started["id"].as_str().unwrap().to_string();
    assert_eq!(started["status"], "running");
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/calls/{id}").as_str())
    );
    id
}

/// The call log's row of call `id`, once the log has written it.
fn logged(api: &Api, id: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let r = api.request("GET", "/calls?limit=500", None);
        assert_eq!(r.status, 200, "{}", r.body);
        let page = json_of(&r);
        if let Some(row) = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
        {
            return row.clone();
        }
        assert!(Instant::now() < until, "call {id} never logged: {page}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn tools_are_called_through_the_api_with_progress_events_and_cancellation() {
    let f = Fixture::new();
    std::fs::write(f.config(), format!("{}{AGENT}", f.config_text())).unwrap();
    let db = f.dir.path().join("toolhost.db");
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(&db);
    let mut server = Server::start(cmd);
    let api = Api {
        addr: &server.addr,
        token: Some(admin_token(&server.logs())),
    };

    // What the caller may call, with schemas; as the agent, its grants only.
    let tools = json_of(&api.request("GET", "/tools", None));
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"slow") && names.contains(&"echo"),
        "{tools}"
    );
    let slow = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "slow");
    assert_eq!(
        slow.unwrap()["input_schema"]["properties"]["steps"]["type"],
        "number"
    );
    let helper = json_of(&api.request("GET", "/tools?agent=helper", None));
    let helper: Vec<&str> = helper
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        helper.contains(&"echo") && !helper.contains(&"slow"),
        "{helper:?}"
    );
    problem(
        &api.request("GET", "/tools?agent=nobody", None),
        404,
        "nobody",
    );

    // One tool in detail: its TOOL.md, the set it comes through, what it shadows (the
    // admin's own `echo` wins over the global one for the admin alone).
    let slow = json_of(&api.request("GET", "/tools/slow", None));
    assert_eq!(slow["folder"]["version"], 1, "{slow}");
    assert!(
        slow["folder"]["documentation"]
            .as_str()
            .unwrap()
            .contains("Reports `step N of M`"),
        "{slow}"
    );
    assert_eq!(slow["folder"]["shadows"], json!([]));
    let own = f.home("admin").join("tools/echo");
    std::fs::create_dir_all(&own).unwrap();
    for file in ["TOOL.md", "index.ts"] {
        let text = std::fs::read_to_string(f.tools().join("echo").join(file)).unwrap();
        std::fs::write(
            own.join(file),
            text.replace("Returns the text", "Echoes the text"),
        )
        .unwrap();
    }
    let until = Instant::now() + Duration::from_secs(10);
    let echo = loop {
        let echo = json_of(&api.request("GET", "/tools/echo", None));
        if echo["description"].as_str().unwrap().starts_with("Echoes") {
            break echo;
        }
        assert!(
            Instant::now() < until,
            "the admin's own echo never showed: {echo}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let shadows = echo["folder"]["shadows"].as_array().unwrap();
    assert!(
        shadows.len() == 1 && shadows[0].as_str().unwrap().ends_with("tools/echo"),
        "{echo}"
    );
    let as_helper = json_of(&api.request("GET", "/tools/echo?agent=helper", None));
    assert_eq!(as_helper["tool_set"], "data-tools", "{as_helper}");
    problem(&api.request("GET", "/tools/nope", None), 404, "`nope`");
    problem(
        &api.request("GET", "/tools/slow?agent=helper", None),
        404,
        "`slow`",
    );

    // A call answers at once; its events are each progress report, then the result.
    let id = start(
        &api,
        json!({"tool": "slow", "arguments": {"steps": 3, "delay_ms": 50}}),
    );
    let all = events(&api, &id, None);
    let kinds: Vec<&str> = all.iter().map(|e| e.event.as_deref().unwrap()).collect();
    assert_eq!(
        kinds,
        ["progress", "progress", "progress", "result"],
        "{all:?}"
    );
    let ids: Vec<&str> = all.iter().map(|e| e.id.as_deref().unwrap()).collect();
    assert_eq!(ids, ["1", "2", "3", "4"]);
    assert_eq!(all[1].data["message"], "step 2 of 3");
    let result = &all[3].data;
    assert_eq!(
        (result["outcome"].as_str(), result["is_error"].as_bool()),
        (Some("success"), Some(false)),
        "{result}"
    );
    assert_eq!(result["content"][0]["text"], "done 3 steps");
    // Reconnecting after event 2 gives only what came after it.
    let resumed = events(&api, &id, Some("2"));
    let ids: Vec<&str> = resumed.iter().map(|e| e.id.as_deref().unwrap()).collect();
    assert_eq!(ids, ["3", "4"]);
    let status = json_of(&api.request("GET", &format!("/calls/{id}"), None));
    assert_eq!(status["status"], "finished");
    assert_eq!(status["result"]["content"][0]["text"], "done 3 steps");
    // Its row in the call log has the call's id.
    let row = logged(&api, &id);
    assert_eq!(
        (row["transport"].as_str(), row["outcome"].as_str()),
        (Some("api"), Some("success"))
    );
    let args: Value = serde_json::from_str(row["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"steps": 3, "delay_ms": 50}));

    // Cancelling a running call: the stream following it ends with a cancelled result.
    let id = start(
        &api,
        json!({"tool": "slow", "arguments": {"steps": 200, "delay_ms": 100}}),
    );
    let auth = format!("Bearer {}", api.token.as_deref().unwrap());
    let mut stream = open_to(
        api.addr,
        "GET",
        &format!("/api/v1/calls/{id}/events"),
        &[("Host", "127.0.0.1"), ("Authorization", &auth)],
        b"",
    );
    let mut seen = read_until(&mut stream, "step 2 of 200");
    let r = api.request("DELETE", &format!("/calls/{id}"), None);
    assert_eq!(r.status, 202, "{}", r.body);
    // The stream ends after the result.
    std::io::Read::read_to_string(&mut stream, &mut seen).unwrap();
    let body = seen.split_once("\r\n\r\n").unwrap().1;
    let result = sse_events(&dechunk(body))
        .into_iter()
        .find(|e| e.event.as_deref() == Some("result"));
    let result = result.map(|e| e.data).unwrap_or_default();
    assert_eq!(result["outcome"], "cancelled", "{seen}");
    assert_eq!(result["is_error"], true);
    problem(
        &api.request("DELETE", &format!("/calls/{id}"), None),
        409,
        "has ended",
    );
    assert_eq!(logged(&api, &id)["outcome"], "cancelled");

    // A closed stream does not cancel its call: it runs on, and its events wait.
    let id = start(
        &api,
        json!({"tool": "slow", "arguments": {"steps": 2, "delay_ms": 200}}),
    );
    let mut stream = open_to(
        api.addr,
        "GET",
        &format!("/api/v1/calls/{id}/events"),
        &[("Host", "127.0.0.1"), ("Authorization", &auth)],
        b"",
    );
    read_until(&mut stream, "step 1 of 2");
    drop(stream);
    let rest = events(&api, &id, Some("1"));
    assert_eq!(rest.last().unwrap().data["outcome"], "success", "{rest:?}");

    // Arguments the tool's schema refuses: the call runs and ends in an error result.
    let id = start(
        &api,
        json!({"tool": "slow", "arguments": {"steps": "many"}}),
    );
    let all = events(&api, &id, None);
    let result = &all.last().unwrap().data;
    assert_eq!(
        (result["outcome"].as_str(), result["is_error"].as_bool()),
        (Some("error"), Some(true))
    );
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("steps"),
        "{result}"
    );

    // Refusals.
    let p = problem(
        &api.request("POST", "/calls", Some(&json!({"tool": "nope"}))),
        404,
        "`nope`",
    );
    assert_eq!(p["field"], "tool");
    let p = problem(
        &api.request(
            "POST",
            "/calls",
            Some(&json!({"tool": "echo", "agent": "ghost"})),
        ),
        404,
        "`ghost`",
    );
    assert_eq!(p["field"], "agent");
    // The agent's grants deny `slow`.
    problem(
        &api.request(
            "POST",
            "/calls",
            Some(&json!({"tool": "slow", "agent": "helper"})),
        ),
        404,
        "`slow`",
    );
    let p = problem(
        &api.request(
            "POST",
            "/calls",
            Some(&json!({"tool": "echo", "argumnts": {}})),
        ),
        422,
        "unknown field",
    );
    assert_eq!(p["field"], "argumnts");
    let p = problem(
        &api.request(
            "POST",
            "/calls",
            Some(&json!({"tool": "echo", "arguments": [1]})),
        ),
        422,
        "",
    );
    assert_eq!(p["field"], "arguments");
    let r = send_to(
        api.addr,
        "GET",
        &format!("/api/v1/calls/{id}/events"),
        &[
            ("Host", "127.0.0.1"),
            ("Authorization", &auth),
            ("Last-Event-ID", "x"),
        ],
        b"",
    );
    problem(&r, 400, "Last-Event-ID");
    problem(
        &api.request("GET", "/calls/01NOPE", None),
        404,
        "does not exist",
    );
    problem(
        &api.request("DELETE", "/calls/01NOPE", None),
        404,
        "does not exist",
    );

    // Another user's calls are not theirs to see, follow or cancel; a token without
    // `tools:call` calls nothing, and the refusal is logged.
    let bob = Api {
        addr: api.addr,
        token: Some(new_token(&f, &db, &["--user", "bob", "--role", "viewer"])),
    };
    problem(
        &bob.request("GET", &format!("/calls/{id}"), None),
        404,
        "does not exist",
    );
    problem(
        &bob.request("DELETE", &format!("/calls/{id}"), None),
        404,
        "does not exist",
    );
    let r = send_to(
        api.addr,
        "GET",
        &format!("/api/v1/calls/{id}/events"),
        &[
            ("Host", "127.0.0.1"),
            (
                "Authorization",
                &format!("Bearer {}", bob.token.as_deref().unwrap()),
            ),
        ],
        b"",
    );
    problem(&r, 404, "does not exist");
    let reader = Api {
        addr: api.addr,
        token: Some(new_token(
            &f,
            &db,
            &["--user", "rita", "--scope", "tools:read"],
        )),
    };
    problem(
        &reader.request("POST", "/calls", Some(&json!({"tool": "echo"}))),
        403,
        "`tools:call`",
    );
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let r = json_of(&api.request("GET", "/calls?user=rita&outcome=denied", None));
        if r["items"].as_array().unwrap().len() == 1 {
            assert_eq!(r["items"][0]["transport"], "api");
            break;
        }
        assert!(Instant::now() < until, "{r}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Bob's own call is his.
    let bob_call = start(&bob, json!({"tool": "echo", "arguments": {"text": "hi"}}));
    assert_eq!(
        events(&bob, &bob_call, None).last().unwrap().data["outcome"],
        "success"
    );
    server.stop();
}

/// Past the limit of calls a user may have running, a call is refused with 429 and logged
/// as denied (saying why), never as a call that ran and was cancelled.
#[test]
fn a_call_past_the_running_limit_is_refused_and_logged_as_denied() {
    let f = Fixture::new();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(f.dir.path().join("toolhost.db"));
    let mut server = Server::start(cmd);
    let api = Api {
        addr: &server.addr,
        token: Some(admin_token(&server.logs())),
    };
    let slow = json!({"tool": "slow", "arguments": {"steps": 1, "delay_ms": 20000}});
    let running: Vec<String> = (0..32).map(|_| start(&api, slow.clone())).collect();
    let r = api.request("POST", "/calls", Some(&slow));
    problem(&r, 429, "32 calls running already");
    let until = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let page = json_of(&api.request("GET", "/calls?outcome=denied", None));
        if let Some(row) = page["items"].as_array().unwrap().first() {
            break row.clone();
        }
        assert!(Instant::now() < until, "the refusal was not logged");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(refused["tool"], "slow", "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("calls running already"),
        "{refused}"
    );
    for id in &running {
        let r = api.request("DELETE", &format!("/calls/{id}"), None);
        assert!(r.status == 202 || r.status == 409, "{}", r.body);
    }
    // The 32 end cancelled; nothing else is logged as cancelled.
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let page = json_of(&api.request("GET", "/calls?outcome=cancelled&limit=100", None));
        let n = page["items"].as_array().unwrap().len();
        assert!(n <= 32, "{page}");
        if n == 32 {
            break;
        }
        assert!(Instant::now() < until, "{page}");
        std::thread::sleep(Duration::from_millis(200));
    }
    server.stop();
}
