//! `toolhost mcp --agent ID` serves the agent's resolved tool sets: plugin tools and folder
//! tools alike, with the agent's deny list applied, each call through the runtime.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;
#[path = "mcp/raw_tcp.rs"]
mod raw_tcp;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use line_client::LineClient;
use serde_json::{Value, json};

const CONFIG: &str = r#"
[agents.helper]
grants = [
  { tool_set = "time" },
  { tool_set = "examples", deny = ["hash"] },
]
"#;

fn toolhost(dir: &Path) -> Command {
    toolhost_with(dir, "mcp")
}

fn toolhost_with(dir: &Path, subcommand: &str) -> Command {
    // The agent's folder tools run in the sandbox.
    common::machine::sandbox();
    let config = dir.join("toolhost.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_CONFIG")
        .env_remove("TOOLHOST_PLUGINS")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .arg(subcommand)
        .arg("--config")
        .arg(&config)
        .arg("--tools-dir")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools"));
    cmd
}

#[test]
fn an_agent_gets_its_resolved_tool_sets_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = toolhost(dir.path());
    cmd.args(["--agent", "helper"]);
    let mut client = LineClient::start(cmd);
    client.initialize("2025-11-25");
    let list = client.ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "convert_timezone",
            "disk_usage",
            "file_search",
            "get_current_time",
            "json_query",
            "text_stats",
            "word_frequency"
        ],
        "the agent's grants, minus its deny list, in name order"
    );
    // A native tool's tool-set annotations reach the client as MCP's hints.
    let time = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "get_current_time")
        .unwrap();
    assert_eq!(time["annotations"]["readOnlyHint"], true, "{time}");
    assert_eq!(time["annotations"]["destructiveHint"], false, "{time}");
    // A folder tool, run in the sandbox by the runtime.
    let r = client.ask(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "text_stats", "arguments": {"text": "One two. Three four five."}}}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Words: 5"),
        "{r}"
    );
    // A native tool of the utilities plugin.
    let r = client.ask(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "convert_timezone",
        "arguments": {"time": "2026-01-15 12:00", "from_timezone": "UTC", "to_timezone": "Asia/Tokyo"}}}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(r.to_string().contains("21:00"), "{r}");
    // Denied to this agent: not a tool it can call.
    let r = client.ask(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "hash", "arguments": {"text": "x"}}}),
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{r}"
    );
    assert!(client.close().success());
}

#[test]
fn an_unknown_agent_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolhost(dir.path())
        .args(["--agent", "nobody"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no agent `nobody`"), "{stderr}");
}

/// One HTTP request to `path`; the JSON-RPC message of the answer (plain or as an SSE
/// event) and the session id, if any.
fn post(
    addr: &str,
    path: &str,
    session: Option<&str>,
    body: &Value,
) -> (Option<Value>, Option<String>) {
    use std::io::Read;
    let body = body.to_string();
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(id) = session {
        head += &format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    }
    conn.write_all(format!("{head}\r\n{body}").as_bytes())
        .unwrap();
    let mut raw = String::new();
    conn.read_to_string(&mut raw).unwrap();
    let (headers, rest) = raw.split_once("\r\n\r\n").unwrap();
    assert!(headers.starts_with("HTTP/1.1 2"), "{raw}");
    let session = headers.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id")
            .then(|| v.trim().to_string())
    });
    let message = rest
        .lines()
        .filter_map(|l| l.strip_prefix("data:").map(str::trim).or(Some(l.trim())))
        .find_map(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .filter(|v| v.get("jsonrpc").is_some())
        });
    (message, session)
}

#[test]
fn serve_gives_each_agent_an_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = toolhost_with(dir.path(), "serve")
        .args(["--no-store", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut addr = None;
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        if let Some(url) = line.split("serving MCP at http://").nth(1) {
            addr = url.split('/').next().map(str::to_string);
        }
        if line.contains("/agents/helper/mcp") {
            break;
        }
        line.clear();
    }
    let addr = addr.expect("serve printed its address");
    let names = http_tool_names(&addr, "/agents/helper/mcp");
    assert!(
        names.iter().any(|n| n == "get_current_time") && !names.iter().any(|n| n == "hash"),
        "{names:?}"
    );
    // The catalog's own endpoint still serves every folder tool.
    let names = http_tool_names(&addr, "/mcp");
    assert!(names.iter().any(|n| n == "hash"), "{names:?}");
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    child.wait().unwrap();
}

/// Opens a session at `path` and lists its tools' names.
fn http_tool_names(addr: &str, path: &str) -> Vec<String> {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let (_, session) = post(addr, path, None, &init);
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(addr, path, Some(&session), &initialized);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (list, _) = post(addr, path, Some(&session), &list);
    list.unwrap()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// One stateless (2026-07-28) request to `path`, as the holder of `token` (if any).
fn stateless(
    addr: &str,
    path: &str,
    token: Option<&str>,
    method: &str,
    mut params: Value,
) -> raw_tcp::Reply {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
    );
    if let Some(name) = params["name"].as_str() {
        head += &format!("Mcp-Name: {name}\r\n");
    }
    if let Some(token) = token {
        head += &format!("Authorization: Bearer {token}\r\n");
    }
    let request = format!("{head}Content-Length: {}\r\n\r\n{body}", body.len());
    let mut replies = raw_tcp::exchange(addr, request.as_bytes());
    assert_eq!(replies.len(), 1, "{replies:?}");
    replies.remove(0)
}

/// The JSON-RPC message of an answer (plain, or the data of an SSE event).
fn message(r: &raw_tcp::Reply) -> Value {
    let text = r
        .body
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .unwrap_or(&r.body);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {r:?}"))
}

/// Review row 55: with `[[serve.tokens]]`, an agent's endpoint needs a token like `/mcp`
/// (401 with `WWW-Authenticate: Bearer`), and serves a user the agent's tools only:
/// another user's own tool is unknown there, though its owner calls it at `/mcp`.
#[test]
fn agent_endpoints_need_a_token_and_serve_no_other_users_tools() {
    let f = common::Fixture::new();
    let own = f.data().join("bob@example.com/tools/bob_only");
    common::copy_dir(&f.tools().join("echo"), &own);
    let md = own.join("TOOL.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(&md, text.replace("name: echo", "name: bob_only")).unwrap();
    let hash = toolhost_host::hash_token;
    // `data-tools` is the tool set of the root DATA/tools (see `toolhost plugins`).
    std::fs::write(
        f.config(),
        f.config_text()
            + &format!(
                "[[serve.tokens]]\nuser = \"ada@example.com\"\nsha256 = \"{}\"\n\n\
                 [[serve.tokens]]\nuser = \"bob@example.com\"\nsha256 = \"{}\"\n\n\
                 [agents.helper]\ngrants = [{{ tool_set = \"data-tools\" }}]\n",
                hash("ada-agent-t"),
                hash("bob-agent-t"),
            ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data());
    let server = common::Server::start(cmd);
    let addr = server.addr.as_str();
    let agent = "/agents/helper/mcp";

    for token in [None, Some("wrong")] {
        let r = stateless(addr, agent, token, "tools/list", json!({}));
        assert_eq!(r.status, 401, "{token:?}: {r:?}");
        assert_eq!(r.header("www-authenticate"), Some("Bearer"));
        assert_eq!(r.body, "", "a 401 tells nothing");
    }

    let call = |path: &str, token: &str, name: &str| {
        let params = json!({"name": name, "arguments": {"text": "hi"}});
        message(&stateless(addr, path, Some(token), "tools/call", params))
    };
    // Bob's own tool is real: he calls it at /mcp.
    let r = call("/mcp", "bob-agent-t", "bob_only");
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    // Ada, at the agent's endpoint, gets the agent's tools and not bob's.
    let list = message(&stateless(
        addr,
        agent,
        Some("ada-agent-t"),
        "tools/list",
        json!({}),
    ));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && !names.contains(&"bob_only"),
        "{names:?}"
    );
    let r = call(agent, "ada-agent-t", "echo");
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    let r = call(agent, "ada-agent-t", "bob_only");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool")),
        "{r}"
    );
}
