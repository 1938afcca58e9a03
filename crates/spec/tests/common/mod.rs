//! Helpers shared by the spec tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The complete example tools of the seed's tool-format documentation, kept in
/// `tests/fixtures/seed_examples`: their folders, by name.
pub fn seed_example_tools() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed_examples");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    folders
}
