//! Tool code as the host reads it, through `toolhost call` and `serve` with the sandbox on:
//! the review's attacks on the transpile cache (F1, F2) and on the host's own steps of a
//! call (F7). Each attack comes with the allowed variant, so a test cannot pass because
//! the tool itself is broken.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/raw_http.rs"]
mod raw_http;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// A tool root, a data directory and a private cache, in a folder tools (other uids) may
/// read.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        common::machine::sandbox();
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let site = Site { dir };
        std::fs::create_dir_all(site.tools()).unwrap();
        std::fs::create_dir_all(site.data()).unwrap();
        write(
            &site.tools().join("sh/TOOL.md"),
            "---\nname: sh\ndescription: Runs a command.\nversion: 1\nlanguage: bash\n\
             inputs:\n  cmd:\n    type: string\n    description: The command.\n---\nx\n",
        );
        write(
            &site.tools().join("sh/index.sh"),
            "#!/bin/bash\neval \"$TOOL_PARAM_CMD\" 2>&1\n",
        );
        site
    }

    fn tools(&self) -> PathBuf {
        self.dir.path().join("tools")
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    fn toolhost(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        cmd.env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLHOST_CONFIG")
            .env("XDG_CACHE_HOME", self.cache())
            .env("XDG_DATA_HOME", self.dir.path().join("xdg-data"));
        cmd
    }

    /// `toolhost call ARGS…` (after `call`); (exit status, stdout, stderr). A call that
    /// has not ended after two minutes is killed and fails the test: a hang is a failure.
    fn call(&self, args: &[&str]) -> (i32, String, String) {
        let mut child = self
            .toolhost()
            .arg("call")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(120);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`toolhost call {args:?}` did not end");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        (out.status.code().unwrap_or(-1), stdout, stderr)
    }

    /// The call must succeed; its output.
    fn allowed(&self, args: &[&str]) -> String {
        let (code, stdout, stderr) = self.call(args);
        assert_eq!(code, 0, "{args:?} failed: {stdout}{stderr}");
        stdout
    }

    /// The call must fail; its error output.
    fn denied(&self, args: &[&str]) -> String {
        let (code, stdout, stderr) = self.call(args);
        assert_eq!(code, 1, "{args:?} did not fail: {stdout}{stderr}");
        stderr
    }

    /// Every file of the cache directory that holds `needle`.
    fn cache_files_holding(&self, needle: &str) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut pending = vec![self.cache()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let kind = entry.file_type().unwrap();
                if kind.is_dir() {
                    pending.push(entry.path());
                } else if kind.is_file() {
                    let bytes = std::fs::read(entry.path()).unwrap();
                    if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                        found.push(entry.path());
                    }
                }
            }
        }
        found
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A TypeScript tool `name` under `root` whose `execute` returns `result` (a JS expression).
fn ts_tool(root: &Path, name: &str, result: &str) -> PathBuf {
    let dir = root.join(name);
    write(
        &dir.join("TOOL.md"),
        &format!("---\nname: {name}\ndescription: A test tool.\nversion: 1\n---\nx\n"),
    );
    write(
        &dir.join("index.ts"),
        &format!("export async function execute(): Promise<string> {{ return {result}; }}\n"),
    );
    dir
}

fn tools_dir(site: &Site) -> String {
    site.tools().display().to_string()
}

/// What of `needles` the tools of `user` see anywhere in their cache
/// (`/run/toolhost/cache`: the harness and their own transpiled code).
fn seen_in_sandbox_cache(site: &Site, user: Option<&str>, needles: &[&str]) -> String {
    let pattern = needles.join("\\|");
    let cmd = format!(
        "cmd=grep -rho '{pattern}' /run/toolhost/cache/ts /run/toolhost/cache/harness | sort -u; \
         ls /run/toolhost/cache/ts >/dev/null && echo listed"
    );
    let tools = tools_dir(site);
    let data = site.data().display().to_string();
    let mut args = vec!["sh", "--tools-dir", &tools];
    if let Some(user) = user {
        args.extend(["--data", &data, "--user", user]);
    }
    args.push(&cmd);
    let out = site.allowed(&args);
    assert!(
        out.contains("listed"),
        "the tool could not search its cache: {out}"
    );
    out
}

// F1: a `.js` link in a tool folder to a host file (mode 0600, in a 0700 folder) used to be
// read by the host, as root, and its text written into the cache every sandbox sees.
#[test]
fn a_linked_host_file_never_reaches_the_cache() {
    let site = Site::new();
    let secrets = site.dir.path().join("s");
    std::fs::create_dir(&secrets).unwrap();
    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o700)).unwrap();
    let env = secrets.join(".env");
    std::fs::write(&env, "TOKEN=\"host-only-42\"\n").unwrap();
    std::fs::set_permissions(&env, std::fs::Permissions::from_mode(0o600)).unwrap();
    let leak = ts_tool(&site.tools(), "leak", "'ok ' + 'own-code-314'");
    symlink(&env, leak.join("loot.js")).unwrap();

    let tools = tools_dir(&site);
    assert_eq!(
        site.allowed(&["leak", "--tools-dir", &tools]),
        "ok own-code-314\n"
    );
    assert!(
        !site.cache_files_holding("own-code-314").is_empty(),
        "the tool's own code is cached (else this test proves nothing)"
    );
    assert_eq!(
        site.cache_files_holding("host-only-42"),
        Vec::<PathBuf>::new()
    );
    let seen = seen_in_sandbox_cache(&site, None, &["own-code-314", "host-only-42"]);
    assert_eq!(seen, "own-code-314\nlisted\n");
}

// F1: a `.ts` link out of the folder is refused with a clear error naming it; a link that
// stays inside the folder still works.
#[test]
fn a_typescript_link_out_of_the_folder_is_an_error_naming_it() {
    let site = Site::new();
    let outside = site.dir.path().join("outside.ts");
    std::fs::write(&outside, "export const leaked = 'host-only-43';\n").unwrap();
    let tool = ts_tool(&site.tools(), "linked", "helper");
    let index = tool.join("index.ts");
    std::fs::write(
        &index,
        "import { helper } from './helper.ts';\n\
         export async function execute(): Promise<string> { return helper; }\n",
    )
    .unwrap();
    write(
        &tool.join("lib/real.ts"),
        "export const helper: string = 'linked inside';\n",
    );
    symlink("lib/real.ts", tool.join("helper.ts")).unwrap();
    let tools = tools_dir(&site);
    assert_eq!(
        site.allowed(&["linked", "--tools-dir", &tools]),
        "linked inside\n"
    );

    symlink(&outside, tool.join("loot.ts")).unwrap();
    let err = site.denied(&["linked", "--tools-dir", &tools]);
    let expected = format!(
        "{} is a symbolic link out of the tool folder: Toolhost reads a tool's code only inside its folder",
        tool.join("loot.ts").display()
    );
    assert!(err.contains(&expected), "{err}");
    assert_eq!(
        site.cache_files_holding("host-only-43"),
        Vec::<PathBuf>::new()
    );
}

// F1: on a root host, the host reads a tool's code as the tool's own user: a file inside the
// folder that only root may read is not transpiled into the cache either.
#[test]
fn code_only_root_may_read_stays_out_of_the_cache() {
    common::machine::root("only a root host reads a tool's code as the tool's own user");
    let site = Site::new();
    let tool = ts_tool(&site.tools(), "private", "'ok ' + 'own-code-315'");
    let private = tool.join("private.js");
    std::fs::write(&private, "export const token = 'root-only-99';\n").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let tools = tools_dir(&site);
    assert_eq!(
        site.allowed(&["private", "--tools-dir", &tools]),
        "ok own-code-315\n"
    );
    assert!(!site.cache_files_holding("own-code-315").is_empty());
    assert_eq!(
        site.cache_files_holding("root-only-99"),
        Vec::<PathBuf>::new()
    );

    // TypeScript the tool's user cannot read is an error saying so.
    let hidden = tool.join("hidden.ts");
    std::fs::write(&hidden, "export const token = 'root-only-98';\n").unwrap();
    std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = site.denied(&["private", "--tools-dir", &tools]);
    assert!(
        err.contains(&format!(
            "{}: the tool's user may not read this",
            hidden.display()
        )),
        "{err}"
    );
    assert_eq!(
        site.cache_files_holding("root-only-98"),
        Vec::<PathBuf>::new()
    );
}

// F1's fix must not ask more of the host's directories than the sandbox does: the sandbox
// mounts a tool root as the host, so a root inside a directory the tool's uid cannot
// enter (a 0700 temporary directory, /root) works, and the host's reads of the code must
// too. Only what lies inside the tool folder is read as the tool's user.
#[test]
fn a_tool_root_behind_a_private_directory_still_runs() {
    let site = Site::new();
    let private = site.dir.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let root = private.join("tools");
    ts_tool(&root, "behind", "'ran behind a private directory'");
    let root = root.display().to_string();
    assert_eq!(
        site.allowed(&["behind", "--tools-dir", &root]),
        "ran behind a private directory\n"
    );
}

// F2: user b's transpiled code (and what it hard-codes) used to be readable by every other
// user's tools through the shared cache. Each user now sees only their own.
#[test]
fn users_never_see_each_others_transpiled_code() {
    let site = Site::new();
    let data = site.data().display().to_string();
    ts_tool(
        &site.data().join("a@x/tools"),
        "at",
        "'ok ' + 'ada-key-555'",
    );
    ts_tool(
        &site.data().join("b@x/tools"),
        "bt",
        "'ok ' + 'bob-key-777'",
    );
    assert_eq!(
        site.allowed(&["bt", "--data", &data, "--user", "b@x"]),
        "ok bob-key-777\n"
    );
    assert_eq!(
        site.allowed(&["at", "--data", &data, "--user", "a@x"]),
        "ok ada-key-555\n"
    );
    let seen = seen_in_sandbox_cache(&site, Some("a@x"), &["ada-key-555", "bob-key-777"]);
    assert_eq!(seen, "ada-key-555\nlisted\n");
    let seen = seen_in_sandbox_cache(&site, Some("b@x"), &["ada-key-555", "bob-key-777"]);
    assert_eq!(seen, "bob-key-777\nlisted\n");

    // On the host, no other uid may list the users' directories or read one of them.
    common::machine::root("only a root host gives each user's cache its own group");
    use std::os::unix::fs::MetadataExt;
    let ts = site.cache().join("toolhost/ts");
    assert_eq!(std::fs::metadata(&ts).unwrap().mode() & 0o777, 0o700);
    let bobs = site.cache_files_holding("bob-key-777");
    assert_eq!(bobs.len(), 1, "{bobs:?}");
    let dir = std::fs::metadata(bobs[0].parent().unwrap()).unwrap();
    assert_eq!((dir.uid(), dir.mode() & 0o777), (0, 0o750));
    let adas = site.cache_files_holding("ada-key-555");
    let other = std::fs::metadata(adas[0].parent().unwrap()).unwrap();
    assert_ne!(
        dir.gid(),
        other.gid(),
        "each user's sandboxes have their own group"
    );
}

// F7: four `lN -> .` links in a TypeScript tool made the host walk about 4^16 paths: the
// call never ended. Directory links are not followed now.
#[test]
fn directory_link_loops_do_not_hang_a_call() {
    let site = Site::new();
    let tool = ts_tool(&site.tools(), "loop", "'ok'");
    for l in ["l1", "l2", "l3", "l4"] {
        symlink(".", tool.join(l)).unwrap();
    }
    let tools = tools_dir(&site);
    assert_eq!(site.allowed(&["loop", "--tools-dir", &tools]), "ok\n");
}

// F7: a folder nested deeper than Toolhost searches is a clear error, not a long walk.
#[test]
fn a_folder_too_deep_is_a_clear_error() {
    let site = Site::new();
    let tool = ts_tool(&site.tools(), "deep", "'ok'");
    let mut deep = tool.clone();
    for _ in 0..40 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    let tools = tools_dir(&site);
    let err = site.denied(&["deep", "--tools-dir", &tools]);
    assert!(
        err.contains(
            "more than 32 folders below the tool folder; Toolhost does not search that deep"
        ),
        "{err}"
    );
}

/// A TypeScript tool with about 40 MB of source to transpile: seconds of host work before
/// the tool can start.
fn big_tool(root: &Path) {
    let tool = ts_tool(root, "big", "'ok'");
    for i in 0..200 {
        let mut text = String::with_capacity(220_000);
        for j in 0..2000 {
            text.push_str(&format!(
                "export const v{i}_{j}: number = {j} * 2;\n\
                 export function f{i}_{j}(a: string): string {{ return a + {j}; }}\n"
            ));
        }
        std::fs::write(tool.join(format!("m{i}.ts")), text).unwrap();
    }
}

// F7: the call's deadline used to start only once the host had prepared the tool; a call
// whose host-side preparation takes far longer than its deadline now ends at the deadline.
#[test]
fn a_slow_preparation_ends_at_the_deadline() {
    let site = Site::new();
    big_tool(&site.tools());
    let tools = tools_dir(&site);
    let err = site.denied(&["big", "--tools-dir", &tools, "--timeout", "1"]);
    assert!(err.contains("timed out after 1 s"), "{err}");
}

// F7: `serve` ignored SIGTERM while a call's host-side step was stuck (a Tokio runtime's
// drop waits for it). It stops now, with calls still being prepared.
#[test]
fn serve_stops_on_sigterm_while_calls_are_being_prepared() {
    let site = Site::new();
    big_tool(&site.tools());
    let looped = ts_tool(&site.tools(), "loop", "'ok'");
    for l in ["l1", "l2", "l3", "l4"] {
        symlink(".", looped.join(l)).unwrap();
    }
    let mut cmd = site.toolhost();
    cmd.args(["serve", "--no-store"])
        .arg("--tools-dir")
        .arg(site.tools());
    let mut server = common::Server::start(cmd);
    let session = raw_http::Session::open(&server.addr, &[]);
    let call = |id: u64, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": {}}})
        .to_string()
    };
    let _big = session.start(&call(2, "big"));
    let _looped = session.start(&call(3, "loop"));
    std::thread::sleep(Duration::from_millis(500));
    // `stop` fails the test unless serve exits within 10 s of SIGTERM.
    let status = server.stop();
    assert!(status.success(), "{status}");
}
