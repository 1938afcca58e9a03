//! Discovery, overrides, duplicates and incremental re-scans.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use common::{roots, tool, tool_with};
use toolhost_catalog::sync::{SyncAction, SyncOptions, sync};
use toolhost_catalog::{Catalog, CatalogEvent, EventKind, watch};
use toolhost_spec::Code;

fn ev(kind: EventKind, name: &str) -> CatalogEvent {
    CatalogEvent {
        kind,
        name: name.into(),
    }
}

#[test]
fn later_roots_override_earlier_ones_and_record_what_they_shadow() {
    let t = tempfile::tempdir().unwrap();
    let (global, user) = (t.path().join("global"), t.path().join("user"));
    let g = tool(&global, "search", "web_search", 3);
    tool(&global, "fetch", "web_fetch", 1);
    let u = tool(&user, "my-search", "web_search", 1);
    let c = Catalog::scan(roots(&[&global, &user]));
    let names: Vec<_> = c.tools().map(|r| r.tool.manifest.name.as_str()).collect();
    assert_eq!(names, ["web_fetch", "web_search"], "ordered by name");
    let ws = c.get("web_search").unwrap();
    assert_eq!(
        ws.tool.dir, u,
        "the user root wins, even with a lower version"
    );
    assert_eq!(ws.shadows, vec![g]);
    assert_eq!(ws.tool.root_index, 1);
    assert!(c.get("web_fetch").unwrap().shadows.is_empty());
}

#[test]
fn a_duplicate_name_within_one_root_is_an_error_for_both_folders() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let earlier = tool(&a, "x", "dup", 1);
    tool(&b, "one", "dup", 1);
    tool(&b, "two", "dup", 1);
    let c = Catalog::scan(roots(&[&a, &b]));
    let errors: Vec<_> = c
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == Code::DuplicateName)
        .collect();
    assert_eq!(errors.len(), 2);
    assert!(errors[0].path.ends_with("b/one/TOOL.md") && errors[0].message.contains("b/two"));
    assert!(errors[1].path.ends_with("b/two/TOOL.md") && errors[1].message.contains("b/one"));
    // Neither duplicate is served; the earlier root's definition still is.
    assert_eq!(c.get("dup").unwrap().tool.dir, earlier);
}

#[test]
fn broken_and_foreign_folders_are_skipped_with_diagnostics() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    tool(r, "good", "good", 1);
    std::fs::create_dir_all(r.join("no_md")).unwrap();
    std::fs::write(r.join("no_md/index.ts"), common::ENTRY).unwrap();
    std::fs::create_dir_all(r.join("no_entry")).unwrap();
    std::fs::write(
        r.join("no_entry/TOOL.md"),
        "---\nname: no_entry\ndescription: d\nversion: 1\n---\n# x\n",
    )
    .unwrap();
    std::fs::create_dir_all(r.join("bad_yaml")).unwrap();
    std::fs::write(r.join("bad_yaml/TOOL.md"), "---\nname: [\n---\n").unwrap();
    std::fs::create_dir_all(r.join(".git")).unwrap();
    std::fs::write(r.join("README.md"), "not a folder").unwrap();
    let c = Catalog::scan(roots(&[r]));
    assert_eq!(c.len(), 1);
    let codes: Vec<Code> = c.diagnostics().iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [Code::YamlSyntax, Code::EntryMissing, Code::ToolMdMissing]
    );
}

#[test]
fn discovery_does_not_read_entry_files() {
    let t = tempfile::tempdir().unwrap();
    let dir = tool(t.path(), "a", "a", 1);
    // Unparseable code is the runtime's business, at first call: discovery must not look.
    std::fs::write(dir.join("index.ts"), "export class {{{").unwrap();
    let c = Catalog::scan(roots(&[t.path()]));
    assert!(c.get("a").is_some());
    assert!(c.diagnostics().is_empty());
}

#[test]
fn rescans_touch_only_changed_folders_and_report_events() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    tool(&a, "x", "x", 1);
    tool(&b, "y", "y", 1);
    let mut c = Catalog::scan(roots(&[&a, &b]));

    // Unchanged content: no event.
    assert_eq!(c.rescan_folders([(0, "x".to_string())]), vec![]);
    // Edited TOOL.md.
    tool_with(&a, "x", "x", 2, "more docs");
    assert_eq!(
        c.rescan_folders([(0, "x".to_string())]),
        vec![ev(EventKind::Changed, "x")]
    );
    assert_eq!(c.get("x").unwrap().tool.manifest.version, 2);
    // A new folder in the later root overrides: the served definition changes.
    tool(&b, "x2", "x", 1);
    assert_eq!(
        c.rescan_folders([(1, "x2".to_string())]),
        vec![ev(EventKind::Changed, "x")]
    );
    assert_eq!(c.get("x").unwrap().shadows.len(), 1);
    // Renaming a tool is a removal and an addition.
    tool(&b, "y", "z", 1);
    assert_eq!(
        c.rescan_folders([(1, "y".to_string())]),
        vec![ev(EventKind::Removed, "y"), ev(EventKind::Added, "z")]
    );
    // A folder that breaks is dropped and reported; the rest keeps working.
    std::fs::write(b.join("y/TOOL.md"), "---\nname: z\n").unwrap();
    assert_eq!(
        c.rescan_folders([(1, "y".to_string())]),
        vec![ev(EventKind::Removed, "z")]
    );
    assert!(
        c.diagnostics()
            .iter()
            .any(|d| d.code == Code::FrontmatterUnclosed)
    );
    assert!(c.get("x").is_some());
    // Deleting the overriding folder uncovers the shadowed one.
    std::fs::remove_dir_all(b.join("x2")).unwrap();
    assert_eq!(c.rescan_root(1), vec![ev(EventKind::Changed, "x")]);
    assert_eq!(c.get("x").unwrap().tool.dir, a.join("x"));
    // Removing the entry file removes the tool (the hash covers which entry exists).
    std::fs::remove_file(a.join("x/index.ts")).unwrap();
    assert_eq!(
        c.rescan_folders([(0, "x".to_string())]),
        vec![ev(EventKind::Removed, "x")]
    );
}

/// Root by root, `tools_in_root` is exactly the served tools whose winning folder is in
/// that root (the same `Arc`s, by name).
fn assert_tools_by_root(c: &Catalog, expected: &[&[&str]]) {
    for (i, want) in expected.iter().enumerate() {
        let got: Vec<&str> = c
            .tools_in_root(i)
            .map(|t| t.manifest.name.as_str())
            .collect();
        assert_eq!(&got, want, "root {i}");
        let served: Vec<_> = c
            .tools()
            .filter(|r| r.tool.root_index == i)
            .map(|r| &r.tool)
            .collect();
        assert_eq!(served.len(), got.len(), "root {i}");
        for (a, b) in c.tools_in_root(i).zip(served) {
            assert!(Arc::ptr_eq(a, b), "root {i}: {}", a.manifest.name);
        }
    }
    assert_eq!(c.tools_in_root(expected.len()).count(), 0, "no such root");
}

#[test]
fn each_roots_tools_follow_overrides_duplicates_renames_and_removals() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    tool(&a, "x", "x", 1);
    tool(&a, "w", "w", 1);
    tool(&b, "y", "y", 1);
    tool(&b, "x-over", "x", 1);
    let mut c = Catalog::scan(roots(&[&a, &b]));
    assert_tools_by_root(&c, &[&["w"], &["x", "y"]]);
    // The overriding folder goes: the name moves back to the earlier root.
    std::fs::remove_dir_all(b.join("x-over")).unwrap();
    c.rescan_root(1);
    assert_tools_by_root(&c, &[&["w", "x"], &["y"]]);
    // A duplicate within the later root serves neither of its folders.
    tool(&b, "w1", "w", 1);
    tool(&b, "w2", "w", 1);
    c.rescan_root(1);
    assert_tools_by_root(&c, &[&["w", "x"], &["y"]]);
    std::fs::remove_dir_all(b.join("w2")).unwrap();
    c.rescan_root(1);
    assert_tools_by_root(&c, &[&["x"], &["w", "y"]]);
    // A rename, a breakage, an edit.
    tool(&b, "y", "z", 1);
    c.rescan_folders([(1, "y".to_string())]);
    assert_tools_by_root(&c, &[&["x"], &["w", "z"]]);
    std::fs::write(b.join("w1/TOOL.md"), "---\nname: w\n").unwrap();
    c.rescan_folders([(1, "w1".to_string())]);
    assert_tools_by_root(&c, &[&["w", "x"], &["z"]]);
    tool_with(&a, "x", "x", 2, "more docs");
    c.rescan_folders([(0, "x".to_string())]);
    assert_tools_by_root(&c, &[&["w", "x"], &["z"]]);
    assert_eq!(c.tools_in_root(0).nth(1).unwrap().manifest.version, 2);
}

#[test]
fn watcher_publishes_changes_as_folders_change() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().to_path_buf();
    tool(&r, "a", "a", 1);
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots(&[&r]))));
    let watcher = watch::watch(Arc::clone(&catalog)).unwrap();
    let mut rx = watcher.subscribe();
    let next = |rx: &mut tokio::sync::broadcast::Receiver<CatalogEvent>| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match rx.try_recv() {
                Ok(e) => return e,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => panic!("no catalog event within 10 s: {e:?}"),
            }
        }
    };

    tool(&r, "b", "b", 1);
    assert_eq!(next(&mut rx), ev(EventKind::Added, "b"));
    tool_with(&r, "a", "a", 2, "edited");
    assert_eq!(next(&mut rx), ev(EventKind::Changed, "a"));
    std::fs::remove_dir_all(r.join("b")).unwrap();
    assert_eq!(next(&mut rx), ev(EventKind::Removed, "b"));
    let c = catalog.read().unwrap();
    assert_eq!(c.get("a").unwrap().tool.manifest.version, 2);
    assert!(c.get("b").is_none());
}

/// Review row 71: `toolhost sync` into a root that is being watched (as `serve` does)
/// swaps the tool's folder for the seed's newer version; the watcher picks it up.
#[test]
fn a_sync_into_a_watched_root_is_picked_up() {
    let t = tempfile::tempdir().unwrap();
    let (seed, r) = (t.path().join("seed"), t.path().join("root"));
    tool(&r, "a", "a", 1);
    tool(&r, "b", "b", 1);
    tool_with(&seed, "a", "a", 2, "the new version");
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots(&[&r]))));
    let watcher = watch::watch(Arc::clone(&catalog)).unwrap();
    let mut rx = watcher.subscribe();
    let items = sync(&seed, &r, &SyncOptions::default()).unwrap();
    assert_eq!(items[0].action, SyncAction::Copied);
    let deadline = Instant::now() + Duration::from_secs(10);
    let event = loop {
        match rx.try_recv() {
            Ok(e) => break e,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("no catalog event within 10 s of the sync: {e:?}"),
        }
    };
    assert_eq!(event, ev(EventKind::Changed, "a"));
    let c = catalog.read().unwrap();
    let a = c.get("a").unwrap();
    assert_eq!(a.tool.manifest.version, 2);
    assert_eq!(a.tool.dir, r.join("a"));
    assert!(c.get("b").is_some(), "the tool next to it is untouched");
}
