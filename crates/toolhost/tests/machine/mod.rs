//! What a test needs of the machine it runs on, checked up front: the sandbox's kernel
//! layers (as `toolhost sandbox status --json` reports them), root, a program from a
//! distribution package. A test whose need is not met fails here, saying exactly what the
//! machine lacks, instead of failing obscurely later or passing without testing anything.
//! `scripts/test` installs the packages; it cannot give a machine kernel features or root.
//!
//! Included by the toolhost tests and, through `crates/runtime/tests/common`, by the
//! runtime tests that `sandboxed_runtime.rs` runs with the sandbox on.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// What the README's "Tests" section and every failure here point at.
const WHERE: &str = "run `toolhost sandbox status` to see every layer; the README's \
                     Quick start says what the sandboxed tests need";

/// Fails the test unless tools can run in the sandbox here: every layer the default
/// configuration requires (the namespaces, Landlock, seccomp) is available.
pub fn sandbox() {
    if let Err(lacking) = verdict(status(), &[]) {
        panic!("{lacking}");
    }
}

/// Fails the test unless the sandbox can start and each of `layers` (names as `sandbox
/// status` gives them, such as `cgroups`) is available too; `why` says what the test
/// needs them for.
pub fn sandbox_with(layers: &[&str], why: &str) {
    if let Err(lacking) = verdict(status(), layers) {
        panic!("{lacking}\n(needed because {why})");
    }
}

/// `Ok` when `status` (the JSON of `toolhost sandbox status --json`) says the sandbox is
/// ready with each of `layers` available; else every layer it lacks, with the kernel's
/// reason. Separate from the panics so that a test can check what it says.
pub fn verdict(status: &Value, layers: &[&str]) -> Result<(), String> {
    let mut lacking = Vec::new();
    if status["ready"] != true {
        let why = status["error"].as_str().unwrap_or("(no reason given)");
        lacking.push(format!("the sandbox cannot start: {why}"));
    }
    let all = status["layers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for name in layers {
        match all.iter().find(|l| l["name"] == *name) {
            Some(l) if l["available"] == true => {}
            Some(l) => lacking.push(format!(
                "{name}: {}",
                l["detail"].as_str().unwrap_or("(no detail)")
            )),
            None => lacking.push(format!("{name}: not a layer `sandbox status` knows")),
        }
    }
    if lacking.is_empty() {
        return Ok(());
    }
    Err(format!(
        "this test needs the sandbox{}, and this machine lacks:\n  - {}\n({WHERE})",
        if layers.is_empty() {
            String::new()
        } else {
            format!(" with {}", layers.join(", "))
        },
        lacking.join("\n  - ")
    ))
}

/// `toolhost sandbox status --json` with the default configuration, asked once per test
/// process.
fn status() -> &'static Value {
    static STATUS: OnceLock<Value> = OnceLock::new();
    STATUS.get_or_init(|| {
        // The runtime crate's own (unsandboxed) run has no toolhost binary, and never
        // asks.
        let Some(bin) = option_env!("CARGO_BIN_EXE_toolhost") else {
            panic!("the sandbox precondition runs in tests of the toolhost crate only");
        };
        let out = Command::new(bin)
            .args(["sandbox", "status", "--json", "--config", "/dev/null"])
            .env_remove("TOOLHOST_CONFIG")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {bin} sandbox status: {e}"));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "`toolhost sandbox status --json` printed no status ({e}): {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    })
}

/// Fails the test unless it runs as root; `why` says what needs root.
pub fn root(why: &str) {
    assert!(
        rustix::process::geteuid().is_root(),
        "this test needs root, and runs as uid {}: {why} (the suite runs as root, as \
         `scripts/test` does in CI)",
        rustix::process::geteuid().as_raw()
    );
}

/// Fails the test unless `program` is on `PATH`; `package` is the distribution package
/// that has it.
pub fn program(program: &str, package: &str) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program)));
    assert!(
        found,
        "this test runs `{program}`, which this machine lacks: install {package} \
         (`scripts/test` does)"
    );
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `cmd`, run with `passwd` bind-mounted over the host's /etc/passwd in a mount namespace
/// of its own: an account a test needs on the host, whatever accounts the machine has.
/// The host's file is untouched. Needs root, and `unshare` and `mount`.
pub fn with_passwd(cmd: &Command, passwd: &Path) -> Command {
    root("bind-mounting a passwd over /etc/passwd takes root");
    program("unshare", "util-linux");
    program("mount", "mount");
    let mut wrapped = Command::new("unshare");
    wrapped
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount --bind "$0" /etc/passwd && exec "$@""#)
        .arg(passwd)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// The host's /etc/passwd with `line` added first, written to `to`.
pub fn passwd_with(line: &str, to: &Path) {
    let host = std::fs::read_to_string("/etc/passwd")
        .unwrap_or_else(|e| panic!("cannot read /etc/passwd: {e}"));
    std::fs::write(to, format!("{line}\n{host}"))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", to.display()));
}
