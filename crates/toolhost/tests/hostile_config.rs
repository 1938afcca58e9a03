//! Configuration files, flags and arguments written to hurt (security review rows 65, 66,
//! 68 and 72): every one is refused with one clear line naming what is wrong and where, and
//! exit status 2; nothing panics, hangs or is created.
#![allow(clippy::unwrap_used)]

mod machine;

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/tests/fixtures")
}

fn toolhost(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_CONFIG")
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .current_dir(home);
    cmd
}

/// Runs `toolhost ARGS`, expecting a usage error: exit 2 and one `error:` line that
/// contains each of `expected`.
fn refused(home: &Path, args: &[&str], expected: &[&str]) {
    let out = toolhost(home).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected: {stderr}");
    assert!(lines[0].starts_with("error: "), "{args:?}: {stderr}");
    for e in expected {
        assert!(lines[0].contains(e), "{args:?}: expected {e:?} in {stderr}");
    }
}

/// `toolhost call echo text=hi` with `config` as its configuration file.
fn call_with_config(home: &Path, name: &str, config: &str, expected: &[&str]) {
    let file = home.join(name);
    std::fs::write(&file, config).unwrap();
    let fixtures = fixtures();
    refused(
        home,
        &[
            "call",
            "echo",
            "text=hi",
            "--tools-dir",
            fixtures.to_str().unwrap(),
            "--config",
            file.to_str().unwrap(),
        ],
        expected,
    );
}

/// Row 65: TOML nested or dotted 100,000 levels deep, and an environment too large for
/// `execve`, are configuration errors, not stack overflows or a broken pipe to the sandbox.
#[test]
fn toml_bombs_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path();
    let deep = 100_000;
    let arrays = format!("[runtime]\nx = {}{}\n", "[".repeat(deep), "]".repeat(deep));
    call_with_config(home, "arrays.toml", &arrays, &["arrays.toml:2:", "recurs"]);
    let tables = format!(
        "[runtime]\nx = {}1{}\n",
        "{a=".repeat(deep),
        "}".repeat(deep)
    );
    call_with_config(home, "tables.toml", &tables, &["tables.toml:2:", "recurs"]);
    let dotted = format!("{} = 1\n", vec!["a"; 50_000].join("."));
    call_with_config(home, "dotted.toml", &dotted, &["dotted.toml", "recursion"]);
    let big = format!("[env]\nBIG = \"{}\"\n", "x".repeat(33 << 20));
    call_with_config(home, "env.toml", &big, &["env.toml", "[env] BIG", "bytes"]);
    let many: String = (0..200)
        .map(|i| format!("V{i} = \"{}\"\n", "x".repeat(8 << 10)))
        .collect();
    call_with_config(
        home,
        "many.toml",
        &format!("[env]\n{many}"),
        &["many.toml", "[env]"],
    );

    // A tool root's toolset.toml: boot names the root.
    let root = home.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("toolset.toml"),
        format!("x = {}{}\n", "[".repeat(deep), "]".repeat(deep)),
    )
    .unwrap();
    refused(
        home,
        &["plugins", "--tools-dir", root.to_str().unwrap()],
        &["tool root", "toolset.toml", "recurs"],
    );
}

/// Row 66: values of the wrong sign, size or syntax are refused with their position;
/// limits of zero, which would make every call fail, are refused by name.
#[test]
fn bad_config_values_are_refused_with_their_position() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path();
    for (config, expected) in [
        (
            "[runtime]\ntimeout = -1\n",
            &["c.toml:2:11", "negative"][..],
        ),
        ("[runtime]\ntimeout = 1e20\n", &["c.toml:2:11", "too big"]),
        ("[runtime]\ncancel_grace = -5\n", &["c.toml:2:16"]),
        (
            "[runtime]\nmax_workers = 0\n",
            &["c.toml", "max_workers", "at least 1"],
        ),
        (
            "[runtime]\nmax_calls_per_worker = 0\n",
            &["c.toml", "max_calls_per_worker"],
        ),
        (
            "[runtime]\nmax_result_bytes = 0\n",
            &["c.toml", "max_result_bytes"],
        ),
        ("[runtime]\ntimeout = 0\n", &["c.toml", "timeout"]),
        (
            "[sandbox]\nnetwork_private = [\"300.1.1.1/8\"]\n",
            &["c.toml:2:20"],
        ),
        (
            "[sandbox]\nnetwork_ports = [70000]\n",
            &["c.toml:2:18", "u16"],
        ),
        ("[sandbox]\ntmp_mb = 0\n", &["c.toml", "tmp_mb"]),
        ("[sandbox]\nmemory_mb = 0\n", &["c.toml", "memory_mb"]),
        (
            "[runtime]\ntimeout = 1\n[runtime]\nnode = \"x\"\n",
            &["c.toml:3:", "duplicate"],
        ),
    ] {
        call_with_config(home, "c.toml", config, expected);
    }
    let file = home.join("latin1.toml");
    std::fs::write(&file, b"[env]\nX = \"\xff\"\n").unwrap();
    refused(
        home,
        &[
            "call",
            "echo",
            "--tools-dir",
            fixtures().to_str().unwrap(),
            "--config",
            file.to_str().unwrap(),
        ],
        &["latin1.toml", "UTF-8"],
    );
}

/// Row 68 (and the README's "never panics"): arguments nested 100,000 deep, cut short,
/// or with a deadline beyond any clock.
#[test]
fn bad_arguments_are_usage_errors() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path();
    let fixtures = fixtures();
    let tools = fixtures.to_str().unwrap();
    let deep = "[".repeat(100_000);
    for (args, expected) in [
        (vec!["--args", deep.as_str()], &["--args", "recursion"][..]),
        (vec!["--args", "{\"a\":"], &["--args", "EOF"]),
        (vec!["key:=[[[["], &["key:=", "JSON"]),
        (
            vec!["--timeout", "1e20", "text=x"],
            &["--timeout", "too large"],
        ),
        (vec!["--timeout", "NaN", "text=x"], &["--timeout"]),
        (vec!["--timeout=-3", "text=x"], &["--timeout"]),
    ] {
        let mut all = vec!["call", "echo", "--tools-dir", tools];
        all.extend(args);
        refused(home, &all, expected);
    }
}

/// Row 72: `new` refuses a name that is a path, suggests a valid one, and creates nothing.
#[test]
fn new_refuses_paths_as_names() {
    let t = tempfile::tempdir().unwrap();
    let inside = t.path().join("inside");
    std::fs::create_dir(&inside).unwrap();
    for name in ["../evilnew", "a/b", "/abs", "."] {
        refused(
            &inside,
            &["new", name, "--dir", inside.to_str().unwrap()],
            &["invalid tool name"],
        );
    }
    refused(&inside, &["new", "../evilnew"], &["such as \"evilnew\""]);
    let mut left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["inside"], "nothing created beside the directory");
    assert_eq!(std::fs::read_dir(&inside).unwrap().count(), 0);
}

/// A deadline the clock cannot reach is no deadline, not a panic: `--timeout 1e19` and
/// `[runtime] timeout = 1e19` (past the monotonic clock's range, within `Duration`'s)
/// both run the call.
#[test]
fn deadlines_beyond_the_clock_run_the_call() {
    machine::sandbox();
    let t = tempfile::tempdir().unwrap();
    let home = t.path();
    let config = home.join("far.toml");
    std::fs::write(&config, "[runtime]\ntimeout = 1e19\nidle_timeout = 1e19\n").unwrap();
    let fixtures = fixtures();
    for extra in [
        vec!["--timeout", "1e19"],
        vec!["--config", config.to_str().unwrap()],
    ] {
        let out = toolhost(home)
            .args([
                "call",
                "echo",
                "text=far",
                "--tools-dir",
                fixtures.to_str().unwrap(),
            ])
            .args(&extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{extra:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {stderr}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("far"));
    }
}
