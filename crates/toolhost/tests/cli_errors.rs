//! How the CLI prints an error with causes (issue 13, the audit's other observations).
#![allow(clippy::unwrap_used)]

use std::process::Command;

/// An I/O error used to print its OS error twice ("…: Not a directory (os error 20): Not
/// a directory (os error 20)"): the message already held the cause the chain repeated.
#[test]
fn an_io_error_names_its_os_error_once() {
    let t = tempfile::tempdir().unwrap();
    let seed = t.path().join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    std::fs::write(t.path().join("file"), "not a folder").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .env_remove("TOOLHOST_LOG")
        .arg("sync")
        .arg(&seed)
        .arg(t.path().join("file/below"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: cannot create target directory {}: Not a directory (os error 20)",
            t.path().join("file/below").display()
        )
    );
}
