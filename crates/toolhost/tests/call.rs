//! `toolhost call` as a user runs it.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

mod machine;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/tests/fixtures")
}

/// `toolhost call` over the runtime's fixtures, which run in the sandbox.
fn toolhost(cache: &Path) -> Command {
    machine::sandbox();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_CONFIG")
        .env("XDG_CACHE_HOME", cache.join("cache"))
        .env("XDG_DATA_HOME", cache.join("data"))
        .arg("call")
        .arg("--tools-dir")
        .arg(fixtures());
    cmd
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

#[test]
fn prints_the_result_and_streams_progress_to_stderr() {
    let t = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run(toolhost(t.path()).args([
        "echo",
        "text=hello",
        "times=2",
        "--args",
        r#"{"mode": "fancy"}"#,
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "*hello hello*\nnumber undefined\n");
    assert!(
        stderr.contains("progress: step 1\n") && stderr.contains("progress: step 2\n"),
        "{stderr}"
    );
}

#[test]
fn json_output_and_error_exit_status() {
    let t = tempfile::tempdir().unwrap();
    let (code, stdout, _) = run(toolhost(t.path()).args(["shapes", "shape=object", "--json"]));
    assert_eq!(code, 0);
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"]["rows"], 2);
    let (code, stdout, stderr) = run(toolhost(t.path()).args(["throws"]));
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(stderr.trim_end(), "error: boom: the widget is broken");
    let (code, stdout, _) = run(toolhost(t.path()).args([
        "marker_tool",
        "path=/nonexistent/x",
        "n:=\"many\"",
        "--json",
    ]));
    assert_eq!(code, 1);
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["isError"], true);
    assert_eq!(
        r["content"][0]["text"],
        "invalid arguments: `n`: expected a number, got \"many\""
    );
}

#[test]
fn timeout_flag_and_clear_usage_errors() {
    let t = tempfile::tempdir().unwrap();
    // The deadline also covers starting the tool (a sandbox and a Node.js worker): leave
    // it time to start, so that it is the running tool that ignores the cancellation.
    let (code, _, stderr) = run(toolhost(t.path()).args(["never_settles", "--timeout", "3"]));
    assert_eq!(code, 1);
    assert_eq!(
        stderr.trim_end().lines().last(),
        Some("error: timed out after 3 s"),
        "{stderr}"
    );
    assert!(
        stderr.contains("ignored cancellation"),
        "the kill is reported: {stderr}"
    );
    for (args, expected) in [
        (vec!["nope"], "error: no tool named `nope` in the catalog"),
        (
            vec!["echo", "oops"],
            "error: parameter \"oops\" is not KEY=VALUE or KEY:=JSON",
        ),
        (
            vec!["echo", "--args", "[1]"],
            "error: --args must be a JSON object",
        ),
        (
            vec!["echo", "--timeout", "0"],
            "error: --timeout must be a positive number of seconds",
        ),
    ] {
        let (code, _, stderr) = run(toolhost(t.path()).args(&args));
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.starts_with(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn the_config_file_sets_the_tools_environment() {
    let t = tempfile::tempdir().unwrap();
    let config = t.path().join("toolhost.toml");
    std::fs::write(&config, "[env]\nPI_SEARXNG_URL = \"http://127.0.0.1:8888\"\n\n[resources.ocr]\nendpoint = \"http://127.0.0.1:9\"\n").unwrap();
    let (code, stdout, stderr) = run(toolhost(t.path())
        .args(["env_dump", "--config"])
        .arg(&config)
        .env("SOME_HOST_SECRET", "x"));
    assert_eq!(code, 0, "{stderr}");
    let env: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(env["PI_SEARXNG_URL"], "http://127.0.0.1:8888");
    assert_eq!(
        env["OFFICER_RESOURCES"],
        r#"{"ocr":{"endpoint":"http://127.0.0.1:9"}}"#
    );
    assert!(
        env.get("SOME_HOST_SECRET").is_none(),
        "the host's environment leaked"
    );
    std::fs::write(&config, "[runtime]\ntimeout = \"soon\"\n").unwrap();
    let (code, _, stderr) = run(toolhost(t.path())
        .args(["env_dump", "--config"])
        .arg(&config));
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!("error: {}:2:11: ", config.display())),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_cancels_the_call() {
    let t = tempfile::tempdir().unwrap();
    // The sandboxed tool sees the default user's home as /officer/user.
    let home = t.path().join("data/toolhost/users/default");
    std::fs::create_dir_all(&home).unwrap();
    let marker = home.join("aborted");
    let mut child = toolhost(t.path())
        .arg("respects_abort")
        .arg("marker=/officer/user/aborted")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-C once the tool is surely running: it says so as progress.
    let mut stderr = String::new();
    let mut lines = BufReader::new(child.stderr.take().unwrap());
    while !stderr.contains("progress: waiting for abort\n") {
        let n = lines.read_line(&mut stderr).unwrap();
        assert!(n > 0, "the call ended before the tool ran: {stderr}");
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    lines.read_to_string(&mut stderr).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cancelling") && stderr.contains("error: cancelled"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(marker).unwrap(), "aborted");
}

#[test]
fn the_example_tools_run() {
    let t = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools");
    // The tools run sandboxed: the user's home is /officer/user, the tools /officer/tools.
    let home = t.path().join("data/toolhost/users/default");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("data.json"),
        r#"{"items": [{"name": "pen"}, {"name": "ink"}]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(home.join("notes/big")).unwrap();
    std::fs::write(home.join("notes/big/a.txt"), "sandbox ".repeat(40_000)).unwrap();
    std::fs::write(home.join("notes/small.txt"), "the tool and the sandbox").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["text_stats".into(), "text=One two. Three four five.".into()],
            "Words: 5",
        ),
        (
            vec![
                "json_query".into(),
                "path=/officer/user/data.json".into(),
                "query=items[-1].name".into(),
            ],
            "\"ink\"",
        ),
        (
            vec!["hash".into(), "text=hello world".into()],
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9",
        ),
        (
            vec![
                "file_search".into(),
                "root=/officer/tools".into(),
                "pattern=function\\* walk".into(),
            ],
            "file_search/lib/walk.ts:",
        ),
        // The Python and Bash examples, sandboxed like the TypeScript ones.
        (
            vec![
                "word_frequency".into(),
                "path=notes/small.txt".into(),
                "skip_stop_words=false".into(),
            ],
            "5 words, 4 distinct.\n  1. the          2  40.0%\n  2. and          1  20.0%",
        ),
        (
            vec!["disk_usage".into(), "path=notes".into(), "top=1".into()],
            "/officer/user/notes: ",
        ),
        (vec!["disk_usage".into(), "path=notes".into()], "  big\n"),
    ];
    for (args, expected) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        cmd.env("XDG_CACHE_HOME", t.path().join("cache"))
            .env("XDG_DATA_HOME", t.path().join("data"))
            .args(["call", "--tools-dir"])
            .arg(&examples)
            .args(&args);
        let (code, stdout, stderr) = run(&mut cmd);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(stdout.contains(expected), "{args:?}: {stdout}");
    }
}

/// Review row 56: `toolhost call` at `TOOLHOST_LOG=trace`, with the logs on stderr and
/// with `--log-file`, never shows a `sensitive` value: not in the result (text or
/// `--json`), the progress, the error message, the tool's own output, nor the log file.
#[test]
fn a_sensitive_value_stays_out_of_the_output_and_the_logs_at_trace_level() {
    let t = tempfile::tempdir().unwrap();
    let secret = "sk-cli-4Rt8-TRACE-LEVEL-SECRET";
    let log = t.path().join("toolhost.log");
    let token = format!("token={secret}");
    let misplaced = format!("fail={secret}");
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["logs_secret", &token, "fail=true"], 1),
        (vec!["logs_secret", &token, "--json"], 0),
        (vec!["leaks_secret", &token, "how=reject"], 1),
        (vec!["leaks_secret", &token, "how=timer"], 1),
        (vec!["leaks_secret", &token, "how=is_error", "--json"], 1),
        (vec!["leaks_secret_py", &token], 1),
        (vec!["leaks_secret_py", &token, "quiet=true"], 1),
        // Validation fails on a secret sent where it does not belong (review row 57).
        (vec!["logs_secret", &token, &misplaced], 1),
    ];
    for (args, expected) in &cases {
        for to_file in [false, true] {
            let mut cmd = toolhost(t.path());
            cmd.env("TOOLHOST_LOG", "trace");
            if to_file {
                cmd.arg("--log-file").arg(&log);
            }
            let (code, stdout, stderr) = run(cmd.args(args));
            assert_eq!(code, *expected, "{args:?}: {stdout}{stderr}");
            assert!(
                !stdout.contains(secret) && !stderr.contains(secret),
                "{args:?} (log file: {to_file}) leaked the secret:\n{stdout}\n{stderr}"
            );
            if !to_file {
                assert!(
                    stderr.contains(r#""token":"[REDACTED]""#)
                        || stderr.contains("rejected arguments"),
                    "{args:?}: no trace logs on stderr:\n{stderr}"
                );
            }
        }
    }
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.matches(r#""token":"[REDACTED]""#).count() >= cases.len() - 1,
        "the log file lacks the calls:\n{logged}"
    );
    assert!(
        logged.contains("stderr sees [REDACTED]"),
        "the tools' output is logged:\n{logged}"
    );
    assert!(
        !logged.contains(secret),
        "the secret leaked into the log file:\n{logged}"
    );
}
