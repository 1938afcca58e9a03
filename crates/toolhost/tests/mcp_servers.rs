//! Stdio MCP servers start through the launcher, in the sandbox: the official filesystem
//! server still serves the folder it is given, and a probe server shows what a sandboxed
//! server can and cannot reach (its own home and uid, granted paths only, read-only where
//! granted so, no network unless granted), against the same server run outside it.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use line_client::LineClient;
use serde_json::{Value, json};

fn servers_dir() -> PathBuf {
    let dir = common::repo().join("crates/mcp-client/tests/mcp-servers");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/server-filesystem")
            .is_dir(),
        "the MCP servers are not installed in {}: run `bash scripts/test` (it runs `npm ci` there)",
        dir.display()
    );
    dir
}

/// `toolhost mcp --agent all` over `config`, with `dir` for the cache and data.
fn serve(dir: &Path, config: &str) -> LineClient {
    common::machine::sandbox();
    let path = dir.join("toolhost.toml");
    std::fs::write(&path, config).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_CONFIG")
        .env_remove("TOOLHOST_PLUGINS")
        .env("TOOLHOST_TEST_HOST_ONLY", "leaked")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .args(["mcp", "--agent", "all", "--config"])
        .arg(&path);
    let mut client = LineClient::start(cmd);
    client.initialize("2025-11-25");
    client
}

fn tool_names(client: &mut LineClient) -> Vec<String> {
    let list = client.ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// Calls `tool` and returns its text, with whether it is an error result.
fn call(client: &mut LineClient, tool: &str, args: Value) -> (String, bool) {
    let answer = client.ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": args}}));
    let result = &answer["result"];
    let text = result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (text, result["isError"].as_bool().unwrap_or(false))
}

fn toml_path(p: &Path) -> String {
    format!("{:?}", p.display().to_string())
}

/// A folder a server of another uid may read (tests run as root; tempdirs are 0700).
fn folder(parent: &Path, name: &str, mode: u32) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

#[test]
fn the_filesystem_server_serves_its_folder_from_the_sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = folder(tmp.path(), "docs", 0o755);
    std::fs::write(docs.join("readme.txt"), "hello from the docs").unwrap();
    let notes = folder(tmp.path(), "notes", 0o777);
    let secret = folder(tmp.path(), "secret", 0o755);
    std::fs::write(secret.join("key.txt"), "do not show").unwrap();
    let servers = servers_dir();
    let config = format!(
        r#"
[mcp_servers.fs]
command = ["node", {script}, {docs}, {notes}]
read_only = [{modules}]
read_write = [{notes}]
timeout = 30

[agents.all]
grants = [{{ mcp_server = "fs" }}]
"#,
        script = toml_path(
            &servers.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
        ),
        docs = toml_path(&docs),
        notes = toml_path(&notes),
        modules = toml_path(&servers.join("node_modules")),
    );
    let mut client = serve(tmp.path(), &config);
    let names = tool_names(&mut client);
    assert!(
        names.contains(&"fs__read_text_file".to_string())
            && names.contains(&"fs__write_file".to_string()),
        "{names:?}"
    );

    let (text, error) = call(
        &mut client,
        "fs__list_directory",
        json!({"path": docs.display().to_string()}),
    );
    assert!(!error && text.contains("readme.txt"), "{text}");
    let (text, error) = call(
        &mut client,
        "fs__read_text_file",
        json!({"path": docs.join("readme.txt").display().to_string()}),
    );
    assert!(!error && text.contains("hello from the docs"), "{text}");

    // The read-write grant takes writes, which land on the host.
    let (text, error) = call(
        &mut client,
        "fs__write_file",
        json!({"path": notes.join("new.md").display().to_string(), "content": "written"}),
    );
    assert!(!error, "{text}");
    assert_eq!(
        std::fs::read_to_string(notes.join("new.md")).unwrap(),
        "written"
    );
    // The folder given read-only does not, whatever the server itself allows.
    let (text, error) = call(
        &mut client,
        "fs__write_file",
        json!({"path": docs.join("new.md").display().to_string(), "content": "x"}),
    );
    assert!(error && text.contains("EROFS"), "{text}");
    assert!(!docs.join("new.md").exists());
    client.close();
}

#[test]
fn a_sandboxed_server_reaches_only_what_it_was_granted() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = folder(tmp.path(), "shared", 0o755);
    std::fs::write(shared.join("data.txt"), "granted").unwrap();
    let secret = folder(tmp.path(), "secret", 0o755);
    std::fs::write(secret.join("key.txt"), "host only").unwrap();
    std::fs::set_permissions(
        secret.join("key.txt"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let servers = servers_dir();
    let command = format!(
        "[\"node\", {}]",
        toml_path(&servers.join("probe-server.mjs"))
    );
    let config = format!(
        r#"
[sandbox]
network_ports = [{port}]
network_private = ["127.0.0.1/32"]

[mcp_servers.boxed]
command = {command}
read_only = [{shared}]

[mcp_servers.networked]
command = {command}
network = true

[mcp_servers.host]
command = {command}
sandbox = false

[agents.all]
grants = [{{ mcp_server = "boxed" }}, {{ mcp_server = "networked" }}, {{ mcp_server = "host" }}]
"#,
        shared = toml_path(&shared),
    );
    let mut client = serve(tmp.path(), &config);
    let names = tool_names(&mut client);
    for server in ["boxed", "networked", "host"] {
        assert!(names.contains(&format!("{server}__read")), "{names:?}");
    }
    let key = json!({"path": secret.join("key.txt").display().to_string()});
    let data = json!({"path": shared.join("data.txt").display().to_string()});

    // Outside the sandbox the server reads the host's files: the control.
    assert_eq!(
        call(&mut client, "host__read", key.clone()).0,
        "ok: host only"
    );
    // Inside, what was not granted does not exist; what was granted reads, never writes.
    assert_eq!(call(&mut client, "boxed__read", key).0, "error: ENOENT");
    assert_eq!(call(&mut client, "boxed__read", data).0, "ok: granted");
    let write = json!({"path": shared.join("new.txt").display().to_string(), "text": "x"});
    assert_eq!(call(&mut client, "boxed__write", write).0, "error: EROFS");

    // Its own home and uid, the tools' PATH, nothing of the host's environment.
    let (text, _) = call(&mut client, "boxed__env", json!({}));
    let seen: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let home = tmp.path().join("cache/toolhost/mcp-servers/boxed");
    assert_eq!(seen["env"]["HOME"], home.display().to_string(), "{seen}");
    assert_eq!(seen["cwd"], home.display().to_string(), "{seen}");
    assert_eq!(
        seen["env"]["PATH"], "/usr/local/bin:/usr/bin:/bin",
        "{seen}"
    );
    assert!(seen["env"]["TOOLHOST_TEST_HOST_ONLY"].is_null(), "{seen}");
    let (text, _) = call(&mut client, "host__env", json!({}));
    let host: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        host["env"]["TOOLHOST_TEST_HOST_ONLY"],
        Value::Null,
        "{host}"
    );
    assert_eq!(
        host["uid"].as_u64(),
        Some(u64::from(rustix::process::getuid().as_raw()))
    );
    if rustix::process::getuid().is_root() {
        // Its uid is its own (mapped to 0 inside its user namespace): it cannot be the
        // host's root, whatever it reports.
        let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&home).unwrap());
        assert_ne!(owner, 0, "the server's home is handed to its own uid");
    }

    // The network only when granted.
    let to = json!({"port": port});
    assert_eq!(
        call(&mut client, "host__connect", to.clone()).0,
        "ok: connected"
    );
    let (text, _) = call(&mut client, "boxed__connect", to.clone());
    assert!(text.starts_with("error:"), "{text}");
    assert_eq!(
        call(&mut client, "networked__connect", to).0,
        "ok: connected"
    );
    client.close();
}

#[test]
fn a_server_that_cannot_start_in_the_sandbox_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    // The script's folder is shown, and nothing else of the host: it cannot find the SDK.
    let script = folder(tmp.path(), "elsewhere", 0o755).join("server.mjs");
    std::fs::write(
        &script,
        "import '@modelcontextprotocol/sdk/server/mcp.js';\n",
    )
    .unwrap();
    let config = format!(
        r#"
[mcp_servers.broken]
command = ["node", {script}]
timeout = 30

[mcp_servers.missing]
command = ["node", {script}]
read_only = ["/no/such/folder/for/toolhost"]

[agents.all]
grants = [{{ mcp_server = "broken" }}, {{ mcp_server = "missing" }}]
"#,
        script = toml_path(&script),
    );
    let mut client = serve(tmp.path(), &config);
    assert_eq!(tool_names(&mut client), Vec::<String>::new());
    client.close();
    // The warnings name each server and the cause, in the server's own words.
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_PLUGINS")
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env("XDG_DATA_HOME", tmp.path().join("data"))
        .args(["resolve", "--agent", "all", "--config"])
        .arg(tmp.path().join("toolhost.toml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("MCP server `broken`")
            && stderr.contains("its stderr says")
            && stderr.contains("Cannot find package '@modelcontextprotocol/sdk'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("MCP server `missing`")
            && stderr
                .contains("`read_only` names /no/such/folder/for/toolhost, which does not exist"),
        "{stderr}"
    );
}
