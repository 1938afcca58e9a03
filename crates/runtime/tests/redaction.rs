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

/// Everything the host logs at trace level, from every test of this binary: each test
/// looks for its own secret in it.
fn logs() -> Capture {
    static LOGS: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let capture = Capture::default();
        let writer = capture.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .init();
        capture
    })
    .clone()
}

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// The logs once every one of `lines` is in them: the worker's output tasks log a
    /// tool's lines after its call has returned, so the test waits for them to arrive.
    async fn once_logged(&self, lines: &[&str]) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let logs = self.text();
            let missing: Vec<_> = lines.iter().filter(|l| !logs.contains(**l)).collect();
            if missing.is_empty() {
                return logs;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{missing:?} never reached the logs:\n{logs}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_never_reach_logs_progress_errors_or_results() {
    let capture = logs();

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

    // console.log is captured (and redacted), a child's inherited stdout too, and the
    // stack goes to the logs.
    let logs = capture
        .once_logged(&[
            "using token [REDACTED]",
            "child sees [REDACTED]",
            "auth failed for [REDACTED]",
        ])
        .await;
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

/// Review row 56: a secret in a rejected promise (an `Error` or a bare value), a crash in
/// a timer, an unhandled rejection, an `isError` result, and a Python tool that writes it
/// to stderr and progress and exits 1 (its error message from stdout, or from stderr when
/// stdout is empty), for a mixed-case secret and an upper-case one: `[REDACTED]` in the
/// result, progress and logs, never the secret.
#[tokio::test(flavor = "multi_thread")]
async fn secrets_stay_out_of_rejections_crashes_error_results_and_python_stderr() {
    let capture = logs();
    let e = common::env();
    let secrets = ["tok-9fQ2-Rejected-Value", "AKIA7UPPERCASESECRET9"];
    let mut seen = String::new();
    for secret in secrets {
        for how in ["reject", "reject_value", "timer", "unhandled", "is_error"] {
            let req = e.request(
                common::tool("leaks_secret"),
                json!({"token": secret, "how": how}),
            );
            let (r, progress) = e.call_with_progress(req).await;
            let all = format!("{}{progress:?}", serde_json::to_string(&r).unwrap());
            assert!(r.is_error, "{how}: {all}");
            // A crash ends the worker: the message goes to the logs, not the result.
            if !["timer", "unhandled"].contains(&how) {
                assert!(r.joined_text().contains("[REDACTED]"), "{how}: {all}");
            }
            seen += &all;
        }
        for quiet in [false, true] {
            let req = e.request(
                common::tool("leaks_secret_py"),
                json!({"token": secret, "quiet": quiet}),
            );
            let (r, progress) = e.call_with_progress(req).await;
            let all = format!("{}{progress:?}", serde_json::to_string(&r).unwrap());
            let message = if quiet { "stderr sees" } else { "failed for" };
            assert!(r.is_error, "{all}");
            assert!(
                r.joined_text().contains(&format!("{message} [REDACTED]")),
                "quiet={quiet}: {all}"
            );
            assert_eq!(progress[0].1, "progress with [REDACTED]");
            seen += &all;
        }
    }
    let logs = capture
        .once_logged(&[
            "stderr sees [REDACTED]",
            "a timer crashed with [REDACTED]",
            "nobody handled [REDACTED]",
        ])
        .await;
    for secret in secrets {
        assert!(
            !logs.contains(secret),
            "{secret} leaked into the logs:\n{logs}"
        );
        assert!(
            !seen.contains(secret),
            "{secret} leaked to the caller:\n{seen}"
        );
    }
}

/// Review row 57: a secret sent in a parameter that is not `sensitive`, which fails
/// validation, is not echoed: the error says what was wrong with `[REDACTED]` as the
/// value (the call's sensitive values are known before validation).
#[tokio::test(flavor = "multi_thread")]
async fn a_secret_in_a_parameter_that_fails_validation_is_not_echoed() {
    let capture = logs();
    let e = common::env();
    let secret = "sk-live-9Vb3-in-the-wrong-field";
    let r = e
        .call("logs_secret", json!({"token": secret, "fail": secret}))
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.joined_text(),
        "invalid arguments: `fail`: expected a boolean, got \"[REDACTED]\""
    );
    assert!(!capture.text().contains(secret), "{}", capture.text());
}

/// Review row 60, a known limitation: redaction matches the value as given, so a value
/// shorter than 4 bytes is left alone inside longer text (replacing every "ab" would
/// ruin the text and protect nothing; where it stands whole it is replaced, see
/// `short_and_numeric_secrets_are_replaced_as_whole_values`), and so is a value the tool
/// transforms (base64, upper-case, split). This pins the minimum length: 4 bytes are
/// redacted, 3 are not.
#[tokio::test(flavor = "multi_thread")]
async fn values_shorter_than_four_bytes_are_not_redacted() {
    let e = common::env();
    let r = e
        .call("leaks_secret", json!({"token": "k9Z", "how": "is_error"}))
        .await;
    assert_eq!(r.joined_text(), "refused k9Z");
    let r = e
        .call("leaks_secret", json!({"token": "k9Z7", "how": "is_error"}))
        .await;
    assert_eq!(r.joined_text(), "refused [REDACTED]");
}

/// Review row 56, a timer crash after the call: the tool answers, then a timer it left
/// behind throws with the secret. The warm worker dies of it, and its last words go to the
/// logs, where the secret must not be.
#[tokio::test(flavor = "multi_thread")]
async fn a_timer_crashing_after_the_result_does_not_log_the_secret() {
    let capture = logs();
    let e = common::env();
    let secret = "late-9Qx-SECRET-after-the-call";
    let r = e
        .call("leaks_secret", json!({"token": secret, "how": "late"}))
        .await;
    assert_eq!((r.joined_text().as_str(), r.is_error), ("answered", false));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while e.runtime.workers().await > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the late timer did not end the worker"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The worker's last words, redacted, down to the version line Node.js ends a crash
    // report with: the secret is checked once they are all in.
    let logs = capture
        .once_logged(&["a late timer crashed with [REDACTED]", "Node.js v"])
        .await;
    assert!(
        !logs.contains(secret),
        "the secret leaked into the logs:\n{logs}"
    );
}

/// README claim 10 (issue 13): a sensitive value shorter than 4 bytes is not searched for
/// inside text, but where it stands whole (a progress text, a value of the structured
/// result, the text Toolhost renders for an object returned bare) it is replaced, and so
/// is a sensitive number in the structured result. The note that merely mentions the PIN
/// keeps it: that is the documented limit.
#[tokio::test(flavor = "multi_thread")]
async fn short_and_numeric_secrets_are_replaced_as_whole_values() {
    let e = common::env();
    for bare in [false, true] {
        let req = e.request(
            common::tool("short_secret"),
            json!({"pin": "482", "code": 90210, "bare": bare}),
        );
        let mut call = e.runtime.call(req);
        let mut progress = Vec::new();
        let result = loop {
            match call.next().await.unwrap() {
                toolhost_runtime::CallEvent::Progress(p) => progress.extend(p.content),
                toolhost_runtime::CallEvent::Done(r) => break r,
            }
        };
        assert!(!result.is_error, "{result:?}");
        assert_eq!(
            progress,
            vec![json!({"type": "text", "text": "[REDACTED]"})],
            "bare: {bare}"
        );
        let structured = result.structured_content.clone().unwrap();
        assert_eq!(
            structured,
            json!({
                "pin": "[REDACTED]", "code": "[REDACTED]", "pins": ["[REDACTED]"],
                "note": "pin 482 accepted",
            }),
            "bare: {bare}"
        );
        let text = result.joined_text();
        if bare {
            assert_eq!(text, serde_json::to_string_pretty(&structured).unwrap());
            assert!(
                !text.contains("\"482\"") && !text.contains("90210"),
                "{text}"
            );
        } else {
            assert_eq!(text, "accepted");
        }
    }
}
