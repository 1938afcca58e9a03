//! Crash consistency of `toolhost sync`: kill the process with SIGKILL at many points of a
//! copy and show the target tool is always wholly the old or wholly the new version.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 400;

/// A tool whose every file carries `version`, with a file count that depends on it too.
fn write_seed(seed: &Path, version: u64) {
    let dir = seed.join("big");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!("---\nname: big\ndescription: Big.\nversion: {version}\n---\n\n# Big\n"),
    )
    .unwrap();
    std::fs::write(dir.join("index.ts"), format!("// version {version}\nexport async function execute() {{ return {{ content: [] }}; }}\n")).unwrap();
    for i in 0..FILES + version as usize {
        std::fs::write(
            dir.join(format!("data/{i:04}.txt")),
            format!("version {version}\n").repeat(64),
        )
        .unwrap();
    }
}

/// The version the target holds, after checking it is one version throughout.
fn consistent_version(target: &Path) -> Option<u64> {
    let dir = target.join("big");
    if !dir.exists() {
        return None;
    }
    let version =
        toolhost_spec::peek_version(&std::fs::read(dir.join("TOOL.md")).unwrap()).unwrap();
    let index = std::fs::read_to_string(dir.join("index.ts")).unwrap();
    assert!(
        index.starts_with(&format!("// version {version}\n")),
        "index.ts of another version than TOOL.md {version}"
    );
    let mut count = 0;
    for entry in std::fs::read_dir(dir.join("data")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert_eq!(
            text,
            format!("version {version}\n").repeat(64),
            "a data file of another version than {version}"
        );
        count += 1;
    }
    assert_eq!(
        count,
        FILES + version as usize,
        "version {version} has the wrong number of files"
    );
    Some(version)
}

fn sync(seed: &Path, target: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("sync")
        .arg(seed)
        .arg(target)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Files copied so far into a staging folder, if a copy is under way.
fn staged_files(target: &Path) -> Option<usize> {
    let staging = std::fs::read_dir(target)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".toolhost-sync.")
        })?;
    Some(
        std::fs::read_dir(staging.path().join("data"))
            .map(|d| d.count())
            .unwrap_or(0),
    )
}

#[test]
fn sigkill_mid_sync_never_leaves_a_mixed_tool() {
    let t = tempfile::tempdir().unwrap();
    let (seed, target) = (t.path().join("seed"), t.path().join("target"));
    write_seed(&seed, 1);
    assert!(sync(&seed, &target).wait().unwrap().success());
    assert_eq!(consistent_version(&target), Some(1));

    // Kill points from "staging folder just made" to "every file staged, swap imminent".
    // Each point is tried until a kill lands there: a sync that finishes before the test
    // sees it reach the point (a fast machine) is checked like the others, and the point
    // is tried again.
    const POINTS: usize = 11;
    let mut landed = 0;
    let mut rounds = 0;
    while landed < POINTS {
        rounds += 1;
        assert!(
            rounds <= 20 * POINTS,
            "only {landed} of {POINTS} kills landed mid-copy in {rounds} rounds"
        );
        let old = consistent_version(&target).unwrap();
        let new = old + 1;
        write_seed(&seed, new);
        let mut child = sync(&seed, &target);
        let kill_at = FILES * landed / (POINTS - 1);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if staged_files(&target).is_some_and(|n| n >= kill_at) {
                child.kill().unwrap();
                landed += 1;
                break;
            }
            assert!(Instant::now() < deadline, "sync did not finish in 60 s");
            std::thread::sleep(Duration::from_micros(200));
        }
        child.wait().unwrap();
        let now = consistent_version(&target).expect("the target tool vanished");
        assert!(
            now == old || now == new,
            "round {rounds}: version {now}, expected {old} or {new}"
        );
        // Whatever the crash left is hidden from discovery meanwhile.
        let catalog = toolhost_catalog::Catalog::scan(vec![toolhost_catalog::Root {
            path: target.clone(),
            origin: toolhost_catalog::RootOrigin::Flag,
        }]);
        assert_eq!(catalog.len(), 1);
        assert!(
            catalog.diagnostics().is_empty(),
            "{:?}",
            catalog.diagnostics()
        );
    }
    // A sync run to the end, over what the crashes left.
    write_seed(&seed, consistent_version(&target).unwrap() + 1);
    assert!(sync(&seed, &target).wait().unwrap().success());
    let leftovers: Vec<_> = std::fs::read_dir(&target)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers,
        ["big"],
        "a later sync removes what crashed ones left"
    );
    let seed_version =
        toolhost_spec::peek_version(&std::fs::read(seed.join("big/TOOL.md")).unwrap());
    assert_eq!(
        consistent_version(&target),
        seed_version,
        "the final sync lands the seed"
    );
}
