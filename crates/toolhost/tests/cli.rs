//! The CLI as scripts use it: exit codes, text and JSON shapes, catalog flags.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod machine;

fn toolhost() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.env_remove("PI_TOOLS_DIRS").env_remove("TOOLHOST_LOG");
    cmd
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    );
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    (status.code().unwrap(), stdout, stderr)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tool(root: &Path, folder: &str, name: &str, version: u64) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: The {name} tool.\nversion: {version}\ninputs:\n  q:\n    type: string\n    description: Query.\n  key:\n    type: string\n    description: Key.\n    optional: true\n    sensitive: true\n---\n\n# {name}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("index.ts"),
        "export async function execute() {\n  return { content: [] };\n}\n",
    )
    .unwrap();
    dir
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[test]
fn example_tools_pass_check_cleanly() {
    let (code, stdout, stderr) = run(toolhost().arg("check").arg(repo().join("examples/tools")));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stdout, "", "the examples must have no findings at all");
    assert!(
        stderr.contains("checked 6 tools: 6 ok, 0 errors, 0 warnings"),
        "{stderr}"
    );
}

#[test]
fn check_prints_compiler_style_diagnostics_and_fails_on_errors() {
    let fixtures = repo().join("crates/spec/tests/fixtures");
    let (code, stdout, _) = run(toolhost().arg("check").arg(&fixtures));
    assert_eq!(code, 1);
    let line = format!(
        "{}/yaml_error/TOOL.md:3:14: error[yaml-syntax]: invalid YAML:",
        fixtures.display()
    );
    assert!(stdout.lines().any(|l| l.starts_with(&line)), "{stdout}");
    for l in stdout.lines() {
        assert!(
            l.contains(": error[") || l.contains(": warning["),
            "not a diagnostic line: {l}"
        );
    }
    // Only warnings: exit 0.
    let (code, stdout, _) = run(toolhost().arg("check").arg(fixtures.join("warnings_only")));
    assert_eq!(code, 0);
    assert!(stdout.contains("warning[name-not-snake-case]"));
}

#[test]
fn check_json_is_machine_readable() {
    let fixtures = repo().join("crates/spec/tests/fixtures");
    let (code, stdout, _) = run(toolhost()
        .args(["check", "--json"])
        .arg(fixtures.join("console_output")));
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["errors"], 1);
    assert_eq!(report["folders"][0]["name"], "console_output");
    assert_eq!(report["folders"][0]["ok"], false);
    let d = &report["diagnostics"][0];
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(d["severity"], "error");
    assert_eq!(d["code"], "console-output");
    assert!(
        d["path"]
            .as_str()
            .unwrap()
            .ends_with("console_output/index.ts")
    );
}

#[test]
fn check_reports_duplicate_names_in_a_root() {
    let t = tempfile::tempdir().unwrap();
    tool(t.path(), "a", "same", 1);
    tool(t.path(), "b", "same", 1);
    let (code, stdout, _) = run(toolhost().arg("check").arg(t.path()));
    assert_eq!(code, 1);
    assert_eq!(
        stdout.matches("error[duplicate-name]").count(),
        2,
        "{stdout}"
    );
}

#[test]
fn user_errors_are_one_clear_line() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["check", "/no/such/dir"],
            "error: /no/such/dir does not exist",
        ),
        (
            vec!["check"],
            "error: no tool roots: pass --tools-dir DIR, set PI_TOOLS_DIRS, or pass --data DATA_PATH",
        ),
        (
            vec!["list", "--tools-dir", "/no/such/dir"],
            "error: tool root /no/such/dir does not exist",
        ),
        (
            vec!["list", "--user", "a@b"],
            "error: --user needs --data: user tools live in DATA_PATH/EMAIL/tools",
        ),
        (
            vec!["list", "--data", "/no/such/dir"],
            "error: data directory /no/such/dir does not exist",
        ),
        (
            vec!["sync", "/no/such/seed", "/tmp/x"],
            "error: seed directory /no/such/seed does not exist or is not a directory",
        ),
        (
            vec!["new", "Bad Name"],
            "error: invalid tool name \"Bad Name\": use snake_case of at most 64 characters, such as \"bad_name\"",
        ),
    ];
    for (args, expected) in cases {
        let (code, stdout, stderr) = run(toolhost().args(&args));
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(stdout, "", "{args:?}");
        assert_eq!(stderr.trim_end(), expected, "{args:?}");
    }
    let (code, _, stderr) = run(toolhost().args(["list", "--frobnicate"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unexpected argument '--frobnicate'"),
        "{stderr}"
    );
}

#[test]
fn list_json_has_the_documented_fields_and_override_chain() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let shadowed = tool(&a, "ws", "web_search", 2);
    tool(&a, "fetch", "web_fetch", 1);
    let winner = tool(&b, "ws", "web_search", 1);
    let (code, stdout, stderr) = run(toolhost()
        .args(["list", "--json", "--tools-dir"])
        .arg(&a)
        .arg("--tools-dir")
        .arg(&b));
    assert_eq!(code, 0, "{stderr}");
    let list: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(names(&list), ["web_fetch", "web_search"]);
    let ws = &list[1];
    for field in [
        "name",
        "label",
        "description",
        "version",
        "language",
        "path",
        "root",
        "input_schema",
        "shadows",
    ] {
        assert!(ws.get(field).is_some(), "missing {field}");
    }
    assert_eq!(ws["path"], winner.to_str().unwrap());
    assert_eq!(ws["root"], b.to_str().unwrap());
    assert_eq!(
        ws["shadows"],
        serde_json::json!([shadowed.to_str().unwrap()])
    );
    assert_eq!(ws["version"], 1);
    assert_eq!(ws["language"], "typescript");
    assert_eq!(ws["input_schema"]["required"], serde_json::json!(["q"]));
    assert_eq!(ws["sensitive_inputs"], serde_json::json!(["key"]));
    assert!(stderr.contains("2 tools from 2 roots"), "{stderr}");
}

#[test]
fn pi_tools_dirs_orders_roots_like_repeated_flags() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    tool(&a, "x", "x", 1);
    let winner = tool(&b, "x", "x", 1);
    let env = format!("{}:{}:/no/such/root", a.display(), b.display());
    let (code, stdout, stderr) = run(toolhost()
        .args(["list", "--json"])
        .env("PI_TOOLS_DIRS", env));
    assert_eq!(code, 0);
    let list: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(list[0]["path"], winner.to_str().unwrap());
    assert!(
        stderr.contains("warning: PI_TOOLS_DIRS: skipping /no/such/root"),
        "{stderr}"
    );
    // Flags beat the environment.
    let (_, stdout, _) = run(toolhost()
        .args(["list", "--json", "--tools-dir"])
        .arg(&a)
        .env("PI_TOOLS_DIRS", b.as_os_str()));
    let list: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(list[0]["path"], a.join("x").to_str().unwrap());
}

#[test]
fn data_layout_gives_each_user_their_own_overrides() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path();
    tool(&data.join("tools"), "gmail", "gmail", 3);
    tool(&data.join("tools"), "ocr", "ocr", 1);
    let mine = tool(&data.join("ada@example.com/tools"), "my_gmail", "gmail", 1);
    tool(
        &data.join("ada@example.com/tools"),
        "pdf",
        "pdf_categorizer",
        1,
    );
    let (_, stdout, _) = run(toolhost()
        .args(["list", "--json", "--data"])
        .arg(data)
        .args(["--user", "ada@example.com"]));
    let list: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(names(&list), ["gmail", "ocr", "pdf_categorizer"]);
    assert_eq!(list[0]["path"], mine.to_str().unwrap());
    // Another user (with no folder yet) sees only the global tools.
    let (code, stdout, stderr) = run(toolhost()
        .args(["list", "--json", "--data"])
        .arg(data)
        .args(["--user", "bob@example.com"]));
    assert_eq!(code, 0);
    let list: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(names(&list), ["gmail", "ocr"]);
    assert!(stderr.contains("does not exist yet"), "{stderr}");
    // A user cannot point outside the data directory.
    let (code, _, stderr) = run(toolhost()
        .args(["list", "--data"])
        .arg(data)
        .args(["--user", "../etc"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid user"), "{stderr}");
}

#[test]
fn list_table_shows_overrides() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    tool(&a, "x", "x", 1);
    tool(&b, "x", "x", 7);
    let (_, stdout, _) = run(toolhost()
        .args(["list", "--tools-dir"])
        .arg(&a)
        .arg("--tools-dir")
        .arg(&b));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{stdout}");
    assert!(
        lines[1].starts_with("x ")
            && lines[1].contains("  7  ")
            && lines[1].contains(&format!("(overrides {})", a.join("x").display())),
        "{stdout}"
    );
}

#[test]
fn sync_reports_each_tool_and_supports_dry_run() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    tool(&seed, "a", "a", 2);
    tool(&seed, "b", "b", 1);
    tool(&target, "b", "b", 5);
    let (code, stdout, _) = run(toolhost()
        .args(["sync", "--dry-run", "--json"])
        .arg(&seed)
        .arg(&target));
    assert_eq!(code, 0);
    let items: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(items[0]["name"], "a");
    assert_eq!(items[0]["action"], "copied");
    assert_eq!(items[0]["seed_version"], 2);
    assert_eq!(items[0]["target_version"], Value::Null);
    assert_eq!(items[1]["action"], "kept_newer");
    assert!(!target.join("a").exists(), "dry run copied");
    let (code, stdout, _) = run(toolhost().arg("sync").arg(&seed).arg(&target));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("copied") && stdout.contains("kept (target newer)"),
        "{stdout}"
    );
    assert!(target.join("a/TOOL.md").exists());
    let (_, stdout, _) = run(toolhost().args(["sync", "--json"]).arg(&seed).arg(&target));
    let items: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(items[0]["action"], "up_to_date");
    // An invalid seed tool is reported and fails the run.
    std::fs::write(seed.join("a/TOOL.md"), "no frontmatter").unwrap();
    let (code, stdout, _) = run(toolhost().args(["sync", "--json"]).arg(&seed).arg(&target));
    assert_eq!(code, 1);
    let items: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(items[0]["action"], "invalid");
}

/// Review row 13: a seed tool holding symlinks to host files and folders (absolute, and
/// relative out of the seed) syncs them as the same symlinks: the target never gets a copy
/// of what they point at.
#[test]
fn sync_keeps_symlinks_as_links_and_copies_nothing_they_point_at() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    let secret = t.path().join("host-secret.env");
    std::fs::write(&secret, "HOST_SECRET=from-the-host\n").unwrap();
    let dir = tool(&seed, "linked", "linked", 1);
    let links = [
        ("loot.js", secret.clone()),
        ("climb.txt", PathBuf::from("../../host-secret.env")),
        ("host-dir", t.path().to_path_buf()),
    ];
    for (name, points_at) in &links {
        std::os::unix::fs::symlink(points_at, dir.join(name)).unwrap();
    }
    let (code, stdout, stderr) = run(toolhost().arg("sync").arg(&seed).arg(&target));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let synced = target.join("linked");
    assert!(synced.join("TOOL.md").is_file(), "{stdout}");
    for (name, points_at) in &links {
        let meta = std::fs::symlink_metadata(synced.join(name)).unwrap();
        assert!(meta.file_type().is_symlink(), "{name} is no longer a link");
        assert_eq!(&std::fs::read_link(synced.join(name)).unwrap(), points_at);
    }
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                files(&entry.path(), out);
            } else if kind.is_file() {
                out.push(entry.path());
            }
        }
    }
    let mut copied = Vec::new();
    files(&target, &mut copied);
    for file in copied {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !text.contains("HOST_SECRET"),
            "{} holds the host's file",
            file.display()
        );
    }
}

#[test]
fn new_scaffolds_tools_that_pass_check_in_every_language() {
    let t = tempfile::tempdir().unwrap();
    for (name, lang, entry) in [
        ("greet_ts", "typescript", "index.ts"),
        ("greet_py", "python", "index.py"),
        ("greet_sh", "bash", "index.sh"),
    ] {
        let (code, stdout, stderr) = run(toolhost()
            .args(["new", name, "--language", lang, "--dir"])
            .arg(t.path()));
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stdout.contains(&format!("created {}", t.path().join(name).display())),
            "{stdout}"
        );
        assert!(t.path().join(name).join(entry).is_file());
        let md = std::fs::read_to_string(t.path().join(name).join("TOOL.md")).unwrap();
        assert!(
            md.contains(&format!("language: {lang}")) && md.contains("# Bump on every change"),
            "self-documenting"
        );
        let (code, stdout, _) = run(toolhost().arg("check").arg(t.path().join(name)));
        assert_eq!(
            (code, stdout.as_str()),
            (0, ""),
            "scaffold {lang} has findings"
        );
    }
    let (code, _, stderr) = run(toolhost().args(["new", "greet_ts", "--dir"]).arg(t.path()));
    assert_eq!(code, 2);
    assert!(stderr.contains("already exists"), "{stderr}");

    // The README's first steps on a fresh machine: the tool root does not exist yet.
    let fresh = t.path().join("fresh/tools");
    let (code, _, stderr) = run(toolhost().args(["new", "hello", "--dir"]).arg(&fresh));
    assert_eq!(code, 0, "{stderr}");
    assert!(fresh.join("hello/TOOL.md").is_file());
    // A file where the root should be is not replaced.
    let file = t.path().join("a_file");
    std::fs::write(&file, "x").unwrap();
    let (code, _, stderr) = run(toolhost().args(["new", "hello", "--dir"]).arg(&file));
    assert_eq!(code, 2);
    assert!(stderr.contains("exists and is not a directory"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn scaffolded_python_and_bash_tools_follow_the_documented_protocol() {
    let t = tempfile::tempdir().unwrap();
    for (name, lang, interp, entry) in [
        ("hi_py", "python", "python3", "index.py"),
        ("hi_sh", "bash", "bash", "index.sh"),
    ] {
        run(toolhost()
            .args(["new", name, "--language", lang, "--dir"])
            .arg(t.path()));
        let out = Command::new(interp)
            .arg(t.path().join(name).join(entry))
            .env("TOOL_PARAM_NAME", "Ada")
            .env("TOOL_PARAM_STYLE", "excited")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                // A tool that reads its parameters from the environment may be done
                // before its stdin is written: a closed pipe is not the tool's failure.
                let sent = child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(br#"{"name": "Ada", "style": "excited"}"#);
                match sent {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e),
                    _ => {}
                }
                child.wait_with_output()
            })
            .unwrap();
        assert!(
            out.status.success(),
            "{lang}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "Hello, Ada!\n",
            "{lang}"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("::progress:: Greeting Ada..."),
            "{lang}"
        );
    }
}

#[test]
fn list_watch_streams_changes() {
    let t = tempfile::tempdir().unwrap();
    tool(t.path(), "a", "a", 1);
    let mut child = toolhost()
        .args(["list", "--watch", "--json", "--tools-dir"])
        .arg(t.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(names(&first), ["a"]);
    // The watcher is installed after the first listing is printed: give it a moment,
    // then keep touching the folder until the event shows up.
    let deadline = Instant::now() + Duration::from_secs(20);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut got = None;
    let mut version = 1;
    while got.is_none() && Instant::now() < deadline {
        tool(t.path(), "b", "b", version);
        version += 1;
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(500)) {
            got = Some(line);
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let event: Value = serde_json::from_str(&got.expect("no change event within 20 s")).unwrap();
    assert_eq!(event["kind"], "added");
    assert_eq!(event["name"], "b");
    assert_eq!(event["tool"]["name"], "b");
}

/// S22: the precondition every sandboxed test starts with names what the machine lacks,
/// with the kernel's reason, and passes only a ready sandbox with the layers asked for.
#[test]
fn a_machine_without_a_sandbox_layer_is_told_what_it_lacks() {
    let lacking: Value = serde_json::json!({
        "enabled": true,
        "ready": false,
        "error": "the sandbox cannot start, so no tool runs: missing user-namespace",
        "layers": [
            {"name": "user-namespace", "available": false, "detail": "unshare(CLONE_NEWUSER): EPERM"},
            {"name": "cgroups", "available": false, "detail": "no cgroup file system is mounted"},
            {"name": "seccomp", "available": true, "detail": "filter mode (seccomp-bpf)"},
        ]
    });
    let said = machine::verdict(&lacking, &["cgroups", "seccomp"]).unwrap_err();
    assert!(
        said.contains("the sandbox cannot start, so no tool runs: missing user-namespace"),
        "{said}"
    );
    assert!(
        said.contains("cgroups: no cgroup file system is mounted"),
        "{said}"
    );
    assert!(!said.contains("seccomp:"), "{said}");
    assert!(said.contains("toolhost sandbox status"), "{said}");
    let ready = serde_json::json!({
        "enabled": true,
        "ready": true,
        "error": null,
        "layers": [{"name": "cgroups", "available": true, "detail": "enforced"}]
    });
    assert_eq!(machine::verdict(&ready, &["cgroups"]), Ok(()));
    let said = machine::verdict(&ready, &["cgroup"]).unwrap_err();
    assert!(said.contains("cgroup: not a layer"), "{said}");
}

#[test]
fn sandbox_status_reports_every_layer() {
    // S22: a machine the sandbox cannot run on fails here, naming the layers it lacks.
    machine::sandbox();
    let (code, stdout, stderr) = run(toolhost().args(["sandbox", "status", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let status: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(status["enabled"], true);
    assert_eq!(status["ready"], true, "{status}");
    let layers = &status["layers"];
    let names: Vec<&str> = layers
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "user-namespace",
            "mount-namespace",
            "pid-namespace",
            "network-namespace",
            "ipc-namespace",
            "uts-namespace",
            "landlock",
            "seccomp",
            "no-new-privs",
            "cgroups",
            "rlimits",
            "network-supervisor"
        ]
    );
    for l in layers.as_array().unwrap() {
        assert!(!l["detail"].as_str().unwrap().is_empty(), "{l}");
    }
    // Cross-check one layer with util-linux (S6: required, not skipped when missing).
    machine::program("unshare", "util-linux");
    let userns = Command::new("unshare")
        .args(["--user", "true"])
        .status()
        .unwrap();
    assert_eq!(layers[0]["available"], userns.success(), "{}", layers[0]);
    let (code, text, _) = run(toolhost().args(["sandbox", "status"]));
    assert_eq!(code, 0);
    let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(table.len(), names.len(), "{text}");
    assert!(
        table
            .iter()
            .all(|l| l.contains("  yes  ") || l.contains("  NO   ")),
        "{text}"
    );
    assert!(
        text.contains("ready: every tool process runs in the sandbox"),
        "{text}"
    );

    // A required layer the machine lacks: status says so and fails; tools do not run.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[sandbox]\nrequire = [\"cgroups\"]\ncgroups = false\n",
    )
    .unwrap();
    let (code, text, _) = run(toolhost()
        .args(["sandbox", "status", "--config"])
        .arg(&config));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("missing cgroups"), "{text}");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/tests/fixtures");
    let call_echo = || {
        run(toolhost()
            .args(["call", "echo", "text=x", "--config"])
            .arg(&config)
            .arg("--tools-dir")
            .arg(&fixtures)
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env("XDG_DATA_HOME", dir.path().join("data")))
    };
    let (code, _, stderr) = call_echo();
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("the sandbox cannot start, so no tool runs: missing cgroups"),
        "{stderr}"
    );

    // Running without the sandbox takes an explicit setting, and warns loudly.
    std::fs::write(&config, "[sandbox]\nenabled = false\n").unwrap();
    let (code, text, _) = run(toolhost()
        .args(["sandbox", "status", "--config"])
        .arg(&config));
    assert_eq!(code, 0);
    assert!(text.contains("WARNING: the sandbox is disabled"), "{text}");
    let (code, _, stderr) = call_echo();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("THE SANDBOX IS DISABLED"), "{stderr}");
}

/// Review row 71: `toolhost sync` into a root that `list --watch` (like `serve`) is
/// watching: the swapped-in newer version is reported as a change, with its new version.
#[test]
fn list_watch_sees_a_sync_of_a_newer_version() {
    let t = tempfile::tempdir().unwrap();
    let (seed, root) = (t.path().join("seed"), t.path().join("root"));
    tool(&root, "a", "a", 1);
    let mut child = toolhost()
        .args(["list", "--watch", "--json", "--tools-dir"])
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first[0]["version"], 1);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    // The watcher is installed after the first listing: sync newer versions until one
    // is seen.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut got = None;
    let mut version = 2;
    while got.is_none() && Instant::now() < deadline {
        tool(&seed, "a", "a", version);
        let (code, stdout, stderr) = run(toolhost().arg("sync").arg(&seed).arg(&root));
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(stdout.contains("copied"), "{stdout}");
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(500)) {
            got = Some(line);
        }
        version += 1;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let event: Value = serde_json::from_str(&got.expect("no change event within 20 s")).unwrap();
    assert_eq!(event["kind"], "changed");
    assert_eq!(event["name"], "a");
    let synced = event["tool"]["version"].as_u64().unwrap();
    assert!(synced >= 2 && synced < version, "{event}");
    assert_eq!(event["tool"]["path"], root.join("a").to_str().unwrap());
}

/// Review row 62, through `toolhost check` on a folder: TOOL.md frontmatter nested
/// 100,000 deep (flow) or 3,000 deep (block) is a `yaml-syntax` error naming the file and
/// line; the process does not crash, and the folder's good tool is still checked.
#[test]
fn check_reports_deeply_nested_yaml_without_crashing() {
    let t = tempfile::tempdir().unwrap();
    let flow = format!("x: {}{}", "[".repeat(100_000), "]".repeat(100_000));
    let block = (0..3000)
        .map(|i| format!("{}k{i}:", " ".repeat(i)))
        .collect::<Vec<_>>()
        .join("\n");
    for (folder, body) in [("flow", flow.as_str()), ("block", block.as_str())] {
        let dir = tool(t.path(), folder, folder, 1);
        std::fs::write(
            dir.join("TOOL.md"),
            format!("---\nname: {folder}\ndescription: d\nversion: 1\n{body}\n---\n"),
        )
        .unwrap();
    }
    tool(t.path(), "fine", "fine", 1);
    let (code, stdout, stderr) = run(toolhost().arg("check").arg(t.path()));
    assert_eq!(code, 1, "{stdout}{stderr}");
    for (folder, why) in [
        ("flow", "recursion limit exceeded"),
        ("block", "nests deeper than 64 levels"),
    ] {
        let at = format!("{}/{folder}/TOOL.md:", t.path().display());
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix(&at))
            .unwrap_or_else(|| panic!("no diagnostic for {folder}: {stdout}"));
        // Where: a line of the frontmatter's body (it starts on line 5), and a column.
        let mut place = line.split(':').take(2).map(|n| n.parse::<usize>().unwrap());
        assert!(place.next().unwrap() >= 5, "{line}");
        assert!(place.next().unwrap() >= 1, "{line}");
        assert!(
            line.contains("error[yaml-syntax]") && line.contains(why),
            "{folder}: {line}"
        );
    }
    assert!(
        stderr.contains("checked 3 tools: 1 ok, 2 errors"),
        "{stderr}"
    );
}

/// Runs a command that must exit on its own (stdin closed), failing the test if it is
/// still running after 30 s: a `serve` that accepted what it should refuse keeps serving.
fn run_to_exit(cmd: &mut Command) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after 30 s: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

/// Review row 39: user names that would leave the data directory or break a path (`..`,
/// `.`, a `/`, a `\`, NUL, a newline, 300 characters) are refused where a user enters:
/// a `[[serve.tokens]]` entry (`serve` exits before listening), `mcp --user` and
/// `token new --user`. Each exits 2 saying "invalid user". (A NUL cannot be passed on a
/// command line, so it is tried in the configuration only.)
#[test]
fn bad_user_names_are_refused_by_serve_mcp_and_token_new() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    tool(&data.join("tools"), "a", "a", 1);
    let config = t.path().join("toolhost.toml");
    let long = format!("{}@example.com", "a".repeat(288));
    let names = [
        "..",
        ".",
        "/",
        "a@x.org/../b@x.org",
        "../../etc",
        "a\\b@x.org",
        "ada@x.org\nbob@x.org",
        long.as_str(),
        "a\0b@x.org",
    ];
    for name in names {
        std::fs::write(
            &config,
            format!(
                "[[serve.tokens]]\nuser = {}\nsha256 = \"{}\"\n",
                toml::Value::String(name.into()),
                "0".repeat(64)
            ),
        )
        .unwrap();
        let (code, _, stderr) = run_to_exit(
            toolhost()
                .args(["serve", "--no-store", "--listen", "127.0.0.1:0", "--data"])
                .arg(&data)
                .arg("--config")
                .arg(&config),
        );
        assert_eq!(code, 2, "serve with {name:?}: {stderr}");
        assert!(
            stderr.contains("[[serve.tokens]] #1") && stderr.contains("invalid user"),
            "serve with {name:?}: {stderr}"
        );
        if name.contains('\0') {
            continue;
        }
        let (code, stdout, stderr) = run_to_exit(
            toolhost()
                .args(["mcp", "--data"])
                .arg(&data)
                .args(["--user", name]),
        );
        assert_eq!(
            (code, stdout.as_str()),
            (2, ""),
            "mcp --user {name:?}: {stderr}"
        );
        assert!(
            stderr.contains("invalid user"),
            "mcp --user {name:?}: {stderr}"
        );
        let (code, stdout, stderr) =
            run_to_exit(toolhost().args(["token", "new", "--no-store", "--user", name]));
        assert_eq!(
            (code, stdout.as_str()),
            (2, ""),
            "token new --user {name:?}: {stderr}"
        );
        assert!(
            stderr.contains("invalid user"),
            "token new --user {name:?}: {stderr}"
        );
    }
    // Nothing was made for any of them, in the data directory or beside it.
    let mut left: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .chain(std::fs::read_dir(&data).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["data", "toolhost.toml", "tools"]);
    // The same commands take a good name.
    let (code, stdout, stderr) =
        run_to_exit(toolhost().args(["token", "new", "--no-store", "--user", "ada@example.com"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("user = \"ada@example.com\""), "{stdout}");
    // `mcp` gets as far as serving, and stops at the closed stdin.
    let (_, _, stderr) = run_to_exit(
        toolhost()
            .args(["mcp", "--data"])
            .arg(&data)
            .args(["--user", "ada@example.com"]),
    );
    assert!(
        !stderr.contains("invalid user") && stderr.contains("connection closed"),
        "{stderr}"
    );
}
