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

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
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
    RuntimeConfig {
        cancel_grace: Duration::from_millis(500),
        ..RuntimeConfig::default()
    }
}

pub fn env_with(config: RuntimeConfig, tool_env: ToolEnv) -> Env {
    let dir = tempfile::tempdir().unwrap();
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
