//! Running a browser test of the console: a script of `tests/browser/` (on
//! `tests/browser/harness.mjs`) in Debian's Chromium against a running server, its
//! `RESULT` read back, and the budgets every page's first load must keep.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::{self, Fixture, Server};
use crate::stored::admin_token;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Budgets, per page's first load: everything on the wire, the HTML compressed, the
/// largest contentful paint.
const TOTAL_BUDGET: f64 = 100.0 * 1024.0;
const HTML_BUDGET: f64 = 50.0 * 1024.0;
const LCP_BUDGET_MS: f64 = 1000.0;

/// Where the browser tests live, once Chromium and playwright-core are installed.
pub fn browser_dir() -> PathBuf {
    let dir = common::repo().join("tests/browser");
    assert!(
        std::path::Path::new(CHROMIUM).is_file(),
        "Chromium is not installed at {CHROMIUM}: run `bash scripts/test` (it installs Debian's \
         chromium with apt-get)"
    );
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed in {}: run `bash scripts/test` (it runs `npm ci` there)",
        dir.display()
    );
    dir
}

/// Where screenshots are kept.
pub fn screenshots() -> PathBuf {
    common::repo().join("target/console-screenshots")
}

/// Runs `tests/browser/SCRIPT.mjs` against `base` signed in with `token` (and `env`),
/// and returns its `RESULT`; a failed script fails the test with its output.
pub fn run_script(script: &str, base: &str, token: &str, env: &[(&str, &str)]) -> Value {
    let browser = browser_dir();
    let out = Command::new("node")
        .arg(browser.join(format!("{script}.mjs")))
        .current_dir(&browser)
        .env("CONSOLE_URL", base)
        .env("CONSOLE_TOKEN", token)
        .env("SCREENSHOTS", screenshots())
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run node: {e}: run `bash scripts/test`"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stderr}");
    assert!(
        out.status.success() && stderr.contains(&format!("{script}: ok")),
        "the browser test {script} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .map(|j| serde_json::from_str(j).unwrap_or_else(|e| panic!("RESULT: {e}: {j}")))
        .unwrap_or_else(|| panic!("no RESULT line in:\n{stdout}"))
}

/// Every page measured kept the budgets, and at least `at_least` were measured.
pub fn assert_budgets(result: &Value, at_least: usize) {
    let budgets = result["budgets"].as_array().cloned().unwrap_or_default();
    assert!(budgets.len() >= at_least, "{budgets:?}");
    for b in &budgets {
        let total = b["total"].as_f64().unwrap_or(0.0);
        let html = b["html"].as_f64().unwrap_or(0.0);
        assert!(
            total > 0.0 && total <= TOTAL_BUDGET,
            "first load over 100 KB: {b}"
        );
        assert!(html > 0.0 && html <= HTML_BUDGET, "HTML over 50 KB: {b}");
        let lcp = b["lcp"]
            .as_f64()
            .unwrap_or_else(|| panic!("no largest contentful paint measured: {b}"));
        assert!(
            lcp < LCP_BUDGET_MS,
            "largest contentful paint over 1 s: {b}"
        );
        assert_eq!(b["encoding"], "gzip", "pages are served compressed: {b}");
    }
}

/// Each of `names` has a screenshot.
pub fn assert_screenshots(names: &[&str]) {
    for name in names {
        assert!(
            screenshots().join(format!("{name}.png")).is_file(),
            "no screenshot of {name}"
        );
    }
}

/// `serve` over the fixture with its store in `toolhost.db` beside it: the server, the
/// admin's token printed at its first start, and its base URL.
pub fn serve_console(f: &Fixture) -> (Server, String, String) {
    let db = f.dir.path().join("toolhost.db");
    let mut cmd = f.toolhost();
    cmd.args(["serve", "--data"])
        .arg(f.data())
        .arg("--database")
        .arg(&db);
    let server = Server::start(cmd);
    let token = admin_token(&server.logs());
    let base = format!("http://{}", server.addr);
    (server, token, base)
}
