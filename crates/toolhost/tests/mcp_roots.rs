//! F15 on a running `serve`: the global tool root swapped by `mv`, and a user's own
//! `DATA/EMAIL/tools` deleted and re-created, are both served again, with
//! `notifications/tools/list_changed` on the way.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;

use common::{Fixture, Server, copy_dir};
use raw_http::{Session, open, read_until};

const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn token_hash(f: &Fixture, token: &str) -> String {
    let mut child = f
        .toolhost()
        .args(["token", "hash"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{token}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The `echo` tool folder `from`, copied to `to` under another tool name.
fn echo_named(from: &Path, name: &str, to: &Path) {
    copy_dir(from, to);
    let md = to.join("TOOL.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(&md, text.replace("name: echo", &format!("name: {name}"))).unwrap();
}

fn listed(s: &Session, name: &str) -> bool {
    s.post(LIST).body.contains(&format!(r#""name":"{name}""#))
}

/// Lists until `done` holds, waiting for a `list_changed` notice between tries; a
/// server that never notices the change fails in `read_until`.
fn until_listed(s: &Session, notices: &mut TcpStream, done: impl Fn(&Session) -> bool) {
    while !done(s) {
        read_until(notices, "notifications/tools/list_changed");
    }
}

#[test]
fn serve_keeps_serving_roots_that_are_replaced_while_it_runs() {
    let f = Fixture::new();
    let ada = "ada@example.com";
    let own = f.data().join(ada).join("tools");
    let echo = f.dir.path().join("echo");
    copy_dir(&f.tools().join("echo"), &echo);
    echo_named(&echo, "mine", &own.join("mine"));
    let config = f.dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        f.config_text()
            + &format!(
                "[[serve.tokens]]\nuser = \"{ada}\"\nsha256 = \"{}\"\n",
                token_hash(&f, "ada-secret")
            ),
    )
    .unwrap();
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--data")
        .arg(f.data())
        .arg("--config")
        .arg(&config);
    let server = Server::start(cmd);
    let addr = server.addr.as_str();
    let auth = ("Authorization", "Bearer ada-secret");
    let s = Session::open(addr, &[auth]);
    assert!(listed(&s, "echo") && listed(&s, "mine"));
    // The session's stream of server notices.
    let mut notices = open(
        addr,
        "GET",
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &s.id),
            ("MCP-Protocol-Version", &s.revision),
            auth,
        ],
        b"",
    );
    read_until(&mut notices, "200 OK");

    // F15: the global root swapped with `mv` for a new one.
    let tools = f.tools();
    let old = f.data().join("tools.old");
    std::fs::rename(&tools, &old).unwrap();
    std::fs::create_dir(&tools).unwrap();
    echo_named(&echo, "echo2", &tools.join("echo2"));
    until_listed(&s, &mut notices, |s| {
        listed(s, "echo2") && !listed(s, "echo")
    });

    // F15: the user's own tools deleted and re-created.
    std::fs::remove_dir_all(&own).unwrap();
    until_listed(&s, &mut notices, |s| !listed(s, "mine"));
    std::fs::create_dir(&own).unwrap();
    echo_named(&echo, "mine2", &own.join("mine2"));
    until_listed(&s, &mut notices, |s| listed(s, "mine2"));
    // And edits in the new folder are seen too.
    echo_named(&echo, "mine3", &own.join("mine3"));
    until_listed(&s, &mut notices, |s| listed(s, "mine3"));
}
