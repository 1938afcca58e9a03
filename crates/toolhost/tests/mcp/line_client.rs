//! `toolhost mcp` driven by hand: one JSON-RPC line out, one line back.
#![allow(dead_code)]

// common.rs and line_client.rs each hold a copy: a test may include either or both.
#[allow(clippy::duplicate_mod)]
#[path = "stderr.rs"]
mod stderr;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The server's stderr is collected: closing the client (or dropping it) fails the test if
/// the server panicked (review row 75).
pub struct LineClient {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: stderr::Collected,
    closed: bool,
}

impl LineClient {
    /// Starts `cmd` (a `toolhost mcp …` command) with piped stdin, stdout and stderr.
    pub fn start(mut cmd: Command) -> LineClient {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        LineClient {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            stderr: stderr::Collected::start("mcp", String::new(), stderr),
            child,
            closed: false,
        }
    }

    /// Sends a message without waiting for anything (a notification).
    pub fn tell(&mut self, msg: Value) {
        writeln!(self.stdin.as_mut().unwrap(), "{msg}").unwrap();
    }

    /// Sends a request and reads the next line as its answer.
    pub fn ask(&mut self, msg: Value) -> Value {
        self.tell(msg);
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request and reads lines until its answer: the answer, and every message
    /// that came before it (notifications such as `notifications/progress`, or answers
    /// to other requests).
    pub fn ask_collecting(&mut self, msg: Value) -> (Value, Vec<Value>) {
        let id = msg["id"].clone();
        self.tell(msg);
        let mut before = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(
                n > 0,
                "toolhost mcp closed its stdout before answering {id}"
            );
            let value: Value = serde_json::from_str(&line).unwrap();
            if value.get("id") == Some(&id) && value.get("method").is_none() {
                return (value, before);
            }
            before.push(value);
        }
    }

    /// The server's process id (for a watchdog that bounds a test).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote to stderr so far.
    pub fn logs(&self) -> String {
        self.stderr.text()
    }

    /// `initialize` asking for `revision`, then `notifications/initialized`; the answer.
    pub fn initialize(&mut self, revision: &str) -> Value {
        let answer = self.ask(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": revision, "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}));
        self.tell(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Closes stdin (which ends the session) and waits for the server to exit; fails if
    /// it panicked.
    pub fn close(mut self) -> ExitStatus {
        let status = self.end();
        self.closed = true;
        self.stderr.assert_no_panic();
        status
    }

    /// Closes stdin and waits for the server to exit (killing it after 10 s).
    fn end(&mut self) -> ExitStatus {
        drop(self.stdin.take());
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                let status = self.child.wait().unwrap();
                assert!(
                    std::thread::panicking(),
                    "toolhost mcp kept running 10 s after its stdin closed"
                );
                return status;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for LineClient {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        self.end();
        // A test already failing reports its own failure (a second panic would abort).
        if !std::thread::panicking() {
            self.stderr.assert_no_panic();
        }
    }
}
