//! The standard tool `browser` (`seed/tools/browser`), through `toolhost call` and
//! `toolhost mcp`, in the sandbox, against a Browser Relay (`fixtures/browser-relay/`:
//! the relay's HTTP surface and CDP WebSocket behind its derived token) in front of a real
//! headless Chromium showing local pages: tabs, navigate, snapshot, type, click, press,
//! back, evaluate, screenshot, wait; a wrong token and a relay that is not running.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;
mod machine;
#[path = "mcp/standard.rs"]
mod standard;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use standard::{Officer, text_of};

const GATEWAY: &str = "gateway-token-for-tests";

/// A process killed (by its id) when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Headless Chromium on a free loopback debugging port: the process and the port.
fn chromium(profile: &Path) -> (Killed, u16) {
    machine::program("chromium", "chromium");
    let child = Command::new("/usr/bin/chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "--window-size=1000,700",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let child = Killed(child);
    let file = profile.join("DevToolsActivePort");
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(port) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
        {
            return (child, port);
        }
        assert!(
            Instant::now() < until,
            "Chromium did not open its debugging port"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The relay in front of Chromium: the process, the relay's port and the pages' port.
fn relay(chrome_port: u16, log: &Path) -> (Killed, u16, u16) {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/browser-relay/relay.mjs");
    let mut child = Command::new("node")
        .arg(script)
        .arg(chrome_port.to_string())
        .arg(GATEWAY)
        .arg(log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut port = |prefix: &str| -> u16 {
        let line = lines.next().unwrap().unwrap();
        line.strip_prefix(prefix).unwrap().trim().parse().unwrap()
    };
    let relay_port = port("RELAY ");
    let pages_port = port("PAGES ");
    (Killed(child), relay_port, pages_port)
}

fn config(port: u16, token: &str) -> String {
    format!(
        "[env]\nOFFICER_BROWSER_RELAY_PORT = \"{port}\"\nOFFICER_BROWSER_RELAY_TOKEN = \"{token}\"\n\n\
         [sandbox]\nnetwork_private = [\"127.0.0.1/32\"]\nnetwork_ports = []\n"
    )
}

/// One call; the result's text, failing the test on an error result.
fn ok(o: &Officer, args: Value) -> String {
    let r = o.call("browser", args.clone());
    assert!(!r.is_error(), "{args}: {}\n{}", r.text(), r.stderr);
    r.text()
}

/// The number a snapshot gave the element described by `kind` and `label`.
fn reference(snapshot: &str, kind: &str, label: &str) -> u64 {
    let wanted = format!("] {kind} \"{label}\"");
    let line = snapshot
        .lines()
        .find(|l| l.contains(&wanted))
        .unwrap_or_else(|| panic!("no {kind} {label:?} in:\n{snapshot}"));
    line[1..line.find(']').unwrap()].parse().unwrap()
}

#[test]
fn the_browser_tool_drives_chromium_through_the_relay() {
    let t = tempfile::tempdir().unwrap();
    let (_chrome, chrome_port) = chromium(&t.path().join("profile"));
    let log = t.path().join("relay.log");
    let (_relay, relay_port, pages) = relay(chrome_port, &log);
    let o = Officer::new(&config(relay_port, GATEWAY));
    let page = |p: &str| format!("http://127.0.0.1:{pages}{p}");

    let tabs = ok(&o, json!({"action": "tabs"}));
    assert!(tabs.contains("about:blank"), "{tabs}");

    let opened = ok(&o, json!({"action": "navigate", "url": page("/form.html")}));
    assert!(opened.contains("\"Order form\""), "{opened}");

    let snap = ok(&o, json!({"action": "snapshot"}));
    assert!(snap.starts_with("Order form\n"), "{snap}");
    assert!(snap.contains("Nothing searched yet."), "{snap}");
    let query = reference(&snap, "input text", "Query");
    let search = reference(&snap, "button", "Search");
    let link = reference(&snap, "link", "The second page");

    // Type, click: the page's own script sees both.
    let typed = ok(&o, json!({"action": "type", "ref": query, "text": "cafés"}));
    assert!(typed.contains("\"cafés\""), "{typed}");
    ok(&o, json!({"action": "click", "ref": search}));
    let out = ok(
        &o,
        json!({"action": "evaluate", "expression": "document.getElementById('out').textContent"}),
    );
    assert_eq!(out, "\"Searched: cafés\"");

    // A form submitted with Enter; then back.
    ok(
        &o,
        json!({"action": "type", "selector": "#item", "text": "widget"}),
    );
    let pressed = ok(&o, json!({"action": "press", "key": "Enter"}));
    assert!(pressed.contains("/submitted.html?item=widget"), "{pressed}");
    ok(&o, json!({"action": "wait", "selector": "#got"}));
    let got = ok(
        &o,
        json!({"action": "evaluate", "expression": "document.getElementById('got').textContent"}),
    );
    assert_eq!(got, "\"Got widget\"");
    let back = ok(&o, json!({"action": "back"}));
    assert!(back.contains("/form.html"), "{back}");

    // A screenshot: a PNG in the home, and an image block.
    let shot = o.call(
        "browser",
        json!({"action": "screenshot", "output_path": "shots/form.png"}),
    );
    assert!(!shot.is_error(), "{}", shot.text());
    let png = std::fs::read(o.home().join("shots/form.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let image = shot.result["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap();
    assert_eq!(image["mimeType"], "image/png");

    // The same through MCP: a fresh snapshot numbers the link again, and a click follows it.
    let mcp = o.mcp_call("browser", json!({"action": "snapshot"}));
    let snap = text_of(&mcp);
    assert_eq!(reference(&snap, "link", "The second page"), link);
    let clicked = o.mcp_call("browser", json!({"action": "click", "ref": link}));
    assert!(text_of(&clicked).contains("\"Second page\""), "{clicked}");

    // Errors the model can act on.
    let threw = o.call(
        "browser",
        json!({"action": "evaluate", "expression": "nope.nothing"}),
    );
    assert!(
        threw.is_error() && threw.text().contains("threw"),
        "{}",
        threw.text()
    );
    let stale = o.call("browser", json!({"action": "click", "ref": 999}));
    assert!(
        stale.is_error() && stale.text().contains("take a new snapshot"),
        "{}",
        stale.text()
    );

    // What the relay saw: the derived token on every request, no token in the clear, and
    // no foreign Origin on the CDP WebSocket.
    let entries: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        entries.iter().any(|e| e["kind"] == "upgrade"),
        "{entries:?}"
    );
    for e in &entries {
        let token = e["token"].as_str().unwrap();
        assert!(
            token.len() == 64 && token.chars().all(|c| c.is_ascii_hexdigit()),
            "{e}"
        );
        assert_ne!(token, GATEWAY);
        assert!(
            e["origin"].is_null()
                || e["origin"]
                    .as_str()
                    .unwrap()
                    .starts_with("chrome-extension://"),
            "{e}"
        );
    }

    // A wrong token, and a relay that is not there.
    let wrong = Officer::new(&config(relay_port, "not-the-token"));
    let r = wrong.call("browser", json!({"action": "tabs"}));
    assert!(
        r.is_error() && r.text().contains("refused the token"),
        "{}",
        r.text()
    );
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let nobody = Officer::new(&config(closed, GATEWAY));
    let r = nobody.call("browser", json!({"action": "tabs"}));
    assert!(
        r.is_error() && r.text().contains("not reachable"),
        "{}",
        r.text()
    );
}
