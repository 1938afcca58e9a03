//! The sandbox on its own, with no other crate's files: this test binary is its own
//! helper. Its `main` runs the helper modes first, as `toolhost`'s does, so `Sandbox`
//! (whose helper defaults to the running executable) starts this binary to build each
//! sandbox; otherwise it runs the tests, with the command line libtest and nextest use
//! (`--list`, `--exact NAME`, a name filter).
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;

use tokio::io::AsyncReadExt;
use toolhost_sandbox::{
    CacheView, Launch, LaunchArg, Layer, Sandbox, SandboxConfig, SandboxError, View,
};

type Test = fn();

const TESTS: &[(&str, Test)] = &[
    ("the_probe_finds_every_layer", the_probe_finds_every_layer),
    (
        "a_program_runs_as_an_unprivileged_uid_and_sees_only_its_view",
        a_program_runs_as_an_unprivileged_uid_and_sees_only_its_view,
    ),
    (
        "a_path_outside_the_view_is_refused_before_anything_starts",
        a_path_outside_the_view_is_refused_before_anything_starts,
    ),
    (
        "f18_the_helper_refuses_a_spec_with_uid_0_on_a_root_host",
        f18_the_helper_refuses_a_spec_with_uid_0_on_a_root_host,
    ),
];

fn main() -> ExitCode {
    if let Some(code) = toolhost_sandbox::helper_main() {
        return code;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    // libtest's options that take a value (`--format terse`, `--skip NAME`, …): the value is
    // not a name filter.
    const WITH_VALUE: &[&str] = &[
        "--format",
        "--skip",
        "--test-threads",
        "--color",
        "--logfile",
        "--shuffle-seed",
        "-Z",
    ];
    let mut filters = Vec::new();
    let mut skips = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if WITH_VALUE.contains(&arg.as_str()) {
            if let Some(value) = rest.next()
                && arg == "--skip"
            {
                skips.push(value.as_str());
            }
        } else if !arg.starts_with('-') {
            filters.push(arg.as_str());
        }
    }
    let exact = flag("--exact");
    let matches = |name: &str, f: &str| if exact { name == f } else { name.contains(f) };
    let chosen = |name: &str| {
        (filters.is_empty() || filters.iter().any(|f| matches(name, f)))
            && !skips.iter().any(|f| matches(name, f))
    };
    if flag("--list") {
        // No test is ignored: `--ignored` lists none.
        if !flag("--ignored") {
            for (name, _) in TESTS.iter().filter(|(n, _)| chosen(n)) {
                println!("{name}: test");
            }
        }
        return ExitCode::SUCCESS;
    }
    if flag("--ignored") {
        return ExitCode::SUCCESS;
    }
    let mut failed = Vec::new();
    for (name, test) in TESTS.iter().filter(|(n, _)| chosen(n)) {
        let passed = std::panic::catch_unwind(test).is_ok();
        println!("test {name} ... {}", if passed { "ok" } else { "FAILED" });
        if !passed {
            failed.push(*name);
        }
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failed: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A sandbox whose helper is this binary, with no spare helpers kept.
fn sandbox() -> Arc<Sandbox> {
    let sandbox = Sandbox::new(SandboxConfig {
        spares: 0,
        ..SandboxConfig::default()
    });
    if let Err(why) = sandbox.ready() {
        panic!("this machine must offer the sandbox to run these tests: {why}");
    }
    Arc::new(sandbox)
}

fn the_probe_finds_every_layer() {
    let sandbox = sandbox();
    assert_eq!(sandbox.helper(), std::env::current_exe().unwrap());
    let names: Vec<&str> = sandbox.layers().iter().map(|l| l.name.as_str()).collect();
    for layer in [
        "user-namespace",
        "mount-namespace",
        "pid-namespace",
        "network-namespace",
        "ipc-namespace",
        "uts-namespace",
        "landlock",
        "seccomp",
        "no-new-privs",
        "cgroups",
        "rlimits",
        "network-supervisor",
    ] {
        assert!(names.contains(&layer), "{layer} missing from {names:?}");
    }
    let required = ["user-namespace", "mount-namespace", "landlock", "seccomp"];
    for Layer {
        name,
        available,
        detail,
    } in sandbox.layers()
    {
        if required.contains(&name.as_str()) {
            assert!(available, "{name}: {detail}");
        }
    }
}

/// One user's view over a fresh home (with a file in it) and empty cache directories.
struct Scene {
    dir: tempfile::TempDir,
    home: PathBuf,
    view: View,
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let harness = dir.path().join("harness");
        let transpiled = dir.path().join("transpiled");
        for d in [&home, &harness, &transpiled] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join("note.txt"), "in the home\n").unwrap();
        let cache = CacheView {
            harness: &harness,
            transpiled: &transpiled,
        };
        let view = View::new(&home, &[], &cache, None);
        Scene { dir, home, view }
    }

    fn launch<'a>(&'a self, script: &str) -> Launch<'a> {
        Launch {
            program: Path::new("sh"),
            search_path: "/usr/bin:/bin",
            args: vec![LaunchArg::Text("-c".into()), LaunchArg::Text(script.into())],
            cwd: &self.home,
            user: "ada@example.com",
            view: &self.view,
            extra: Vec::new(),
            network: false,
            per_call: true,
        }
    }
}

/// Runs `script` with `sh` in a sandbox over `scene`: its exit status and stdout.
fn run(sandbox: &Arc<Sandbox>, scene: &Scene, script: &str) -> (Option<i32>, String) {
    sandbox
        .prepare_home(&scene.home, "ada@example.com", &[])
        .unwrap();
    let spec = sandbox
        .spec(
            scene.launch(script),
            vec![("PATH".into(), "/usr/bin:/bin".into())],
        )
        .unwrap();
    runtime().block_on(async {
        let (mut child, _lease, _refill) = sandbox.start(spec).await.unwrap();
        drop(child.stdin.take());
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .await
            .unwrap();
        let status = child.wait().await.unwrap();
        (status.code(), out)
    })
}

fn a_program_runs_as_an_unprivileged_uid_and_sees_only_its_view() {
    let sandbox = sandbox();
    let scene = Scene::new();
    let (code, out) = run(
        &sandbox,
        &scene,
        "id -u; hostname; pwd; cat note.txt; echo made > new.txt; \
         ls /officer; test -e /root && echo root-visible; \
         cat /proc/1/cmdline | tr '\\0' ' '; echo",
    );
    assert_eq!(code, Some(0), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    // Root inside its user namespace, whatever uid it has on the host.
    assert_eq!(lines.first(), Some(&"0"), "{out}");
    assert_eq!(lines.get(1), Some(&"toolhost"), "{out}");
    assert_eq!(lines.get(2), Some(&"/officer/user"), "{out}");
    assert_eq!(lines.get(3), Some(&"in the home"), "{out}");
    assert!(!out.contains("root-visible"), "{out}");
    assert!(out.contains("toolhost __sandbox-exec"), "{out}");
    assert!(
        !out.contains(&*scene.dir.path().to_string_lossy()),
        "a host path shows inside: {out}"
    );
    // What it wrote is in the home, owned by the uid the user's tools run as.
    let written = scene.home.join("new.txt");
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "made\n");
    let uid = sandbox.uid_for("ada@example.com").unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&written).unwrap().uid(), uid);
    if rustix::process::getuid().is_root() {
        assert_ne!(uid, 0, "a root host never runs a tool as root");
    }
}

fn a_path_outside_the_view_is_refused_before_anything_starts() {
    let sandbox = sandbox();
    let scene = Scene::new();
    let mut launch = scene.launch("true");
    launch.cwd = Path::new("/etc");
    let err = sandbox.spec(launch, Vec::new()).unwrap_err();
    assert!(matches!(err, SandboxError::OutsideView(_)), "{err:?}");
    assert_eq!(err.to_string(), "/etc is outside the sandbox's view");
    let mut launch = scene.launch("true");
    launch.program = Path::new("no-such-program-anywhere");
    let err = sandbox.spec(launch, Vec::new()).unwrap_err();
    assert!(matches!(err, SandboxError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("/usr/bin:/bin"), "{err}");
}

/// Runs this binary's helper on `spec` as the host does; (exit status, stdout after the
/// ready byte, stderr).
fn run_helper(spec: &serde_json::Value) -> (i32, String, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
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

/// A spec that runs `program` as `uid`, with the system directories.
fn spec(uid: u32, program: &str) -> serde_json::Value {
    let mut mounts = Vec::new();
    let mut links = Vec::new();
    for dir in [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    ] {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                links.push(serde_json::json!([dir, std::fs::read_link(dir).unwrap()]));
            }
            Ok(_) => {
                mounts.push(serde_json::json!({"source": dir, "target": dir, "writable": false}))
            }
            Err(_) => {}
        }
    }
    serde_json::json!({
        "program": program, "args": [], "cwd": "/", "uid": uid, "gid": uid,
        "mounts": mounts, "links": links, "files": [], "tmp_bytes": 1 << 20,
        "limits": {}, "network": null, "cgroups": [], "env": [],
        "landlock": false, "seccomp": false, "hostname": "toolhost",
    })
}

/// F18: the helper kept root when a spec named uid 0 (so the range above ran tools as
/// host root): now it refuses, whatever the host asks.
fn f18_the_helper_refuses_a_spec_with_uid_0_on_a_root_host() {
    // Fails rather than skips: the suite runs as root (as `scripts/test` does in CI).
    assert!(
        rustix::process::geteuid().is_root(),
        "this test needs root, and runs as uid {}: only a root host chooses the tools' uid",
        rustix::process::geteuid().as_raw()
    );
    let (code, out, err) = run_helper(&spec(0, "/usr/bin/id"));
    assert_eq!(code, 125, "{out}{err}");
    assert!(
        err.contains("refusing to run a tool as host uid 0"),
        "{err}"
    );
    // The same spec with an unprivileged uid runs the tool (as root of its namespace).
    let (code, out, err) = run_helper(&spec(300_000, "/usr/bin/id"));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("uid=0(") || out.starts_with("uid=0 "),
        "{out}"
    );
}
