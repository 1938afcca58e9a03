//! `toolhost mcp` driven by hand: one JSON-RPC line out, one line back.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};

use serde_json::{Value, json};

pub struct LineClient {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl LineClient {
    /// Starts `cmd` (a `toolhost mcp …` command) with piped stdin and stdout.
    pub fn start(mut cmd: Command) -> LineClient {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        LineClient {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
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

    /// `initialize` asking for `revision`, then `notifications/initialized`; the answer.
    pub fn initialize(&mut self, revision: &str) -> Value {
        let answer = self.ask(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": revision, "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}));
        self.tell(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Closes stdin (which ends the session) and waits for the server to exit.
    pub fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}
