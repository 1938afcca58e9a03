//! `plugins`, `resolve`, `doctor` and the wrench listing of `check`, driven as a user would.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// `toolhost SUBCOMMAND --config CONFIG`; callers add the rest.
fn toolhost(config: &Path, subcommand: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_LOG")
        .env_remove("TOOLHOST_PLUGINS")
        .arg(subcommand)
        .arg("--config")
        .arg(config);
    cmd
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools")
}

fn config(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("toolhost.toml");
    std::fs::write(&p, text).unwrap();
    p
}

const AGENTS: &str = r#"
[agents.helper]
grants = [
  { tool_set = "time" },
  { tool_set = "examples", deny = ["hash"] },
  { tool_set = "nope" },
]
"#;

#[test]
fn plugins_lists_origin_gating_sets_and_tools() {
    let t = tempfile::tempdir().unwrap();
    let cfg = config(t.path(), "");
    let (code, stdout, stderr) = run(toolhost(&cfg, "plugins")
        .arg("--json")
        .arg("--tools-dir")
        .arg(examples()));
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["plugins"][0]["name"], "utilities");
    assert_eq!(v["plugins"][0]["gating"], "always-on");
    let sets: Vec<&str> = v["tool_sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(
        sets.contains(&"time") && sets.contains(&"examples"),
        "{sets:?}"
    );
    let time = v["tool_sets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "time")
        .unwrap();
    assert_eq!(
        time["tools"],
        serde_json::json!(["get_current_time", "convert_timezone"])
    );
    assert_eq!(time["owner"]["kind"], "plugin");

    // Boot is strict: an always-on plugin listed in the env var fails, naming it.
    let (code, _, stderr) = run(toolhost(&cfg, "plugins").env("TOOLHOST_PLUGINS", "utilities"));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("plugin `utilities` is always on"),
        "{stderr}"
    );
}

#[test]
fn resolve_prints_tools_owners_and_warnings() {
    let t = tempfile::tempdir().unwrap();
    let cfg = config(t.path(), AGENTS);
    let (code, stdout, stderr) = run(toolhost(&cfg, "resolve")
        .args([
            "--agent",
            "helper",
            "--workspace",
            "w1",
            "--json",
            "--tools-dir",
        ])
        .arg(examples()));
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "convert_timezone",
            "disk_usage",
            "file_search",
            "get_current_time",
            "json_query",
            "text_stats",
            "word_frequency"
        ]
    );
    let first = &v["tools"][0];
    assert_eq!(first["set"], "time");
    assert_eq!(first["icon"], "clock");
    assert_eq!(first["annotations"]["readOnlyHint"], true);
    assert!(first["input_schema"]["properties"]["to_timezone"]["description"].is_string());
    assert_eq!(v["warnings"][0]["source"], "tool set `nope`");
    assert_eq!(v["excluded"][0]["name"], "hash");

    let (code, _, stderr) = run(toolhost(&cfg, "resolve").args(["--agent", "ghost"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("no agent `ghost`"), "{stderr}");
}

#[test]
fn doctor_walks_the_chain() {
    let t = tempfile::tempdir().unwrap();
    let cfg = config(t.path(), AGENTS);
    let doctor = |tool: &str| {
        run(toolhost(&cfg, "doctor")
            .args(["--agent", "helper", "--tool", tool, "--tools-dir"])
            .arg(examples()))
    };
    let (code, stdout, _) = doctor("get_current_time");
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("tool set `time` of plugin `utilities` (always on) contributes it"),
        "{stdout}"
    );
    assert!(
        stdout.contains("`get_current_time` is visible to agent `helper`"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("ok  icon") && l.contains("shows as the Lucide icon `")),
        "{stdout}"
    );

    let (code, stdout, _) = doctor("hash");
    assert_eq!(code, 1);
    assert!(stdout.contains("on the grant's deny list"), "{stdout}");

    let (code, stdout, _) = doctor("convert_weight");
    assert_eq!(code, 1);
    assert!(
        stdout.contains("agent `helper` holds none of: tool set `units`"),
        "{stdout}"
    );
}

#[test]
fn check_lists_tools_falling_back_to_the_wrench() {
    let t = tempfile::tempdir().unwrap();
    let cfg = config(t.path(), "");
    let root = t.path().join("tools");
    let dir = root.join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        "---\nname: plain\ndescription: A plain tool.\nversion: 1\n---\n\n# plain\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("index.ts"),
        "export async function execute() { return { content: [{ type: 'text', text: 'ok' }] }; }\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(toolhost(&cfg, "check").arg(&root));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("note: `plain` (tool set `")
            && stderr.contains("falls back to the wrench icon"),
        "{stderr}"
    );
    let (_, stdout, _) = run(toolhost(&cfg, "check").arg("--json").arg(&root));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["wrench_icons"][0]["tool"], "plain");
    assert_eq!(v["wrench_icons"].as_array().unwrap().len(), 1);
    // The examples map every tool (S10: the check ran and passed, and its JSON lists
    // every example folder and no wrench, rather than stderr merely lacking a word).
    let (code, stdout, stderr) = run(toolhost(&cfg, "check").arg(examples()));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stderr.contains("wrench"), "{stderr}");
    let (code, stdout, stderr) = run(toolhost(&cfg, "check").arg("--json").arg(examples()));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let on_disk = std::fs::read_dir(examples())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("TOOL.md").is_file())
        .count();
    let folders = v["folders"].as_array().unwrap();
    assert_eq!(folders.len(), on_disk, "{v}");
    assert!(folders.iter().all(|f| f["ok"] == true), "{v}");
    assert_eq!(v["wrench_icons"], serde_json::json!([]), "{v}");
    assert_eq!(v["unknown_icons"], serde_json::json!([]), "{v}");

    // Icon names Lucide does not have: the set's and a tool's, each a warning.
    std::fs::write(
        root.join("toolset.toml"),
        "id = \"mine\"\nicon = \"no-such-icon\"\n[icons]\nplain = \"flask-conicall\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(toolhost(&cfg, "check").arg(&root));
    assert_eq!(code, 0, "a warning, not an error: {stdout}{stderr}");
    assert!(
        stderr.contains(
            "warning: tool set `mine` names the icon `no-such-icon`, which is not a Lucide icon"
        ) && stderr.contains("tool `plain` (tool set `mine`) names the icon `flask-conicall`"),
        "{stderr}"
    );
    let (_, stdout, _) = run(toolhost(&cfg, "check").arg("--json").arg(&root));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v["unknown_icons"],
        serde_json::json!([
            {"icon": "flask-conicall", "tool_set": "mine", "tool": "plain"},
            {"icon": "no-such-icon", "tool_set": "mine"}
        ]),
        "{v}"
    );
    assert_eq!(v["warnings"], 2, "{v}");
}
