//! Shared by the MCP tests: fixture data directories, the server under test, the clients.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

// common.rs and line_client.rs each hold a copy: a test may include either or both.
#[allow(clippy::duplicate_mod)]
#[path = "stderr.rs"]
pub mod stderr;

// A test may include this and the machine module both.
#[allow(clippy::duplicate_mod)]
#[path = "../machine/mod.rs"]
pub mod machine;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The official SDKs, installed by `scripts/test` (npm ci, and a venv with `pip install mcp`).
pub fn clients_dir() -> PathBuf {
    let dir = repo().join("tests/mcp-clients");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the MCP TypeScript SDK is not installed in {}: run `bash scripts/test` (it runs `npm ci` there)",
        dir.display()
    );
    dir
}

pub fn python() -> PathBuf {
    let py = repo().join("target/mcp-venv/bin/python");
    assert!(
        py.is_file(),
        "the MCP Python SDK is not installed at {}: run `bash scripts/test` (it creates that venv)",
        py.display()
    );
    py
}

/// `Host` values that only look local, and `Origin`s that are not loopback ones: each must
/// get 403 (DNS rebinding; review row 45).
pub const FOREIGN_HOSTS: &[&str] = &[
    "evil.com",
    "localhost.evil.com",
    "127.0.0.1.nip.io",
    "0.0.0.0",
    "127.0.0.2",
    "localhost.",
];
pub const FOREIGN_ORIGINS: &[&str] = &[
    "http://evil.com",
    "null",
    "http://localhost@evil.com",
    "http://localhost.evil.com",
];

/// A data directory in the seed's layout: `data/tools` holds the fixture tools `echo` and
/// `slow`; `data/tester` is the user `tester`'s home.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        // Its tools run in the sandbox: a machine that cannot run it fails here, saying why.
        machine::sandbox();
        let dir = tempfile::tempdir().unwrap();
        // Sandboxed tools run as their own uid on a root host: roots must be world-readable.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("tester")).unwrap();
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-tools"),
            &data.join("tools"),
        );
        let f = Fixture { dir };
        std::fs::write(f.config(), f.config_text()).unwrap();
        f
    }

    /// `toolhost.toml` for this fixture (`TOOLHOST_CONFIG` points at it).
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("toolhost.toml")
    }

    /// Tags every tool process with this fixture: `[env]` reaches every tool, sandboxed
    /// or not, so the tag finds them in `/proc/PID/environ`.
    pub fn config_text(&self) -> String {
        format!("[env]\nTOOLHOST_TEST_TAG = {:?}\n", self.tag())
    }

    fn tag(&self) -> String {
        format!("mcp-fixture:{}", self.dir.path().display())
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn tools(&self) -> PathBuf {
        self.data().join("tools")
    }

    pub fn home(&self, user: &str) -> PathBuf {
        self.data().join(user)
    }

    /// `toolhost` with a private cache and data home.
    pub fn toolhost(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        self.environment(&mut cmd);
        cmd
    }

    /// The environment `toolhost` gets, for a command that starts it (such as a shell).
    pub fn environment(&self, cmd: &mut Command) {
        cmd.env_remove("PI_TOOLS_DIRS")
            .env("TOOLHOST_CONFIG", self.config())
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env("XDG_DATA_HOME", self.dir.path().join("xdg-data"));
    }

    /// Tool processes still alive that carry this fixture's tag.
    pub fn tool_processes(&self) -> Vec<u32> {
        let needle = format!("TOOLHOST_TEST_TAG={}", self.tag()).into_bytes();
        let me = std::process::id();
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            // Zombies have an empty environ and are not running anyway.
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if environ.split(|b| *b == 0).any(|kv| kv == needle.as_slice()) {
                pids.push(pid);
            }
        }
        pids
    }

    /// Fails unless every tool process of this fixture is gone within a few seconds.
    pub fn assert_no_tool_processes(&self) {
        let until = Instant::now() + Duration::from_secs(8);
        loop {
            let left = self.tool_processes();
            if left.is_empty() {
                return;
            }
            assert!(Instant::now() < until, "orphan tool processes: {left:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A running `toolhost serve`, stopped with SIGTERM when dropped. Its stderr is collected:
/// stopping it fails the test if the server panicked (review row 75).
pub struct Server {
    pub child: Child,
    pub url: String,
    pub addr: String,
    stderr: stderr::Collected,
    checked: bool,
}

impl Server {
    pub fn start(cmd: Command) -> Server {
        Server::start_at(cmd, "127.0.0.1:0")
    }

    /// `serve` listening on `listen` (such as `[::1]:0`).
    pub fn start_at(mut cmd: Command, listen: &str) -> Server {
        let mut child = cmd
            .arg("--listen")
            .arg(listen)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut before = String::new();
        let url = loop {
            let mut line = String::new();
            let n = stderr.read_line(&mut line).unwrap();
            before += &line;
            assert!(n > 0, "serve exited before listening:\n{before}");
            if let Some(rest) = line.split("serving MCP at ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_string();
            }
        };
        eprint!("serve: {before}");
        // Keep draining the logs so the server never blocks on a full pipe.
        let stderr = stderr::Collected::start("serve", before, stderr);
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        Server {
            child,
            url,
            addr,
            stderr,
            checked: false,
        }
    }

    /// What the server logged so far.
    pub fn logs(&self) -> String {
        self.stderr.text()
    }

    /// SIGTERM, then the exit status; fails if the server panicked at any point.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let status = self.terminate();
        self.checked = true;
        self.stderr.assert_no_panic();
        status
    }

    fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                if std::thread::panicking() {
                    return self.child.wait().unwrap();
                }
                panic!("serve did not stop within 10 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.terminate();
        }
        // A test already failing reports its own failure (a second panic would abort).
        if !self.checked && !std::thread::panicking() {
            self.checked = true;
            self.stderr.assert_no_panic();
        }
    }
}

/// Runs a client script to completion; panics with its output if it fails.
pub fn run_client(mut cmd: Command, what: &str) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stderr}");
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains(": ok"), "{what} did not finish its checks");
}
