//! Version-based sync: the decisions, and atomicity under injected failures.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{tool, tool_with};
use toolhost_catalog::sync::{SyncAction, SyncOptions, folder_digest, sync};

fn actions(
    items: &[toolhost_catalog::sync::SyncItem],
) -> Vec<(&str, SyncAction, Option<u64>, Option<u64>)> {
    items
        .iter()
        .map(|i| (i.name.as_str(), i.action, i.seed_version, i.target_version))
        .collect()
}

fn version_of(dir: &Path) -> u64 {
    toolhost_spec::peek_version(&std::fs::read(dir.join("TOOL.md")).unwrap()).unwrap()
}

#[test]
fn copies_only_when_the_seed_version_is_higher() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    tool(&seed, "fresh", "fresh", 1);
    tool(&seed, "newer", "newer", 3);
    tool(&target, "newer", "newer", 2);
    tool(&seed, "same", "same", 2);
    tool(&target, "same", "same", 2);
    tool(&seed, "older", "older", 1);
    tool_with(&target, "older", "older", 4, "user edit");
    std::fs::create_dir_all(seed.join("broken")).unwrap();
    std::fs::write(seed.join("broken/TOOL.md"), "---\nname: broken\n---\n").unwrap();
    // A stale file in the target must not survive a copy: the folder is replaced whole.
    std::fs::write(target.join("newer/stale.txt"), "old").unwrap();

    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert_eq!(
        actions(&items),
        [
            ("broken", SyncAction::Invalid, None, None),
            ("fresh", SyncAction::Copied, Some(1), None),
            ("newer", SyncAction::Copied, Some(3), Some(2)),
            ("older", SyncAction::KeptNewer, Some(1), Some(4)),
            ("same", SyncAction::UpToDate, Some(2), Some(2)),
        ]
    );
    assert!(
        !items[0].diagnostics.is_empty(),
        "invalid seeds carry their diagnostics"
    );
    assert_eq!(version_of(&target.join("fresh")), 1);
    assert_eq!(version_of(&target.join("newer")), 3);
    assert!(!target.join("newer/stale.txt").exists());
    assert_eq!(
        folder_digest(&target.join("newer")).unwrap(),
        folder_digest(&seed.join("newer")).unwrap()
    );
    assert!(
        std::fs::read_to_string(target.join("older/TOOL.md"))
            .unwrap()
            .contains("user edit")
    );
    assert!(!target.join("broken").exists());

    // Second run: everything is settled.
    let again = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert!(again.iter().all(|i| matches!(
        i.action,
        SyncAction::UpToDate | SyncAction::KeptNewer | SyncAction::Invalid
    )));
}

#[test]
fn warns_when_content_differs_at_the_same_version() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    tool_with(&seed, "x", "x", 2, "new docs");
    tool_with(&target, "x", "x", 2, "old docs");
    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert_eq!(items[0].action, SyncAction::UpToDate);
    assert!(
        items[0].notes[0].contains("bump `version`"),
        "{:?}",
        items[0].notes
    );
    // Identical content: no note.
    tool_with(&target, "x", "x", 2, "new docs");
    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert!(items[0].notes.is_empty());
}

#[test]
fn missing_version_counts_as_zero() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    tool(&seed, "x", "x", 1);
    std::fs::create_dir_all(target.join("x")).unwrap();
    std::fs::write(
        target.join("x/TOOL.md"),
        "---\nname: x\ndescription: d\n---\n",
    )
    .unwrap();
    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert_eq!(
        actions(&items),
        [("x", SyncAction::Copied, Some(1), Some(0))]
    );
}

#[test]
fn dry_run_changes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    tool(&seed, "x", "x", 1);
    let items = sync(
        &seed,
        &target,
        &SyncOptions {
            dry_run: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(items[0].action, SyncAction::Copied);
    assert!(!target.exists());
}

/// A seed tool of many files, every one stamped with the version, so a mix would show.
fn big_tool(root: &Path, version: u64, files: usize) {
    let dir = tool(root, "big", "big", version);
    std::fs::create_dir_all(dir.join("data/nested")).unwrap();
    for i in 0..files {
        let sub = if i % 2 == 0 { "data" } else { "data/nested" };
        std::fs::write(
            dir.join(format!("{sub}/f{i:03}.txt")),
            format!("version {version} file {i}"),
        )
        .unwrap();
    }
}

#[test]
fn a_failure_at_any_point_of_a_copy_leaves_the_old_version_whole() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    big_tool(&target, 1, 12);
    std::fs::write(target.join("big/only-in-old.txt"), "x").unwrap();
    big_tool(&seed, 2, 10);
    let old = folder_digest(&target.join("big")).unwrap();
    let new = folder_digest(&seed.join("big")).unwrap();

    let total = walkdir_count(&seed.join("big"));
    for fail_at in 0..total {
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&seen);
        let opts = SyncOptions {
            dry_run: false,
            fault: Some(Arc::new(move |_p: &Path| {
                if counter.fetch_add(1, Ordering::SeqCst) == fail_at {
                    Err(std::io::Error::other("injected: disk full"))
                } else {
                    Ok(())
                }
            })),
            ..Default::default()
        };
        let items = sync(&seed, &target, &opts).unwrap();
        assert_eq!(items[0].action, SyncAction::Failed, "fail_at {fail_at}");
        assert!(items[0].notes[0].contains("injected: disk full"));
        assert_eq!(
            folder_digest(&target.join("big")).unwrap(),
            old,
            "target changed after a failure at {fail_at}"
        );
        assert_eq!(
            std::fs::read_dir(&target).unwrap().count(),
            1,
            "staging left behind after failure at {fail_at}"
        );
    }
    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert_eq!(items[0].action, SyncAction::Copied);
    assert_eq!(folder_digest(&target.join("big")).unwrap(), new);
}

fn walkdir_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            1 + if e.file_type().unwrap().is_dir() {
                walkdir_count(&e.path())
            } else {
                0
            }
        })
        .sum()
}

#[test]
fn a_special_file_in_the_seed_fails_that_tool_only() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    tool(&seed, "a", "a", 2);
    tool(&target, "a", "a", 1);
    tool(&seed, "b", "b", 1);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        seed.join("a/pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RWXU,
        0,
    )
    .unwrap();
    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert_eq!(items[0].action, SyncAction::Failed);
    assert!(
        items[0].notes[0].contains("named pipe"),
        "{:?}",
        items[0].notes
    );
    assert_eq!(version_of(&target.join("a")), 1);
    assert_eq!(items[1].action, SyncAction::Copied);
}

#[test]
fn leftovers_of_an_interrupted_sync_are_recovered() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    tool(&seed, "x", "x", 1);
    tool(&seed, "y", "y", 1);
    // A crash mid-staging left a partial copy; a crash between the fallback's two renames
    // left the old `x` aside with nothing in its place.
    std::fs::create_dir_all(target.join(".toolhost-sync.y.123.0/partial")).unwrap();
    tool(&target, ".toolhost-old.x", "x", 5);
    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert_eq!(
        actions(&items)[0],
        ("x", SyncAction::KeptNewer, Some(1), Some(5))
    );
    let mut names: Vec<String> = std::fs::read_dir(&target)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["x", "y"]);
}

/// The entries of `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// A fault hook that acts only between the two renames of the path without exchange, where
/// it is given the old folder set aside.
fn between_renames(act: fn() -> std::io::Result<()>) -> SyncOptions {
    SyncOptions {
        no_exchange: true,
        fault: Some(Arc::new(move |p: &Path| {
            let aside = p
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".toolhost-old.");
            if aside { act() } else { Ok(()) }
        })),
        ..Default::default()
    }
}

/// README claim 24 (issue 13), on a file system without `RENAME_EXCHANGE`: an I/O error
/// after the old folder is renamed aside and before the new one lands puts the old folder
/// back, so the report's "target left as it was" is true; without a fault that path
/// replaces the folder whole and leaves nothing aside.
#[test]
fn without_exchange_an_error_between_the_renames_puts_the_old_folder_back() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    big_tool(&target, 1, 12);
    std::fs::write(target.join("big/only-in-old.txt"), "x").unwrap();
    big_tool(&seed, 2, 10);
    let old = folder_digest(&target.join("big")).unwrap();
    let new = folder_digest(&seed.join("big")).unwrap();

    let opts = between_renames(|| Err(std::io::Error::other("injected: rename failed")));
    let items = sync(&seed, &target, &opts).unwrap();
    assert_eq!(items[0].action, SyncAction::Failed);
    assert!(
        items[0].notes[0].contains("injected"),
        "{:?}",
        items[0].notes
    );
    assert_eq!(folder_digest(&target.join("big")).unwrap(), old);
    assert_eq!(
        names(&target),
        ["big"],
        "staging or the old folder left behind"
    );

    let opts = SyncOptions {
        no_exchange: true,
        ..Default::default()
    };
    let items = sync(&seed, &target, &opts).unwrap();
    assert_eq!(items[0].action, SyncAction::Copied);
    assert_eq!(folder_digest(&target.join("big")).unwrap(), new);
    assert_eq!(names(&target), ["big"]);
}

/// README claim 24 (issue 13): a crash between the two renames of the path without
/// exchange (a panic stands for it: nothing after it runs, so nothing cleans up) leaves the
/// tool absent and the old folder aside. The next sync puts the old folder back before
/// anything else, wholly: here its copy fails, and the target holds the old version; the
/// sync after that replaces it with the new one.
#[test]
fn without_exchange_a_crash_between_the_renames_is_recovered_by_the_next_sync() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    big_tool(&target, 1, 12);
    big_tool(&seed, 2, 10);
    let old = folder_digest(&target.join("big")).unwrap();
    let new = folder_digest(&seed.join("big")).unwrap();

    let opts = between_renames(|| panic!("injected: crash between the renames"));
    let crashed =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sync(&seed, &target, &opts)));
    assert!(crashed.is_err(), "the injected crash did not happen");
    let left = names(&target);
    assert!(!left.contains(&"big".to_string()), "{left:?}");
    assert!(left.contains(&".toolhost-old.big".to_string()), "{left:?}");

    let copy_fails = SyncOptions {
        no_exchange: true,
        fault: Some(Arc::new(|_p: &Path| {
            Err(std::io::Error::other("injected: disk full"))
        })),
        ..Default::default()
    };
    let items = sync(&seed, &target, &copy_fails).unwrap();
    assert_eq!(
        actions(&items),
        [("big", SyncAction::Failed, Some(2), Some(1))],
        "the old folder was not back before the decision"
    );
    assert_eq!(folder_digest(&target.join("big")).unwrap(), old);
    assert_eq!(names(&target), ["big"]);

    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert_eq!(items[0].action, SyncAction::Copied);
    assert_eq!(folder_digest(&target.join("big")).unwrap(), new);
    assert_eq!(names(&target), ["big"]);
}

/// Every regular file under `dir`, without following links.
fn regular_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let ty = std::fs::symlink_metadata(e.path()).unwrap().file_type();
        if ty.is_dir() {
            out.extend(regular_files(&e.path()));
        } else if ty.is_file() {
            out.push(e.path());
        }
    }
    out
}

/// Review row 13: a seed tool holding symlinks to host files and folders (absolute and
/// relative) is synced with the links kept as links, pointing where they pointed; what
/// they point at is never copied into the target.
#[test]
fn symlinks_in_a_seed_stay_links_and_their_targets_are_not_copied() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    let host = t.path().join("host");
    std::fs::create_dir_all(host.join("dir")).unwrap();
    let marker = "host-only-content-13";
    std::fs::write(host.join("secret.env"), marker).unwrap();
    std::fs::write(host.join("dir/inner.txt"), marker).unwrap();
    let a = tool(&seed, "a", "a", 2);
    let links = [
        ("abs", host.join("secret.env")),
        ("rel", Path::new("../../host/secret.env").to_path_buf()),
        ("folder", host.join("dir")),
        ("dangling", host.join("missing")),
    ];
    for (name, to) in &links {
        std::os::unix::fs::symlink(to, a.join(name)).unwrap();
    }
    let items = sync(&seed, &target, &SyncOptions::default()).unwrap();
    assert_eq!(actions(&items), [("a", SyncAction::Copied, Some(2), None)]);
    for (name, to) in &links {
        let copied = target.join("a").join(name);
        let meta = std::fs::symlink_metadata(&copied).unwrap();
        assert!(meta.file_type().is_symlink(), "{name} is no longer a link");
        assert_eq!(&std::fs::read_link(&copied).unwrap(), to, "{name}");
    }
    for file in regular_files(&target) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !text.contains(marker),
            "{} holds a link's target",
            file.display()
        );
    }
    assert_eq!(
        folder_digest(&target.join("a")).unwrap(),
        folder_digest(&a).unwrap()
    );
}
