//! `check`'s report agrees with what it checked: a tool-set boot error is counted in the
//! summary and the JSON, and a single tool folder's report names no sibling tools (issue
//! 13, the audit's other observations).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn check(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_LOG")
        .env_remove("TOOLHOST_PLUGINS")
        .env_remove("TOOLHOST_CONFIG")
        .current_dir(dir)
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A root of two tools without icons (each falls back to the wrench).
fn two_plain_tools(root: &Path) {
    for name in ["plain_a", "plain_b"] {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("TOOL.md"),
            format!("---\nname: {name}\ndescription: A plain tool.\nversion: 1\n---\n\n# {name}\n"),
        )
        .unwrap();
        std::fs::write(
            dir.join("index.ts"),
            "export async function execute() { return { content: [{ type: 'text', text: 'ok' }] }; }\n",
        )
        .unwrap();
    }
}

/// The summary used to read "0 errors" while `check` exited 1 for the boot error.
#[test]
fn a_tool_set_that_does_not_boot_counts_as_an_error() {
    let t = tempfile::tempdir().unwrap();
    two_plain_tools(&t.path().join("tools"));
    std::fs::write(t.path().join("tools/toolset.toml"), "id = 7\nbogus = [\n").unwrap();

    let (code, stdout, stderr) = check(t.path(), &["tools"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("error: tool root tools: tools/toolset.toml"),
        "{stderr}"
    );
    assert!(
        stderr.contains("checked 2 tools: 2 ok, 1 error, 0 warnings"),
        "{stderr}"
    );

    let (code, stdout, stderr) = check(t.path(), &["--json", "tools"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["errors"], 1, "{v}");
    assert!(
        v["boot_error"].as_str().unwrap().contains("toolset.toml"),
        "{v}"
    );

    // Without the broken file: no boot error, none counted, no key.
    std::fs::remove_file(t.path().join("tools/toolset.toml")).unwrap();
    let (code, stdout, stderr) = check(t.path(), &["--json", "tools"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["errors"], 0, "{v}");
    assert!(v.get("boot_error").is_none(), "{v}");
}

/// Checking one tool folder boots its whole root (to see the tool set it belongs to), but
/// the wrench notes name only the checked tool; the root names both.
#[test]
fn one_tool_folder_reports_only_its_own_wrench() {
    let t = tempfile::tempdir().unwrap();
    two_plain_tools(&t.path().join("tools"));

    let (code, stdout, stderr) = check(t.path(), &["tools/plain_a"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("note: `plain_a` (tool set `"), "{stderr}");
    assert!(!stderr.contains("plain_b"), "{stderr}");
    let (_, stdout, _) = check(t.path(), &["--json", "tools/plain_a"]);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let wrench: Vec<&str> = v["wrench_icons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["tool"].as_str().unwrap())
        .collect();
    assert_eq!(wrench, ["plain_a"], "{v}");

    let (_, stdout, _) = check(t.path(), &["--json", "tools"]);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["wrench_icons"].as_array().unwrap().len(), 2, "{v}");
}

/// A tool that lists the host programs it runs: one this host has, one it lacks.
fn tool_with_programs(root: &Path, programs: &str) -> std::path::PathBuf {
    let dir = root.join("runner");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!(
            "---\nname: runner\ndescription: Runs programs.\nversion: 1\nprograms: {programs}\n---\n\n# runner\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("index.ts"),
        "export async function execute() { return { content: [{ type: 'text', text: 'ok' }] }; }\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_program_the_host_lacks_is_a_warning_naming_its_package() {
    let t = tempfile::tempdir().unwrap();
    let dir = tool_with_programs(t.path(), "[sh, ffprobe-that-is-not-there, ffmpeg]");
    let (code, stdout, stderr) = check(t.path(), &["--json", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "a warning, not an error: {stdout}{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let missing: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "program-missing")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    // `sh` is everywhere; the made-up one never is; ffmpeg depends on the machine.
    assert!(
        missing
            .iter()
            .any(|m| m.contains("`ffprobe-that-is-not-there`, which is not installed")),
        "{missing:?}"
    );
    assert!(!missing.iter().any(|m| m.contains("`sh`")), "{missing:?}");
    let ffmpeg_here = Path::new("/usr/bin/ffmpeg").exists();
    assert_eq!(
        missing
            .iter()
            .any(|m| m.contains("`ffmpeg`") && m.contains("apt-get install ffmpeg")),
        !ffmpeg_here,
        "{missing:?}"
    );
    // A path is not a program name: an error at the field.
    let t = tempfile::tempdir().unwrap();
    let dir = tool_with_programs(t.path(), "[/usr/bin/ffmpeg]");
    let (code, stdout, _) = check(t.path(), &[dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("error[field-type]") && stdout.contains("`programs` lists the programs"),
        "{stdout}"
    );
}
