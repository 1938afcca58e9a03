//! The standard tools (`seed/tools/`, Officer's ten) run as a user runs them: a data folder
//! whose `tools` is a copy of the seed, the user `tester`'s home beside it, a
//! `toolhost.toml` the test writes (`[env]`, `[resources]`, `[sandbox] network_private` to
//! reach a loopback fake), and each call made through `toolhost call` or `toolhost mcp`,
//! in the sandbox. Include with `#[path = "mcp/standard.rs"] mod standard;` beside
//! `mcp/common.rs`, `mcp/line_client.rs` and `machine`.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::copy_dir;
use crate::line_client::LineClient;

/// The user whose home tools write to.
pub const USER: &str = "tester";

/// The repository's `seed/tools`.
pub fn seed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../seed/tools")
}

/// What one call gave.
#[derive(Debug)]
pub struct Outcome {
    /// `toolhost call`'s exit status (0: the tool succeeded; 1: `isError`).
    pub code: i32,
    /// The result: `{"content": [...], "isError": bool}`.
    pub result: Value,
    pub stderr: String,
}

impl Outcome {
    /// The result's text blocks, one per line.
    pub fn text(&self) -> String {
        text_of(&self.result)
    }

    pub fn is_error(&self) -> bool {
        self.result["isError"] == true
    }
}

/// A result's text blocks, one per line.
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

pub struct Officer {
    pub dir: tempfile::TempDir,
}

impl Officer {
    /// A data folder with the seed's tools and `config` as `toolhost.toml`.
    pub fn new(config: &str) -> Officer {
        crate::machine::sandbox();
        let dir = tempfile::tempdir().unwrap();
        // Sandboxed tools run as their own uid on a root host: roots must be readable,
        // and the home writable by them.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let o = Officer { dir };
        copy_dir(&seed(), &o.data().join("tools"));
        std::fs::create_dir_all(o.home()).unwrap();
        std::fs::write(o.config(), config).unwrap();
        o
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `tester`'s home on the host (`/officer/user` in the sandbox).
    pub fn home(&self) -> PathBuf {
        self.data().join(USER)
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("toolhost.toml")
    }

    /// `toolhost SUBCOMMAND` over this data folder, as `tester`.
    pub fn toolhost(&self, subcommand: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        cmd.env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLHOST_DATABASE_URL")
            .env("TOOLHOST_CONFIG", self.config())
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env("XDG_DATA_HOME", self.dir.path().join("xdg-data"))
            .arg(subcommand)
            .arg("--data")
            .arg(self.data())
            .arg("--user")
            .arg(USER);
        cmd
    }

    /// `toolhost call TOOL --args ARGS --json`.
    pub fn call(&self, tool: &str, args: Value) -> Outcome {
        let out = self
            .toolhost("call")
            .arg(tool)
            .arg("--args")
            .arg(args.to_string())
            .arg("--json")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{stderr}");
        let result = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!("`toolhost call {tool}` printed no JSON ({e}):\n{stdout}\n{stderr}")
        });
        Outcome {
            code: out.status.code().unwrap_or(-1),
            result,
            stderr,
        }
    }

    /// The same call through `toolhost mcp` (stdio, JSON-RPC): the `tools/call` result.
    pub fn mcp_call(&self, tool: &str, args: Value) -> Value {
        let mut client = LineClient::start(self.toolhost("mcp"));
        client.initialize("2025-11-25");
        let answer = client.ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
        client.close();
        answer["result"].clone()
    }

    /// `tool` called through `toolhost call` and through `toolhost mcp`: both must give the
    /// same answer. Whether it was an error, and its text.
    pub fn both(&self, tool: &str, args: Value) -> (bool, String) {
        let call = self.call(tool, args.clone());
        assert_eq!(call.code, i32::from(call.is_error()), "{}", call.stderr);
        let mcp = self.mcp_call(tool, args.clone());
        assert_eq!(
            mcp["isError"] == true,
            call.is_error(),
            "{args}: call and mcp disagree: {} / {mcp}",
            call.text()
        );
        assert_eq!(text_of(&mcp), call.text(), "{args}");
        (call.is_error(), call.text())
    }

    /// [`Officer::both`], which must succeed: its text.
    pub fn ok(&self, tool: &str, args: Value) -> String {
        let (is_error, text) = self.both(tool, args.clone());
        assert!(!is_error, "{args}: {text}");
        text
    }

    /// [`Officer::both`], which must fail: its text.
    pub fn fails(&self, tool: &str, args: Value) -> String {
        let (is_error, text) = self.both(tool, args.clone());
        assert!(is_error, "{args} should fail: {text}");
        text
    }

    /// The tools `toolhost mcp` lists, by name.
    pub fn mcp_tools(&self) -> Vec<String> {
        let mut client = LineClient::start(self.toolhost("mcp"));
        client.initialize("2025-11-25");
        let answer = client.ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        client.close();
        let mut names: Vec<String> = answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    }
}
