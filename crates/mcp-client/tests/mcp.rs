//! MCP servers as tool sources, against real servers: the official TypeScript SDK (stdio),
//! the official Python SDK (Streamable HTTP with a bearer token), one that hangs (with a
//! child of its own) and one that exits at start.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::time::Duration;

use serde_json::json;
use toolhost_mcp_client::{McpServerConfig, Problem};
use toolhost_runtime::{CallEvent, Runtime, RuntimeConfig, ServerLauncher, ToolEnv, UserSpace};
use toolhost_toolsets::{
    AgentConfig, Annotations, BootOptions, CorePlugins, Grant, Owner, Registry, ToolMap, ToolSet,
    Tools, ToolsetsConfig, TurnRequest, typed_tool,
};

#[path = "mcp-servers/py.rs"]
mod py;

use py::py_server;

fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-servers")
}

fn node_server(script: &str, env: &[(&str, &Path)]) -> McpServerConfig {
    assert!(
        servers_dir()
            .join("node_modules/@modelcontextprotocol/sdk")
            .is_dir(),
        "the TypeScript SDK is missing: run scripts/test, which installs it"
    );
    McpServerConfig {
        command: vec![
            "node".into(),
            servers_dir().join(script).display().to_string(),
        ],
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.display().to_string()))
            .collect(),
        timeout: Some(Duration::from_secs(15)),
        ..McpServerConfig::default()
    }
}

fn alive(pid: u32) -> bool {
    // A zombie has been killed; it only waits for its parent to reap it.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

async fn gone(pid: u32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Stdio servers start outside the sandbox here: the sandbox needs a helper binary that
/// calls `helper_main` first, which a libtest binary is not. The toolhost crate's
/// `mcp_servers` tests run them in the sandbox, with its binary as the helper.
fn launcher() -> ServerLauncher {
    let mut config = RuntimeConfig::default();
    config.sandbox.enabled = false;
    ServerLauncher::new(&config)
}

fn registry(servers: Vec<(&str, McpServerConfig)>, grants: Vec<Grant>) -> Registry {
    let servers: BTreeMap<String, McpServerConfig> = servers
        .into_iter()
        .map(|(name, s)| (name.to_string(), s))
        .collect();
    let mut config = ToolsetsConfig::default();
    config.agents.insert(
        "a".into(),
        AgentConfig {
            grants,
            ..Default::default()
        },
    );
    Registry::boot(
        CorePlugins::new(),
        BootOptions {
            config,
            extra_sets: vec![local_set()],
            external: toolhost_mcp_client::sources(&servers, &launcher()).unwrap(),
            ..BootOptions::default()
        },
    )
    .unwrap()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo back.
    text: String,
}

/// The tool set `local` (`local_a`, `local_b`): native tools granted beside the servers.
fn local_set() -> (ToolSet, Owner) {
    let echo = |name: &str| {
        typed_tool(
            name,
            "Echo.",
            Annotations::read_only(),
            |a: EchoArgs, _ctx| async move { Ok(json!({ "echo": a.text })) },
        )
    };
    let tools = ToolMap::new().with(echo("local_a")).with(echo("local_b"));
    (
        ToolSet::new(
            "local",
            "Local",
            "Tests",
            "native tools",
            Tools::Static(tools),
        ),
        Owner::Plugin {
            name: "tests".into(),
        },
    )
}

fn runtime(dir: &Path) -> Runtime {
    Runtime::new(
        RuntimeConfig {
            cache_dir: Some(dir.to_path_buf()),
            ..RuntimeConfig::default()
        },
        ToolEnv::default(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_servers_become_tool_sets_and_broken_ones_cost_only_their_tools() {
    let tmp = tempfile::tempdir().unwrap();
    let ts_pid = tmp.path().join("ts.pid");
    let hang_pids = tmp.path().join("hang.pids");
    let cancel = tmp.path().join("cancelled");
    let py = py_server("s3cret", None);
    let mut hang = node_server("hang-server.mjs", &[("PID_FILE", &hang_pids)]);
    hang.timeout = Some(Duration::from_secs(2));
    let dead = McpServerConfig {
        command: vec![
            "sh".into(),
            "-c".into(),
            "echo 'missing API key' >&2; exit 3".into(),
        ],
        ..McpServerConfig::default()
    };
    let r = registry(
        vec![
            (
                "ts",
                node_server(
                    "ts-server.mjs",
                    &[("PID_FILE", &ts_pid), ("CANCEL_FILE", &cancel)],
                ),
            ),
            (
                "py",
                McpServerConfig {
                    url: Some(py.url.clone()),
                    bearer_token: Some("s3cret".into()),
                    ..McpServerConfig::default()
                },
            ),
            ("hang", hang),
            ("dead", dead),
        ],
        vec![
            Grant::mcp_server("ts"),
            Grant::mcp_server("py"),
            Grant::mcp_server("hang"),
            Grant::mcp_server("dead"),
            Grant::tool_set("local"),
        ],
    );
    let turn = r.resolve("a", &TurnRequest::default()).await.unwrap();
    let names: Vec<&str> = turn.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "local_a",
            "local_b",
            "py__greet",
            "py__multiply",
            "ts__add",
            "ts__slow"
        ],
        "{:?}",
        turn.warnings
    );
    let warnings: Vec<String> = turn
        .warnings
        .iter()
        .map(|w| format!("{}: {}", w.source, w.message))
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("ts__xxxx") && w.contains("never truncated")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("MCP server `hang`") && w.contains("no answer within 2 s")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("MCP server `dead`")
            && w.contains("its stderr says: missing API key")),
        "a server that dies at start is reported in its own words: {warnings:?}"
    );
    assert_eq!(
        turn.tool("ts__add").unwrap().annotations().read_only,
        Some(true)
    );

    // The hung server and its own child were killed with their process group.
    let pids = std::fs::read_to_string(&hang_pids).unwrap();
    for pid in pids.split_whitespace() {
        assert!(
            gone(pid.parse().unwrap()).await,
            "hang-server process {pid} leaked"
        );
    }

    // Calls go through the runtime; progress comes back, cancellation goes out.
    let rt = runtime(tmp.path());
    let user = UserSpace {
        user: "t".into(),
        home: tmp.path().join("home"),
    };
    let res = turn
        .tool("ts__add")
        .unwrap()
        .call(&rt, json!({"a": 2, "b": 40}), user.clone())
        .result()
        .await;
    assert_eq!(res.joined_text(), "42", "{res:?}");
    assert_eq!(res.structured_content, Some(json!({"sum": 42})));
    let res = turn
        .tool("py__multiply")
        .unwrap()
        .call(&rt, json!({"a": 6, "b": 7}), user.clone())
        .result()
        .await;
    assert!(res.joined_text().starts_with("42"), "{res:?}");
    let res = turn
        .tool("ts__add")
        .unwrap()
        .call(&rt, json!({"a": "x"}), user.clone())
        .result()
        .await;
    assert!(
        res.is_error,
        "arguments are validated against the server's schema: {res:?}"
    );

    let mut call = turn
        .tool("ts__slow")
        .unwrap()
        .call(&rt, json!({"steps": 3}), user.clone());
    // Updates may be coalesced (a late, older one is dropped), never reordered; the last
    // one always arrives.
    let mut seen = Vec::new();
    while seen.last().is_none_or(|s: &String| s != "step 3 (3/3)") {
        match call.next().await.unwrap() {
            CallEvent::Progress(p) => seen.push(p.text()),
            CallEvent::Done(r) => panic!("finished early: {r:?}"),
        }
    }
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted);
    call.cancel();
    let res = call.result().await;
    assert!(
        res.is_error && res.joined_text().contains("cancelled"),
        "{res:?}"
    );
    for _ in 0..100 {
        if cancel.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(cancel.exists(), "the server saw the cancellation");

    // Back-off: the dead server is skipped on the next turn; the Python server, once
    // gone, is served from its last listing with a warning.
    drop(py);
    turn.end().await;
    let turn = r.resolve("a", &TurnRequest::default()).await.unwrap();
    let warnings: Vec<String> = turn
        .warnings
        .iter()
        .map(|w| format!("{}: {}", w.source, w.message))
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("MCP server `dead`") && w.contains("skipped after 1 failure")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("MCP server `py`") && w.contains("serving its tools as listed")),
        "{warnings:?}"
    );
    assert!(turn.tool("py__greet").is_some());
    turn.end().await;

    // Dropping the registry closes the connections: the stdio server's group is killed.
    let ts = std::fs::read_to_string(&ts_pid)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(ts));
    drop(r);
    assert!(gone(ts).await, "ts-server leaked");
}

#[tokio::test]
async fn a_wrong_bearer_token_costs_the_servers_tools() {
    let py = py_server("right", None);
    let r = registry(
        vec![(
            "py",
            McpServerConfig {
                url: Some(py.url.clone()),
                bearer_token: Some("wrong".into()),
                timeout: Some(Duration::from_secs(10)),
                ..McpServerConfig::default()
            },
        )],
        vec![Grant::mcp_server("py"), Grant::tool_set("local")],
    );
    let turn = r.resolve("a", &TurnRequest::default()).await.unwrap();
    assert_eq!(turn.tools.len(), 2, "only the local set");
    assert!(
        turn.warnings[0].message.contains("left out"),
        "{:?}",
        turn.warnings
    );
}

#[tokio::test]
async fn dropping_the_registry_kills_a_stdio_servers_process_group() {
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("ts.pid");
    let r = registry(
        vec![(
            "ts",
            node_server("ts-server.mjs", &[("PID_FILE", &pid_file)]),
        )],
        vec![Grant::mcp_server("ts")],
    );
    let turn = r.resolve("a", &TurnRequest::default()).await.unwrap();
    assert!(turn.tool("ts__add").is_some(), "{:?}", turn.warnings);
    drop(turn);
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    drop(r);
    assert!(gone(pid).await, "ts-server leaked");
}

#[test]
fn bad_server_configuration_is_a_typed_error_naming_the_server() {
    let cases = [
        (
            "both",
            McpServerConfig {
                command: vec!["x".into()],
                url: Some("http://127.0.0.1:1/mcp".into()),
                ..McpServerConfig::default()
            },
        ),
        ("neither", McpServerConfig::default()),
        (
            "ftp",
            McpServerConfig {
                url: Some("ftp://127.0.0.1/mcp".into()),
                ..McpServerConfig::default()
            },
        ),
        (
            "bad__name",
            McpServerConfig {
                command: vec!["x".into()],
                ..McpServerConfig::default()
            },
        ),
        (
            "env",
            McpServerConfig {
                url: Some("http://127.0.0.1:1/mcp".into()),
                bearer_token_env: Some("TOOLHOST_TEST_NO_SUCH_VARIABLE".into()),
                ..McpServerConfig::default()
            },
        ),
        (
            "http_grant",
            McpServerConfig {
                url: Some("http://127.0.0.1:1/mcp".into()),
                read_write: vec!["/srv".into()],
                ..McpServerConfig::default()
            },
        ),
        (
            "relative",
            McpServerConfig {
                command: vec!["x".into()],
                read_only: vec!["docs".into()],
                ..McpServerConfig::default()
            },
        ),
    ];
    for (name, config) in cases {
        let servers = BTreeMap::from([(name.to_string(), config)]);
        let e = toolhost_mcp_client::sources(&servers, &launcher())
            .err()
            .unwrap();
        assert_eq!(e.server, name);
        let expected = match name {
            "both" => matches!(e.problem, Problem::BothTransports),
            "neither" => matches!(e.problem, Problem::NoTransport),
            "ftp" => matches!(e.problem, Problem::NotHttp),
            "bad__name" => matches!(e.problem, Problem::InvalidName),
            "http_grant" => matches!(e.problem, Problem::StdioOnly("read_write")),
            "relative" => {
                matches!(e.problem, Problem::RelativePath { key: "read_only", ref path } if path.as_os_str() == "docs")
            }
            _ => {
                matches!(e.problem, Problem::BearerTokenUnset(ref v) if v == "TOOLHOST_TEST_NO_SUCH_VARIABLE")
            }
        };
        assert!(expected, "{name}: {e}");
        assert!(
            e.to_string().starts_with(&format!("MCP server `{name}`: ")),
            "{e}"
        );
    }
    let e = toolhost_mcp_client::sources(
        &BTreeMap::from([(
            "both".to_string(),
            McpServerConfig {
                command: vec!["x".into()],
                url: Some("http://127.0.0.1:1/mcp".into()),
                ..McpServerConfig::default()
            },
        )]),
        &launcher(),
    )
    .err()
    .unwrap();
    assert!(
        e.to_string()
            .starts_with("MCP server `both`: give `command` (stdio) or `url`"),
        "{e}"
    );
}
