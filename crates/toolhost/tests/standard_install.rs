//! Officer's standard tools ship in the binary and install as Officer's seed does: `toolhost
//! init --data DIR` copies each into `DIR/tools` by version (again: up to date; a user's
//! newer edit kept), with the set's icons; `serve --data DIR` does it on its first start;
//! and `check` finds nothing to say about any of them.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn seed_tools() -> Vec<String> {
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../seed/tools");
    let mut names: Vec<String> = std::fs::read_dir(seed)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.path()
                .join("TOOL.md")
                .is_file()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}

fn toolhost(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    cmd.env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_CONFIG")
        .env_remove("TOOLHOST_DATABASE_URL")
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("xdg"));
    cmd
}

fn init(home: &Path, data: &Path) -> Vec<Value> {
    let out = toolhost(home)
        .args(["init", "--json", "--data"])
        .arg(data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

#[test]
fn init_installs_every_standard_tool_by_version() {
    let names = seed_tools();
    assert!(names.len() >= 3, "{names:?}");
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let first = init(t.path(), &data);
    let copied: Vec<&str> = first
        .iter()
        .filter(|i| i["action"] == "copied")
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(copied, names, "{first:?}");
    for name in &names {
        assert!(
            data.join("tools").join(name).join("TOOL.md").is_file(),
            "{name}"
        );
    }
    let set = std::fs::read_to_string(data.join("tools/toolset.toml")).unwrap();
    assert!(set.contains("[icons]"), "{set}");

    // `check` has nothing to say about the installed tools: no error, no warning, no
    // wrench, no unknown icon.
    let out = toolhost(t.path())
        .args(["check", "--json"])
        .arg(data.join("tools"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success(), "{v}");
    assert_eq!(
        (v["errors"].as_u64(), v["warnings"].as_u64()),
        (Some(0), Some(0)),
        "{v}"
    );
    assert_eq!(v["wrench_icons"], serde_json::json!([]), "{v}");
    assert_eq!(v["unknown_icons"], serde_json::json!([]), "{v}");
    assert_eq!(v["folders"].as_array().unwrap().len(), names.len(), "{v}");

    // Again: nothing to do.
    let again = init(t.path(), &data);
    assert!(
        again.iter().all(|i| i["action"] == "up_to_date"),
        "{again:?}"
    );

    // A user's newer version of a tool is kept; their own toolset.toml too.
    let md = data.join("tools").join(&names[0]).join("TOOL.md");
    let text = std::fs::read_to_string(&md).unwrap();
    let bumped = text.replacen("version: 1", "version: 99", 1);
    assert_ne!(bumped, text, "the seed's tools start at version 1");
    std::fs::write(&md, &bumped).unwrap();
    std::fs::write(data.join("tools/toolset.toml"), "name = \"Mine\"\n").unwrap();
    let kept = init(t.path(), &data);
    let mine = kept
        .iter()
        .find(|i| i["name"] == names[0].as_str())
        .unwrap();
    assert_eq!(mine["action"], "kept_newer", "{mine}");
    assert_eq!(std::fs::read_to_string(&md).unwrap(), bumped);
    assert_eq!(
        std::fs::read_to_string(data.join("tools/toolset.toml")).unwrap(),
        "name = \"Mine\"\n"
    );
}

#[test]
fn serve_installs_them_on_first_start_only() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let mut cmd = toolhost(t.path());
    cmd.args(["serve", "--no-store", "--data"]).arg(&data);
    let mut server = common::Server::start(cmd);
    server.stop();
    let installed: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(data.join("tools"))
            .unwrap()
            .filter_map(|e| {
                let e = e.unwrap();
                e.path()
                    .is_dir()
                    .then(|| e.file_name().to_string_lossy().into_owned())
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(installed, seed_tools());
    // A data folder that has its tools folder already is left as it is.
    let other = t.path().join("other");
    std::fs::create_dir_all(other.join("tools")).unwrap();
    let mut cmd = toolhost(t.path());
    cmd.args(["serve", "--no-store", "--data"]).arg(&other);
    let mut server = common::Server::start(cmd);
    server.stop();
    assert_eq!(std::fs::read_dir(other.join("tools")).unwrap().count(), 0);
}
