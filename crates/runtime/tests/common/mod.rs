//! Shared set-up for runtime tests: the fixture catalog and a runtime with a private cache.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolhost_catalog::{Catalog, Root, RootOrigin, Tool};
use toolhost_runtime::{
    CallEvent, CallRequest, Runtime, RuntimeConfig, ToolEnv, ToolRef, ToolResult, UserSpace,
};
use toolhost_sandbox::SandboxConfig;

/// The `toolhost` binary when these tests are compiled into the toolhost crate (which
/// runs them all again with the sandbox on); `None` in the runtime crate itself.
pub const HELPER: Option<&str> = option_env!("CARGO_BIN_EXE_toolhost");

/// What the sandboxed run needs of the machine (shared with the toolhost tests).
#[path = "../../../toolhost/tests/machine/mod.rs"]
pub mod machine;

pub fn fixtures() -> PathBuf {
    let runtime = match HELPER {
        Some(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    };
    runtime.join("tests/fixtures")
}

/// A temporary directory that a sandboxed tool (another uid) may read, as tool roots are.
pub fn tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

pub fn catalog_of(root: &Path) -> Catalog {
    let c = Catalog::scan(vec![Root {
        path: root.to_path_buf(),
        origin: RootOrigin::Flag,
    }]);
    assert!(
        c.diagnostics().iter().all(|d| !d.is_error()),
        "{:?}",
        c.diagnostics()
    );
    c
}

pub fn tool(name: &str) -> Arc<Tool> {
    let c = catalog_of(&fixtures());
    Arc::clone(
        &c.get(name)
            .unwrap_or_else(|| panic!("no fixture {name}"))
            .tool,
    )
}

pub struct Env {
    pub runtime: Runtime,
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn user(&self, name: &str) -> UserSpace {
        UserSpace {
            user: name.into(),
            home: self.dir.path().join("users").join(name),
        }
    }

    /// A file in `user`'s home: its host path, and the path a tool uses for it (inside
    /// the sandbox: under `/officer/user`).
    pub fn file(&self, user: &str, name: &str) -> (PathBuf, String) {
        let home = self.user(user).home;
        std::fs::create_dir_all(&home).unwrap();
        let inside = match HELPER {
            Some(_) => format!("/officer/user/{name}"),
            None => home.join(name).display().to_string(),
        };
        (home.join(name), inside)
    }

    pub fn request(&self, tool: Arc<Tool>, args: Value) -> CallRequest {
        CallRequest {
            tool: ToolRef::Folder(tool),
            args,
            user: self.user("ada@example.com"),
            tool_call_id: None,
            timeout: None,
        }
    }

    pub async fn call(&self, name: &str, args: Value) -> ToolResult {
        self.runtime
            .call(self.request(tool(name), args))
            .result()
            .await
    }

    /// The result and every progress text seen on the way.
    pub async fn call_with_progress(&self, req: CallRequest) -> (ToolResult, Vec<(u64, String)>) {
        let mut call = self.runtime.call(req);
        let mut progress = Vec::new();
        loop {
            match call.next().await.unwrap() {
                CallEvent::Progress(p) => progress.push((p.seq, p.text())),
                CallEvent::Done(r) => return (r, progress),
            }
        }
    }
}

pub fn config() -> RuntimeConfig {
    let sandbox = match HELPER {
        Some(helper) => {
            machine::sandbox();
            SandboxConfig {
                helper: Some(helper.into()),
                // The fixtures' network tool talks to a test server on the host's loopback,
                // on a random port: the operator's way to allow that.
                network_ports: Vec::new(),
                network_private: vec!["127.0.0.1/32".parse().unwrap()],
                ..SandboxConfig::default()
            }
        }
        None => SandboxConfig::disabled(),
    };
    RuntimeConfig {
        cancel_grace: Duration::from_millis(500),
        sandbox,
        ..RuntimeConfig::default()
    }
}

pub fn env_with(config: RuntimeConfig, mut tool_env: ToolEnv) -> Env {
    let dir = tempdir();
    // The tool roots the tests use: the fixtures, and a scratch root for edited copies.
    if tool_env.tools_dirs.is_empty() {
        let scratch = dir.path().join("tools");
        std::fs::create_dir_all(&scratch).unwrap();
        tool_env.tools_dirs = vec![fixtures(), scratch];
    }
    let config = RuntimeConfig {
        cache_dir: Some(dir.path().join("cache")),
        ..config
    };
    Env {
        runtime: Runtime::new(config, tool_env).unwrap(),
        dir,
    }
}

pub fn env() -> Env {
    env_with(config(), ToolEnv::default())
}

/// Runs a call on its own task (so it makes progress meanwhile); returns a canceller.
pub fn spawn_call(
    runtime: &Runtime,
    req: CallRequest,
) -> (
    toolhost_runtime::Canceller,
    tokio::task::JoinHandle<ToolResult>,
) {
    let call = runtime.call(req);
    let canceller = call.canceller();
    (canceller, tokio::spawn(call.result()))
}

/// Whether a process exists.
pub fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false)
}

/// Pids of processes whose command line contains `needle`.
pub fn pids_running(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline"))
            && String::from_utf8_lossy(&cmd).contains(needle)
            && alive(pid)
        {
            out.push(pid);
        }
    }
    out
}

/// Live processes in process group `pgid`, read from `/proc` (not from the runtime's own
/// bookkeeping), each with its command line.
pub fn group_members(pgid: i32) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command name in parentheses: state, ppid, pgrp.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            out.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    out
}

/// Set in the child process [`alone`] starts: the name of the test it runs.
const ALONE: &str = "TOOLHOST_TEST_ALONE";

/// For a test that measures this process (its memory): under `cargo test` other tests run
/// in the same process meanwhile and would count. Outside that child, runs the test named
/// `name` again, alone, in a child process of this test binary, asserts it passed, and
/// returns false; in the child, returns true: the caller then does the measuring.
pub fn alone(name: &str) -> bool {
    if std::env::var(ALONE).as_deref() == Ok(name) {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .env(ALONE, name)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // "1 passed": a name that matched no test would pass too.
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name}, run alone, failed:\n{stdout}\n{stderr}"
    );
    false
}

/// The name libtest knows the test `function` by, from the `module_path!()` of the module
/// that declares it (the same tests also run as a module of the sandboxed suite).
pub fn test_name(module: &str, function: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{function}"),
        None => function.to_string(),
    }
}

/// Starts measuring this process's peak resident memory afresh; returns the current one.
pub fn reset_peak_rss_kib() -> usize {
    std::fs::write("/proc/self/clear_refs", "5").expect(
        "this kernel cannot reset a process's peak RSS (/proc/self/clear_refs, Linux 4.0+): \
         the host memory tests need it",
    );
    status_kib("VmRSS:")
}

/// This process's peak resident memory since [`reset_peak_rss_kib`].
pub fn peak_rss_kib() -> usize {
    status_kib("VmHWM:")
}

fn status_kib(key: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
