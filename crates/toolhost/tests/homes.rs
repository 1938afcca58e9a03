//! Homes and users, attacked as the security review did (F3, F4, F5, F6, F19, F21): a user
//! name names a folder and nothing else; a home never overlaps what users share; a
//! user's own tools folder is read-only and never followed; the email database needs a
//! directory of its own; relative paths work. Each test failed on `0126bba`.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

mod machine;
#[path = "mcp/raw_http.rs"]
mod raw_http;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use raw_http::Session;
use serde_json::{Value, json};

const SH_MD: &str = "---\nname: sh\ndescription: Runs a shell command.\nversion: 1\nlanguage: bash\ninputs:\n  cmd:\n    type: string\n    description: The command.\n---\n\n# sh\n";

/// A host as the review set it up: `data/tools/sh` (a global Bash tool running `cmd`),
/// users `a@x` and `b@x`; b has a private note and a private tool `bt`.
struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    fn new() -> Host {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let h = Host { dir };
        write_sh(&h.data().join("tools/sh"), "sh");
        std::fs::create_dir_all(h.data().join("a@x")).unwrap();
        write_sh(&h.data().join("b@x/tools/bt"), "bt");
        std::fs::write(h.data().join("b@x/notes.txt"), "b private").unwrap();
        h
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn data(&self) -> PathBuf {
        self.root().join("data")
    }

    /// `toolhost` run from the host's directory, with a private cache and data home.
    fn toolhost(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        cmd.env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLHOST_CONFIG")
            .env_remove("TOOLHOST_LOG")
            .env("XDG_CACHE_HOME", self.root().join("cache"))
            .env("XDG_DATA_HOME", self.root().join("xdg"))
            .current_dir(self.root());
        cmd
    }

    /// `toolhost call sh cmd=CMD --data DATA --user USER [extra…]`.
    fn call(&self, user: &str, cmd: &str, extra: &[&str]) -> (i32, String, String) {
        machine::sandbox();
        run(self
            .toolhost()
            .args(["call", "sh", "--timeout", "30", "--data"])
            .arg(self.data())
            .args(["--user", user])
            .args(extra)
            .arg(format!("cmd={cmd}")))
    }

    /// `toolhost list --json` for `user`: each tool's (name, version, folder).
    fn list(&self, user: &str) -> Vec<(String, u64, String)> {
        let (code, stdout, stderr) = run(self
            .toolhost()
            .args(["list", "--json", "--data"])
            .arg(self.data())
            .args(["--user", user]));
        assert_eq!(code, 0, "{stderr}");
        let tools: Vec<Value> = serde_json::from_str(&stdout).unwrap();
        tools
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_string(),
                    t["version"].as_u64().unwrap(),
                    t["path"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

fn write_sh(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        SH_MD.replace("name: sh", &format!("name: {name}")),
    )
    .unwrap();
    std::fs::write(dir.join("index.sh"), "bash -c \"$TOOL_PARAM_CMD\" 2>&1\n").unwrap();
}

fn is_real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// Owner, group and mode of every file under `dir`, `dir` included, without following links.
fn ownership(dir: &Path) -> Vec<(PathBuf, u32, u32, u32)> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        all.push((p.clone(), m.uid(), m.gid(), m.mode()));
        if m.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    all.sort();
    all
}

// --- F5: user names at `call --user` ---

#[test]
fn call_refuses_user_names_that_leave_the_data_dir_and_touches_nothing() {
    // F5: `a@x/../b@x` read b's files; `..` made the data dir's parent the home and chowned
    // it recursively as root; `''` and `.` made the whole data dir the home.
    let h = Host::new();
    let before = ownership(h.root());
    // With --tools-dir (as the review ran it), the data layout's own check never ran.
    let tools = h.data().join("tools");
    let tools = ["--tools-dir", tools.to_str().unwrap()];
    for user in ["a@x/../b@x", "..", "", "."] {
        let (code, stdout, stderr) = h.call(
            user,
            "cat /officer/user/notes.txt; ls /officer/user",
            &tools,
        );
        assert_eq!(code, 2, "--user {user:?} ran: {stdout}{stderr}");
        assert!(stderr.contains("invalid user"), "--user {user:?}: {stderr}");
        assert!(!stdout.contains("b private"), "{stdout}");
        assert_eq!(
            ownership(h.root()),
            before,
            "--user {user:?} changed the host's files"
        );
    }
}

// --- F4: the user `tools` ---

#[test]
fn the_user_tools_is_refused_wherever_a_user_enters() {
    // F4: `tools` (which is not an email) had DATA_PATH/tools, the global tool root, as its
    // home, read-write: it rewrote a global tool.
    let h = Host::new();
    for user in ["tools", "TOOLS", "tools."] {
        let (code, stdout, stderr) =
            run(h
                .toolhost()
                .args(["token", "new", "--no-store", "--user", user]));
        assert_eq!(code, 2, "token new --user {user:?}: {stdout}{stderr}");
        assert!(stderr.contains("reserved"), "{stderr}");
        assert!(!stdout.contains("token:"), "{stdout}");
        let (code, _, stderr) = h.call(user, "echo PWNED > /officer/user/sh/index.sh", &[]);
        assert_eq!(code, 2, "call --user {user:?}: {stderr}");
    }
    // A token for `tools` in toolhost.toml: `serve` stops at the configuration.
    let config = h.root().join("serve.toml");
    let entry = |user: &str, hash: char| {
        format!(
            "[[serve.tokens]]\nuser = \"{user}\"\nsha256 = \"{}\"\n",
            hash.to_string().repeat(64)
        )
    };
    std::fs::write(&config, entry("a@x", 'a') + &entry("tools", 'b')).unwrap();
    let mut serve = h
        .toolhost()
        .args(["serve", "--no-store", "--listen", "127.0.0.1:0", "--data"])
        .arg(h.data())
        .arg("--config")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = serve.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > until {
            let _ = serve.kill();
            panic!("serve accepted a token for the user `tools`");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    for line in BufReader::new(serve.stderr.take().unwrap()).lines() {
        stderr += &line.unwrap();
    }
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("[[serve.tokens]] #2") && stderr.contains("\"tools\" is reserved"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(h.data().join("tools/sh/index.sh")).unwrap(),
        "bash -c \"$TOOL_PARAM_CMD\" 2>&1\n"
    );
}

#[test]
fn a_home_that_is_a_link_to_the_global_tools_is_refused_before_any_chown() {
    // F4 and F5 in the runtime: whatever the name, a home that leads to a tool root is
    // refused before the home is handed to the user's uid (a case-insensitive mount makes
    // `TOOLS` such a home; a link does the same here).
    let h = Host::new();
    std::os::unix::fs::symlink(h.data().join("tools"), h.data().join("l@x")).unwrap();
    let before = ownership(&h.data().join("tools"));
    let (code, stdout, stderr) = h.call("l@x", "echo PWNED > /officer/user/sh/index.sh", &[]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("is a link or a file, not a folder"),
        "{stderr}"
    );
    assert_eq!(ownership(&h.data().join("tools")), before);
}

// --- F6 and F21: the user's own tools folder ---

#[test]
fn a_tool_cannot_create_its_users_tools_folder() {
    // F6: `/officer/user/tools` was read-only only when it existed at the sandbox's start;
    // a tool created it and overrode the global `sh` for its user.
    let h = Host::new();
    let before = h.list("a@x");
    assert_eq!(before.len(), 1, "{before:?}");
    let hijack = "mkdir -p /officer/user/tools/sh && printf -- '---\\nname: sh\\ndescription: \
                  hijacked\\nversion: 9\\nlanguage: bash\\n---\\nx\\n' > \
                  /officer/user/tools/sh/TOOL.md && echo 'echo HIJACKED' > \
                  /officer/user/tools/sh/index.sh";
    let (code, stdout, stderr) = h.call("a@x", hijack, &[]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("Read-only file system") || stderr.contains("Permission denied"),
        "{stderr}"
    );
    assert_eq!(h.list("a@x"), before);
    // The folder is the host's, empty, and a@x's next call runs the global tool.
    let own = h.data().join("a@x/tools");
    assert!(std::fs::read_dir(&own).unwrap().next().is_none());
    assert_eq!(
        std::fs::metadata(&own).unwrap().uid(),
        rustix::process::geteuid().as_raw()
    );
    let (code, stdout, stderr) = h.call("a@x", "echo global", &[]);
    assert_eq!((code, stdout.as_str()), (0, "global\n"), "{stderr}");
}

#[test]
fn a_tool_cannot_link_its_tools_folder_to_another_users() {
    // F21 from inside: `ln -s <data>/b@x/tools /officer/user/tools` made d's listing show
    // b's private tools, and every later call of d failed.
    let h = Host::new();
    let theirs = h.data().join("b@x/tools");
    let attempt = format!(
        "ln -s {t} /officer/user/tools; rm -rf /officer/user/tools; \
         mv /officer/user/tools /officer/user/gone; ln -sfn {t} /officer/user/tools; \
         ls -la /officer/user/tools",
        t = theirs.display()
    );
    let (_, stdout, stderr) = h.call("d@x", &attempt, &[]);
    let said = stdout + &stderr;
    assert!(
        said.contains("Read-only file system") || said.contains("busy"),
        "{said}"
    );
    assert!(is_real_dir(&h.data().join("d@x/tools")));
    assert!(h.list("d@x").iter().all(|(name, _, _)| name != "bt"));
    let (code, stdout, stderr) = h.call("d@x", "echo \"[$(ls -A /officer/user/tools)]\"", &[]);
    assert_eq!((code, stdout.as_str()), (0, "[]\n"), "{stderr}");
}

#[test]
fn a_tools_link_planted_on_the_host_is_never_followed_and_moved_aside() {
    // F21 from the host's side: a link already there is not listed from, not mounted, and
    // the user's next call moves it aside (nothing lost) and works.
    let h = Host::new();
    let theirs = h.data().join("b@x/tools");
    let home = h.data().join("d@x");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(&theirs, home.join("tools")).unwrap();
    assert!(h.list("d@x").iter().all(|(name, _, _)| name != "bt"));
    let (code, stdout, stderr) = h.call("d@x", "ls -A /officer/user/tools; echo ran", &[]);
    assert_eq!((code, stdout.as_str()), (0, "ran\n"), "{stderr}");
    assert!(stderr.contains("moved it aside"), "{stderr}");
    assert!(is_real_dir(&home.join("tools")));
    let aside: Vec<PathBuf> = std::fs::read_dir(&home)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("tools.not-a-folder."))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(std::fs::read_link(&aside[0]).unwrap(), theirs);
    assert!(
        theirs.join("bt/TOOL.md").is_file(),
        "b's tools are untouched"
    );
    assert!(h.list("d@x").iter().all(|(name, _, _)| name != "bt"));
}

#[test]
fn serve_never_lists_another_users_tools_through_a_planted_link() {
    // F21 over MCP: d's `tools/list` showed b's private tools through the link.
    let h = Host::new();
    let home = h.data().join("d@x");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(h.data().join("b@x/tools"), home.join("tools")).unwrap();
    let config = h.root().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[[serve.tokens]]\nuser = \"d@x\"\nsha256 = \"{}\"\n",
            toolhost_host::hash_token("d-secret")
        ),
    )
    .unwrap();
    // The call below runs in the sandbox.
    machine::sandbox();
    let mut cmd = h.toolhost();
    cmd.args(["serve", "--no-store", "--listen", "127.0.0.1:0", "--data"])
        .arg(h.data())
        .arg("--config")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut serve = Served::start(cmd);
    let d = Session::open(&serve.addr, &[("Authorization", "Bearer d-secret")]);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let before = d.post(list).body;
    assert!(
        before.contains("\"sh\"") && !before.contains("\"bt\""),
        "{before}"
    );
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "sh", "arguments": {"cmd": "echo d-ran"}}});
    let r = d.post(&call.to_string()).body;
    assert!(
        r.contains("d-ran") && r.contains("\"isError\":false"),
        "{r}"
    );
    let after = d.post(list).body;
    assert!(!after.contains("\"bt\""), "{after}");
    serve.stop();
}

/// A `toolhost serve` on a free port, killed when dropped.
struct Served {
    child: std::process::Child,
    addr: String,
}

impl Served {
    fn start(mut cmd: Command) -> Served {
        let mut child = cmd.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let addr = loop {
            line.clear();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "serve exited");
            if let Some(rest) = line.split("serving MCP at http://").nth(1) {
                break rest
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .trim_end_matches("/mcp")
                    .to_string();
            }
        };
        std::thread::spawn(move || {
            let mut line = String::new();
            while stderr.read_line(&mut line).unwrap_or(0) > 0 {
                eprint!("serve: {line}");
                line.clear();
            }
        });
        Served { child, addr }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop();
    }
}

// --- F3: OFFICER_EMAIL_DB ---

#[test]
fn an_email_database_in_the_data_dir_is_refused_and_a_dedicated_one_works() {
    // F3: with the README's own paths, `/officer/data` was the whole data directory,
    // read-write, in every user's sandbox.
    let h = Host::new();
    let shared = h.root().join("shared.toml");
    let db = h.data().join("emails.db");
    std::fs::write(
        &shared,
        format!("[env]\nOFFICER_EMAIL_DB = {:?}\n", db.display().to_string()),
    )
    .unwrap();
    let (code, stdout, stderr) = h.call(
        "a@x",
        "ls /officer/data; cat /officer/data/b@x/notes.txt",
        &["--config", shared.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(!stdout.contains("b private"), "{stdout}");
    assert!(
        stderr.contains(&db.display().to_string())
            && stderr.contains(&format!("directory of users' homes {}", h.data().display()))
            && stderr.contains("a directory of its own"),
        "{stderr}"
    );
    // A directory of its own: the tool sees that directory, and only it.
    let mail = h.root().join("mail");
    std::fs::create_dir_all(&mail).unwrap();
    std::fs::write(mail.join("emails.db"), "").unwrap();
    let own = h.root().join("own.toml");
    let db = mail.join("emails.db");
    std::fs::write(
        &own,
        format!("[env]\nOFFICER_EMAIL_DB = {:?}\n", db.display().to_string()),
    )
    .unwrap();
    let (code, stdout, stderr) = h.call(
        "a@x",
        "ls -A /officer/data; echo $OFFICER_EMAIL_DB",
        &["--config", own.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "emails.db\n/officer/data/emails.db\n");
}

// --- F19: relative paths ---

#[test]
fn relative_data_cache_and_data_home_paths_work() {
    // F19: each of these failed every sandboxed call with `cannot open data/a@x`.
    let h = Host::new();
    let call = |env: Option<(&str, &str)>, flags: &[&str]| {
        let mut cmd = h.toolhost();
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let (code, stdout, stderr) = run(cmd
            .args(["call", "sh", "--timeout", "30"])
            .args(flags)
            .arg("cmd=echo ok"));
        assert_eq!((code, stdout.as_str()), (0, "ok\n"), "{flags:?}: {stderr}");
    };
    call(
        None,
        &[
            "--tools-dir",
            "data/tools",
            "--data",
            "data",
            "--user",
            "a@x",
        ],
    );
    call(None, &["--data", "data", "--user", "a@x"]);
    // `..` too: a home must not hold it, so it is resolved where it enters.
    std::fs::create_dir_all(h.root().join("sub")).unwrap();
    call(None, &["--data", "sub/../data", "--user", "a@x"]);
    call(
        Some(("XDG_CACHE_HOME", "relcache")),
        &["--data", "data", "--user", "a@x"],
    );
    assert!(h.root().join("relcache/toolhost").is_dir());
    call(
        Some(("XDG_DATA_HOME", "reldata")),
        &["--tools-dir", "data/tools"],
    );
    assert!(h.root().join("reldata/toolhost/users/default").is_dir());
    std::fs::write(
        h.root().join("cache.toml"),
        "[runtime]\ncache_dir = \"cfgcache\"\n",
    )
    .unwrap();
    call(
        None,
        &["--tools-dir", "data/tools", "--config", "cache.toml"],
    );
    assert!(h.root().join("cfgcache").is_dir());
}
