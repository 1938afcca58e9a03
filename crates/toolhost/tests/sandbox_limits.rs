//! The sandbox's limits and what it shows of the host, as an attacker would probe them:
//! the home quota (F17), the tools' uid range (F18), and host paths seen from inside
//! (F20). Each test reproduces what the security review did and asserts that it is now
//! refused; where a tool must still work, the same tool shows it does.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

mod machine;

const USER: &str = "ada@example.com";
const BIN: &str = env!("CARGO_BIN_EXE_toolhost");
const MIB: u64 = 1024 * 1024;

fn tools() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sandbox_limits")
}

/// A host with a data directory and a configuration.
struct Host {
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Host {
    fn new(config: &str) -> Host {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(dir.path().join("data").join(USER)).unwrap();
        let path = dir.path().join("toolhost.toml");
        std::fs::write(&path, config).unwrap();
        Host { dir, config: path }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn home(&self) -> PathBuf {
        self.data().join(USER)
    }

    /// `toolhost call TOOL ARGS…` as ada, with a deadline; (exit status, stdout + stderr).
    fn call(&self, tool: &str, args: &[&str], timeout: u32) -> (i32, String) {
        run(self.command(tool, args, timeout))
    }

    /// The command `call` runs.
    fn command(&self, tool: &str, args: &[&str], timeout: u32) -> Command {
        machine::sandbox();
        let mut cmd = Command::new(BIN);
        cmd.env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLHOST_CONFIG")
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .args(["call", tool, "--timeout", &timeout.to_string(), "--config"])
            .arg(&self.config)
            .arg("--tools-dir")
            .arg(tools())
            .arg("--data")
            .arg(self.data())
            .args(["--user", USER])
            .args(args);
        cmd
    }

    /// `sh` with `cmd`, which must succeed; its output.
    fn sh(&self, cmd: &str) -> String {
        let (code, text) = self.call("sh", &[&format!("cmd={cmd}")], 30);
        assert_eq!(code, 0, "{cmd}: {text}");
        text
    }
}

/// Runs `cmd` to its end; (exit status, stdout + stderr).
fn run(mut cmd: Command) -> (i32, String) {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{text}");
    (out.status.code().unwrap_or(-1), text)
}

/// Bytes allocated to `dir` and everything in it, links not followed.
fn allocated(dir: &Path) -> u64 {
    let meta = std::fs::symlink_metadata(dir).unwrap();
    let mut total = meta.blocks() * 512;
    if meta.is_dir() {
        for entry in std::fs::read_dir(dir).unwrap() {
            total += allocated(&entry.unwrap().path());
        }
    }
    total
}

// --- F17: the home quota ---

/// F17: with `max_file_mb = 5`, four 6 MB writes left 20 MB in the home: only the per-file
/// limit applied, so tools could fill the host's disk.
#[test]
fn f17_a_home_stops_at_its_quota_and_then_calls_are_refused() {
    let h = Host::new("[sandbox]\nhome_mb = 12\nmax_file_mb = 5\n");
    let mut refused = None;
    for i in 1..=6 {
        let cmd = format!("cmd=head -c 6M /dev/zero > /officer/user/f{i}; echo wrote");
        let (code, text) = h.call("sh", &[&cmd], 30);
        if text.contains("is full") {
            assert_eq!(code, 1, "{text}");
            assert!(
                text.contains("of its quota of 12.0 MiB ([sandbox] home_mb)"),
                "{text}"
            );
            assert!(text.contains("/officer/user"), "{text}");
            assert!(!text.contains(&*h.dir.path().to_string_lossy()), "{text}");
            refused.get_or_insert(i);
        } else {
            assert!(refused.is_none(), "call {i} ran after a refusal: {text}");
            assert_eq!(code, 0, "{text}");
        }
    }
    // 5 MiB, 5 MiB, then what is left: the third call reaches the quota, so the fourth
    // is refused at the latest.
    assert!(
        refused.is_some_and(|i| i <= 4),
        "refused from call {refused:?}"
    );
    // Each sandbox's largest file was what was left of the quota: the home ends at most
    // a few blocks (its own folder, a file's last block) past it.
    let used = allocated(&h.home());
    assert!(used <= 12 * MIB + 64 * 1024, "{used} bytes in the home");
}

/// F17: between two calls is not enough: a tool that keeps writing files, each under
/// every per-file limit, is stopped while it runs, as a Bash process and as a Node.js
/// worker alike, and the user's next call is refused.
#[test]
fn f17_a_running_tool_that_fills_the_home_is_stopped() {
    let config = "[sandbox]\nhome_mb = 8\nmax_file_mb = 1\n";
    let h = Host::new(config);
    // Without the quota this would run (and write) until the deadline.
    let forever = "cmd=i=0; while :; do head -c 1M /dev/zero > /officer/user/f$i; i=$((i+1)); sleep 0.1; done";
    let (code, text) = h.call("sh", &[forever], 15);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("stopped: the home (/officer/user) is full"),
        "{text}"
    );
    let (code, text) = h.call("sh", &["cmd=echo hello"], 15);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("refused: the home (/officer/user) is full"),
        "{text}"
    );

    let h = Host::new(config);
    let (code, text) = h.call("fill_home", &[], 15);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("stopped: the home (/officer/user) is full"),
        "{text}"
    );
    // With room, the same tools run.
    let h = Host::new("[sandbox]\nhome_mb = 64\nmax_file_mb = 1\n");
    assert!(
        h.sh("head -c 512K /dev/zero > /officer/user/f; echo fine")
            .contains("fine")
    );
}

// --- F18: the uid range ---

/// F18: `uid_base = 4294967295` wrapped to host uid 2483, and `uid_base = 0, uid_count =
/// 1` ran tools as host root.
#[test]
fn f18_a_uid_range_that_wraps_or_reaches_root_is_refused_naming_the_key() {
    for (config, says) in [
        (
            "[sandbox]\nuid_base = 4294967295\n",
            "[sandbox] uid_base = 4294967295",
        ),
        (
            "[sandbox]\nuid_base = 0\nuid_count = 1\n",
            "[sandbox] uid_base = 0",
        ),
    ] {
        let h = Host::new(config);
        let (code, text) = h.call("sh", &["cmd=id -u"], 30);
        assert_eq!(code, 2, "{config}: {text}");
        assert!(text.contains(says), "{config}: {text}");
        let out = Command::new(BIN)
            .args(["sandbox", "status", "--config"])
            .arg(&h.config)
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains(says));
    }
    assert_eq!(
        Host::new("[sandbox]\nuid_base = 300000\n")
            .sh("id -u")
            .trim(),
        "0"
    );
}

/// F18: a range shared with a host account would make that account own the files of some
/// user's tools (and share their process limit): a root host refuses it.
#[test]
fn f18_a_uid_range_shared_with_a_host_account_is_refused() {
    machine::root("only a root host runs tools as other uids");
    // An account planted at a uid of the range (the host's /etc/passwd as the calls
    // below see it), so the test needs no particular accounts on the machine.
    let (name, uid) = (
        "planted_account",
        1_900_000_000 + std::process::id() % 1_000_000,
    );
    let h = Host::new(&format!("[sandbox]\nuid_base = {uid}\nuid_count = 1\n"));
    let passwd = h.dir.path().join("passwd");
    machine::passwd_with(
        &format!("{name}:x:{uid}:{uid}::/nonexistent:/bin/sh"),
        &passwd,
    );
    let (code, text) = run(machine::with_passwd(
        &h.command("sh", &["cmd=id -u"], 30),
        &passwd,
    ));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("overlaps host accounts"), "{text}");
    assert!(text.contains(&format!("user {name} ({uid})")), "{text}");
    let mut status = Command::new(BIN);
    status
        .args(["sandbox", "status", "--config"])
        .arg(&h.config);
    let (code, text) = run(machine::with_passwd(&status, &passwd));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("overlaps host accounts"), "{text}");
    // Without the account the same range is the tools' to use.
    h.sh("id -u");
}

/// Runs the helper on `spec` as the host does; (exit status, stdout after the ready
/// byte, stderr).
fn run_helper(spec: &serde_json::Value) -> (i32, String, String) {
    let mut child = Command::new(BIN)
        .arg("__sandbox-exec")
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut ready = [0u8; 1];
    stdout.read_exact(&mut ready).unwrap();
    assert_eq!(&ready, b"R");
    let json = serde_json::to_vec(spec).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&(json.len() as u64).to_le_bytes()).unwrap();
    stdin.write_all(&json).unwrap();
    drop(stdin);
    let mut out = String::new();
    stdout.read_to_string(&mut out).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, out, err)
}

/// A spec that runs `program` as `uid`, with the system directories and `mounts`.
fn spec(uid: u32, program: &str, mounts: Vec<serde_json::Value>) -> serde_json::Value {
    let mut all = Vec::new();
    let mut links = Vec::new();
    for dir in [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    ] {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                links.push(json!([dir, std::fs::read_link(dir).unwrap()]));
            }
            Ok(_) => all.push(json!({"source": dir, "target": dir, "writable": false})),
            Err(_) => {}
        }
    }
    all.extend(mounts);
    json!({
        "program": program, "args": [], "cwd": "/", "uid": uid, "gid": uid,
        "mounts": all, "links": links, "files": [], "tmp_bytes": 1 << 20,
        "limits": {}, "network": null, "cgroups": [], "env": [],
        "landlock": false, "seccomp": false, "hostname": "toolhost",
    })
}

// F18's helper test (a spec naming uid 0 is refused) lives with the sandbox crate
// (crates/sandbox/tests/sandbox.rs), which is its own helper.

// --- F20: host paths seen from inside ---

/// F20: `/proc/1/cmdline` showed the helper binary's host path; `/proc/1/exe` and
/// `/proc/1/maps` showed it too.
#[test]
fn f20_pid_1_shows_no_host_path() {
    let h = Host::new("");
    let out = h.sh(
        "tr '\\0' ' ' < /proc/1/cmdline; echo; readlink /proc/1/exe; cat /proc/1/maps; \
         cat /proc/1/environ; echo end",
    );
    assert!(out.starts_with("toolhost __sandbox-exec \n"), "{out}");
    let bin = Path::new(BIN);
    for host in [bin, bin.parent().unwrap()] {
        assert!(!out.contains(&*host.to_string_lossy()), "{out}");
    }
    assert!(out.contains("end"), "{out}");
}

/// F20: setup errors showed staging and host paths (`mkdir /tmp/officer/user/tools: File
/// exists`, `cannot open data/a@x`) to the tool's caller.
#[test]
fn f20_setup_errors_name_sandbox_paths_only() {
    let h = Host::new("");
    let host = h.dir.path().to_string_lossy().into_owned();
    // A `tools` link in the home (F21's attack, planted on the host now that a tool
    // cannot) broke the next sandbox's setup with a staging path; now the host moves it
    // aside and the call runs, and nothing it prints names a host path.
    let theirs = h.data().join("bob@example.com/tools");
    std::fs::create_dir_all(&theirs).unwrap();
    std::os::unix::fs::symlink(&theirs, h.home().join("tools")).unwrap();
    let (code, text) = h.call("sh", &["cmd=echo still here"], 30);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("still here"), "{text}");
    // The operator's log (the CLI's stderr) says where the link was; the result does not.
    let result: String = text.lines().filter(|l| !l.contains("WARN")).collect();
    assert!(!result.contains(&host), "{text}");
    assert!(!result.contains("/tmp/officer"), "{text}");

    // The helper, handed a mount whose host side is gone, names where it would show.
    let gone = h.dir.path().join("gone");
    let mount = json!({"source": gone, "target": "/officer/user", "writable": true});
    let uid = if rustix::process::getuid().is_root() {
        300_000
    } else {
        rustix::process::getuid().as_raw()
    };
    let (code, out, err) = run_helper(&spec(uid, "/usr/bin/true", vec![mount]));
    assert_eq!(code, 125, "{out}{err}");
    assert!(err.contains("/officer/user"), "{err}");
    assert!(!err.contains(&host), "{err}");
}

/// F20, what an operator can do: `/proc/self/mountinfo` names each mount's root inside its
/// file system, which no bind mount hides; data, tool roots and cache on a file system of
/// their own show only paths inside it.
#[test]
fn f20_on_a_file_system_of_its_own_mountinfo_shows_no_host_path() {
    machine::root("mounting a file system needs root");
    machine::program("unshare", "util-linux");
    machine::program("mount", "mount");
    machine::sandbox();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    // A private mount namespace: the tmpfs exists for this command only.
    let script = r#"set -e
mount -t tmpfs -o mode=755 toolhost-data "$1"
mkdir -p "$1/data/ada@example.com" "$1/cache"
cp -r "$2" "$1/tools"
XDG_CACHE_HOME="$1/cache" exec "$3" call sh --tools-dir "$1/tools" --data "$1/data" \
  --user ada@example.com cmd='cat /proc/self/mountinfo'"#;
    let out = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(&root)
        .arg(tools())
        .arg(BIN)
        .env_remove("PI_TOOLS_DIRS")
        .env_remove("TOOLHOST_CONFIG")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let home = text
        .lines()
        .find(|l| l.split(' ').nth(4) == Some("/officer/user"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        home.split(' ').nth(3),
        Some("/data/ada@example.com"),
        "{home}"
    );
    assert!(!text.contains(&root), "{text}");
}
