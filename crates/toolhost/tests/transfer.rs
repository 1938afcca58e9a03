//! `toolhost import` and `toolhost export`: agents and MCP servers move between
//! toolhost.toml's format and a store (and from one store to another), secrets left out
//! unless asked for, everything checked before anything is written.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;

use std::path::Path;

use common::Fixture;

const FILE: &str = r#"
[agents.web]
name = "Web"
description = "Reads the web"
icon = "globe"
grants = [{ tool_set = "data-tools", deny = ["slow"] }]

[mcp_servers.docs]
url = "https://mcp.example.com/mcp"
bearer_token = "tok-s3cret"
headers = { "X-Api-Key" = "hdr-s3cret" }
timeout = 20
"#;

/// Runs `toolhost ARGS` on `db`: (exit code, stdout, stderr).
fn run(f: &Fixture, db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = f
        .toolhost()
        .args(args)
        .arg("--database")
        .arg(db)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn agents_and_mcp_servers_move_between_toml_and_stores() {
    let f = Fixture::new();
    let file = f.dir.path().join("moving.toml");
    std::fs::write(&file, FILE).unwrap();
    let file = file.to_str().unwrap();
    let a = f.dir.path().join("a.db");
    let b = f.dir.path().join("b.db");

    // A dry run says what would change and changes nothing.
    let (code, out, err) = run(&f, &a, &["import", file, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("create agent web") && out.contains("create MCP server docs"),
        "{out}"
    );
    let (_, out, _) = run(&f, &a, &["export"]);
    assert!(!out.contains("[agents.web]"), "{out}");

    let (code, out, err) = run(&f, &a, &["import", file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("create agent web"), "{out}");
    let (code, _, err) = run(&f, &a, &["import", file]);
    assert_eq!(code, 2);
    assert!(err.contains("stored already: pass --replace"), "{err}");
    let (code, out, err) = run(&f, &a, &["import", file, "--replace"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("replace agent web"), "{out}");

    // Exported: the file's sections, secrets left empty unless asked for.
    let (code, plain, err) = run(&f, &a, &["export"]);
    assert_eq!(code, 0, "{err}");
    assert!(!plain.contains("s3cret"), "{plain}");
    let doc: toml::Table = toml::from_str(&plain).unwrap();
    assert_eq!(
        doc["agents"]["web"]["description"].as_str(),
        Some("Reads the web")
    );
    assert_eq!(doc["agents"]["web"]["icon"].as_str(), Some("globe"));
    assert_eq!(
        doc["mcp_servers"]["docs"]["headers"]["X-Api-Key"].as_str(),
        Some("")
    );
    assert_eq!(doc["mcp_servers"]["docs"]["timeout"].as_float(), Some(20.0));
    let (_, full, _) = run(&f, &a, &["export", "--include-secrets"]);
    assert!(
        full.contains("tok-s3cret") && full.contains("hdr-s3cret"),
        "{full}"
    );

    // Into another store, and out again: the same.
    let exported = f.dir.path().join("exported.toml");
    std::fs::write(&exported, &full).unwrap();
    let (code, _, err) = run(&f, &b, &["import", exported.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, again, _) = run(&f, &b, &["export", "--include-secrets"]);
    let body = |t: &str| t.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&again), body(&full));

    // The exported agent is a toolhost.toml agent that resolves as the stored one does.
    let config = f.dir.path().join("exported-config.toml");
    let agents_only = plain.split("[mcp_servers").next().unwrap();
    std::fs::write(&config, format!("{}{agents_only}", f.config_text())).unwrap();
    let out = f
        .toolhost()
        .args(["resolve", "--agent", "web", "--config"])
        .arg(&config)
        .arg("--tools-dir")
        .arg(f.tools())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("echo") && !stdout.contains("slow  "),
        "{stdout}"
    );
}

#[test]
fn a_bad_file_is_refused_whole_naming_what_is_wrong() {
    let f = Fixture::new();
    let db = f.dir.path().join("s.db");
    let cases = [
        (
            "[agents.web]\nname = \"Web\"\ncolour = \"red\"\n",
            "unknown field `colour`",
        ),
        (
            "[agents.ok]\nname = \"Ok\"\n[mcp_servers.both]\ncommand = [\"x\"]\nurl = \"https://e.com\"\n",
            "MCP server `both`",
        ),
        ("[agents.web]\nname = \"\"\n", "[agents.web]"),
        ("[tools]\n", "unknown field `tools`"),
    ];
    for (text, says) in cases {
        let file = f.dir.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let (code, _, err) = run(&f, &db, &["import", file.to_str().unwrap()]);
        assert_eq!(code, 2, "{text}");
        assert!(
            err.contains(says) && err.contains("bad.toml"),
            "{says:?} not in {err}"
        );
    }
    // Nothing of a refused file was stored.
    let (_, out, _) = run(&f, &db, &["export"]);
    assert!(!out.contains("[agents"), "{out}");
    // A name toolhost.toml defines already stays the file's.
    std::fs::write(
        f.config(),
        format!("{}[agents.web]\ngrants = []\n", f.config_text()),
    )
    .unwrap();
    let file = f.dir.path().join("web.toml");
    std::fs::write(&file, "[agents.web]\nname = \"Web\"\n").unwrap();
    let (code, _, err) = run(&f, &db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("defined by toolhost.toml"), "{err}");
}
