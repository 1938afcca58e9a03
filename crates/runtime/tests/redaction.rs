//! Sensitive inputs never appear in logs, progress, errors or results: run calls that
//! echo a secret every way a tool can, capture everything the host logs, and search it.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::json;

const SECRET: &str = "sk-live-7Hq2-SECRET-VALUE";

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_never_reach_logs_progress_errors_or_results() {
    let capture = Capture::default();
    let writer = capture.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let e = common::env();
    let mut seen = String::new();
    for fail in [false, true] {
        let req = e.request(
            common::tool("logs_secret"),
            json!({"token": SECRET, "fail": fail}),
        );
        let (result, progress) = e.call_with_progress(req).await;
        assert_eq!(result.is_error, fail);
        seen += &serde_json::to_string(&result).unwrap();
        seen += &format!("{progress:?}");
        assert!(result.joined_text().contains("[REDACTED]"), "{result:?}");
    }
    // A rejected call must not echo the secret either.
    let r = e
        .call("logs_secret", json!({"token": SECRET, "fail": "maybe"}))
        .await;
    assert!(r.is_error);
    seen += &r.joined_text();
    let r = e
        .call("logs_secret", json!({"token": SECRET, "unknown": 1}))
        .await;
    seen += &r.joined_text();

    // Let the worker's stdout task log the child's line.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("using token [REDACTED]"),
        "console.log is captured (and redacted):\n{logs}"
    );
    assert!(
        logs.contains("child sees [REDACTED]"),
        "a child's inherited stdout is captured:\n{logs}"
    );
    assert!(
        logs.contains("auth failed for [REDACTED]"),
        "the stack goes to the logs:\n{logs}"
    );
    assert!(
        !logs.contains(SECRET),
        "the secret leaked into the logs:\n{logs}"
    );
    assert!(
        !seen.contains(SECRET),
        "the secret leaked to the caller:\n{seen}"
    );
}

/// F9: a secret holding a quote, a backslash or a newline is JSON-escaped in the text block
/// Toolhost renders for an object result (and escaped twice in JSON text inside it).
#[tokio::test(flavor = "multi_thread")]
async fn escaped_secrets_never_reach_rendered_results() {
    let e = common::env();
    let secret = "pa\"ss\\word-LEAKME\nsecond line";
    let r = e.call("returns_secret", json!({ "apikey": secret })).await;
    assert!(!r.is_error, "{r:?}");
    let all = serde_json::to_string(&r).unwrap();
    assert!(all.contains("[REDACTED]"), "{all}");
    assert!(!all.contains("LEAKME"), "the secret leaked: {all}");
    assert!(!all.contains("second line"), "the secret leaked: {all}");
}
