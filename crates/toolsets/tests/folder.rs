//! Tool roots are tool sets: granted, scoped and resolved like any other.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::{Arc, RwLock};

use common::*;
use toolhost_catalog::{Catalog, Root, RootOrigin};
use toolhost_toolsets::{
    BootOptions, CorePlugins, Grant, IconSource, Registry, ToolsetsConfig, TurnRequest, folder,
};

fn tool(root: &Path, name: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: The {name} tool.\nversion: 1\n---\n\n# {name}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("index.ts"),
        "export async function execute() { return { content: [{ type: 'text', text: 'ok' }] }; }\n",
    )
    .unwrap();
}

fn catalog(roots: &[&Path]) -> Arc<RwLock<Catalog>> {
    let roots = roots
        .iter()
        .map(|p| Root {
            path: p.to_path_buf(),
            origin: RootOrigin::Flag,
        })
        .collect();
    Arc::new(RwLock::new(Catalog::scan(roots)))
}

#[tokio::test]
async fn each_root_is_a_set_with_manifest_or_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let global = tmp.path().join("data/tools");
    let research = tmp.path().join("Research Tools");
    tool(&global, "hash");
    tool(&global, "lookup");
    tool(&research, "lookup");
    tool(&research, "web_search");
    std::fs::write(
        research.join(folder::MANIFEST),
        "id = \"research\"\nname = \"Research\"\ncategory = \"Research\"\nicon = \"flask-conical\"\n[icons]\nweb_search = \"search\"\n",
    )
    .unwrap();
    let cat = catalog(&[&global, &research]);
    let sets = folder::root_sets(&cat).unwrap();
    let ids: Vec<_> = sets.iter().map(|(s, _)| s.id.as_str()).collect();
    assert_eq!(ids, ["data-tools", "research"]);
    assert_eq!(sets[0].0.category, "Folder tools");
    assert_eq!(sets[1].0.name, "Research");

    let mut config = ToolsetsConfig::default();
    agent(
        &mut config,
        "a",
        vec![Grant::tool_set("data-tools"), Grant::tool_set("research")],
    );
    let r = Registry::boot(
        CorePlugins::new(),
        BootOptions {
            config,
            extra_sets: sets,
            ..BootOptions::default()
        },
    )
    .unwrap();
    let turn = r.resolve("a", &TurnRequest::default()).await.unwrap();
    let got: Vec<_> = turn
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.claim.set.as_str(), t.icon.as_str()))
        .collect();
    // `lookup` is overridden by the later root (the catalog's rule), so it is one tool of
    // the research set, not a collision.
    assert_eq!(
        got,
        [
            ("hash", "data-tools", "wrench"),
            ("lookup", "research", "flask-conical"),
            ("web_search", "research", "search"),
        ]
    );
    assert!(turn.collisions.is_empty());
    assert_eq!(
        turn.tool("web_search").unwrap().icon_source,
        IconSource::Override
    );
    assert_eq!(turn.tool("hash").unwrap().description(), "The hash tool.");
}

#[test]
fn a_bad_manifest_fails_boot_naming_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tools");
    tool(&root, "x");
    std::fs::write(root.join(folder::MANIFEST), "id = \"Not Kebab\"\n").unwrap();
    let e = folder::root_sets(&catalog(&[&root]))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("tool root") && e.contains("`Not Kebab` is not kebab-case"),
        "{e}"
    );
    std::fs::write(root.join(folder::MANIFEST), "colour = \"red\"\n").unwrap();
    let e = folder::root_sets(&catalog(&[&root]))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("toolset.toml") && e.contains("colour"), "{e}");
}
