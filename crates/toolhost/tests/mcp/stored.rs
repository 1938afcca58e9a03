//! Shared by the tests of `serve --database`: tokens made with `toolhost token new`, and
//! the first admin's token that a fresh store prints.
#![allow(dead_code)]

use std::path::Path;

use crate::common::Fixture;

/// `toolhost token new --database DB ARGS…`: the token it prints once.
pub fn new_token(f: &Fixture, db: &Path, args: &[&str]) -> String {
    let out = f
        .toolhost()
        .args(["token", "new", "--database"])
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("shown only this once"), "{stdout}");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap()
        .to_string()
}

/// The admin token a fresh store's first start printed in `logs`.
pub fn admin_token(logs: &str) -> String {
    logs.split_whitespace()
        .find(|w| w.starts_with("th_"))
        .unwrap_or_else(|| panic!("no admin token in:\n{logs}"))
        .to_string()
}
