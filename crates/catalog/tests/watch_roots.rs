//! F15: a tool root deleted and re-created, swapped away with `mv`, or missing at start
//! is watched again once it (re)appears: its tools come back and later edits are seen.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use common::{roots, tool, tool_with};
use tokio::sync::broadcast::Receiver;
use toolhost_catalog::{Catalog, CatalogEvent, EventKind, watch};

fn ev(kind: EventKind, name: &str) -> CatalogEvent {
    CatalogEvent {
        kind,
        name: name.into(),
    }
}

/// Waits for every one of `expected` (in any order: one debounced batch may hold
/// several); other events are ignored. The bound only keeps a broken watcher from
/// hanging the test.
fn wait_for(rx: &mut Receiver<CatalogEvent>, expected: &[CatalogEvent]) {
    let mut missing: Vec<&CatalogEvent> = expected.iter().collect();
    let mut seen = Vec::new();
    let give_up = Instant::now() + Duration::from_secs(20);
    while !missing.is_empty() {
        match rx.try_recv() {
            Ok(e) => {
                missing.retain(|m| **m != e);
                seen.push(e);
            }
            Err(_) if Instant::now() < give_up => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("still waiting for {missing:?} ({e:?}); saw {seen:?}"),
        }
    }
}

fn names(catalog: &RwLock<Catalog>) -> BTreeSet<String> {
    catalog
        .read()
        .unwrap()
        .tools()
        .map(|r| r.tool.manifest.name.clone())
        .collect()
}

/// A tool folder made elsewhere, as an operator would `cp -r` it in.
fn copy_dir(from: &Path, to: &Path) {
    let out = std::process::Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_root_deleted_and_recreated_is_watched_again() {
    // F15: `rm -rf root; mkdir root; cp -r tool root/` left the catalog empty for good.
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    tool(&root, "a", "a", 1);
    let elsewhere = t.path().join("elsewhere");
    let b = tool(&elsewhere, "b", "b", 1);
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots(&[&root]))));
    let watcher = watch::watch(Arc::clone(&catalog)).unwrap();
    let mut rx = watcher.subscribe();

    std::fs::remove_dir_all(&root).unwrap();
    wait_for(&mut rx, &[ev(EventKind::Removed, "a")]);
    std::fs::create_dir(&root).unwrap();
    copy_dir(&b, &root);
    wait_for(&mut rx, &[ev(EventKind::Added, "b")]);
    assert_eq!(names(&catalog), BTreeSet::from(["b".to_string()]));

    // The new root is watched in depth, not merely re-listed once.
    tool_with(&root, "b", "b", 2, "edited");
    wait_for(&mut rx, &[ev(EventKind::Changed, "b")]);
    tool(&root, "c", "c", 1);
    wait_for(&mut rx, &[ev(EventKind::Added, "c")]);
    assert_eq!(
        catalog
            .read()
            .unwrap()
            .get("b")
            .unwrap()
            .tool
            .manifest
            .version,
        2
    );
}

#[test]
fn a_root_swapped_by_mv_is_watched_again() {
    // F15: after `mv root root.old; mkdir root; cp …` the watch followed the old folder.
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    tool(&root, "a", "a", 1);
    let b = tool(&t.path().join("elsewhere"), "b", "b", 1);
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots(&[&root]))));
    let watcher = watch::watch(Arc::clone(&catalog)).unwrap();
    let mut rx = watcher.subscribe();

    let old = t.path().join("root.old");
    std::fs::rename(&root, &old).unwrap();
    std::fs::create_dir(&root).unwrap();
    copy_dir(&b, &root);
    wait_for(
        &mut rx,
        &[ev(EventKind::Removed, "a"), ev(EventKind::Added, "b")],
    );
    assert_eq!(names(&catalog), BTreeSet::from(["b".to_string()]));

    // Edits in the old folder are no longer the catalog's business; edits in the new
    // root are.
    tool_with(&old, "a", "a", 2, "edited in the old root");
    tool_with(&root, "b", "b", 2, "edited");
    wait_for(&mut rx, &[ev(EventKind::Changed, "b")]);
    assert_eq!(names(&catalog), BTreeSet::from(["b".to_string()]));

    // A second swap, back again, works as well as the first.
    let newer = t.path().join("root.newer");
    std::fs::rename(&root, &newer).unwrap();
    std::fs::rename(&old, &root).unwrap();
    wait_for(
        &mut rx,
        &[ev(EventKind::Removed, "b"), ev(EventKind::Added, "a")],
    );
    tool(&root, "c", "c", 1);
    wait_for(&mut rx, &[ev(EventKind::Added, "c")]);
}

#[test]
fn a_root_missing_at_start_is_watched_once_it_appears() {
    // A user's `DATA/EMAIL/tools` whose whole home is deleted and made again, or a
    // root that does not exist yet: its nearest existing ancestor is watched.
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("data/ada@example.com");
    let root = home.join("tools");
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots(&[&root]))));
    let watcher = watch::watch(Arc::clone(&catalog)).unwrap();
    let mut rx = watcher.subscribe();

    tool(&root, "a", "a", 1);
    wait_for(&mut rx, &[ev(EventKind::Added, "a")]);
    std::fs::remove_dir_all(&home).unwrap();
    wait_for(&mut rx, &[ev(EventKind::Removed, "a")]);
    tool(&root, "b", "b", 1);
    wait_for(&mut rx, &[ev(EventKind::Added, "b")]);
    tool_with(&root, "b", "b", 2, "edited");
    wait_for(&mut rx, &[ev(EventKind::Changed, "b")]);
}

#[test]
fn a_root_replaced_through_its_symlink_is_watched_again() {
    // Deployments switch a `current` symlink between releases (`ln -sfn`).
    let t = tempfile::tempdir().unwrap();
    let (v1, v2) = (t.path().join("v1"), t.path().join("v2"));
    tool(&v1, "a", "a", 1);
    tool(&v2, "b", "b", 1);
    let root = t.path().join("current");
    std::os::unix::fs::symlink(&v1, &root).unwrap();
    let catalog = Arc::new(RwLock::new(Catalog::scan(roots(&[&root]))));
    let watcher = watch::watch(Arc::clone(&catalog)).unwrap();
    let mut rx = watcher.subscribe();

    let next = t.path().join("current.next");
    std::os::unix::fs::symlink(&v2, &next).unwrap();
    std::fs::rename(&next, &root).unwrap();
    wait_for(
        &mut rx,
        &[ev(EventKind::Removed, "a"), ev(EventKind::Added, "b")],
    );
    tool(&v2, "c", "c", 1);
    wait_for(&mut rx, &[ev(EventKind::Added, "c")]);
}
