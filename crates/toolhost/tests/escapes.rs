//! The sandbox's escape suite: tools written to break out, run through `toolhost call`.
//! Every attempt must fail; the same tool code must succeed at the allowed variant, so
//! that a test cannot pass because the tool itself is broken. It runs wherever the
//! sandbox does (x86_64 and aarch64); only the x32 check is x86_64's alone.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

mod machine;

use std::net::{IpAddr, TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const USER: &str = "ada@example.com";

fn escapes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/escapes")
}

/// A host with a data directory holding two users, and a configuration.
struct Host {
    dir: tempfile::TempDir,
    config: PathBuf,
    tools: PathBuf,
    /// The host uid ada's tools run as: this host's alone (see `own_uid`), so that what
    /// runs as it after a call is what that call left behind.
    uid: u32,
}

impl Host {
    fn new(config: &str) -> Host {
        machine::sandbox();
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = dir.path().join("data");
        for user in [USER, "bob@example.com"] {
            std::fs::create_dir_all(data.join(user)).unwrap();
        }
        std::fs::write(data.join(USER).join("mine.txt"), "ada's own notes").unwrap();
        std::fs::write(data.join("bob@example.com/secret.txt"), "bob's secret").unwrap();
        let uid = own_uid();
        let path = dir.path().join("toolhost.toml");
        std::fs::write(&path, with_uid(config, uid)).unwrap();
        Host {
            config: path,
            tools: escapes(),
            dir,
            uid,
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `toolhost call TOOL ARGS…` as ada; (exit status, stdout, stderr).
    fn call(&self, tool: &str, args: &[&str]) -> (i32, String, String) {
        let mut cmd = self.command(tool, args);
        cmd.arg("--tools-dir").arg(&self.tools);
        self.run(cmd)
    }

    /// The same, with the data layout's tool roots instead of `--tools-dir`: `DATA/tools`
    /// and ada's own `DATA/ada@example.com/tools`.
    fn call_in_data_layout(&self, tool: &str, args: &[&str]) -> (i32, String, String) {
        self.run(self.command(tool, args))
    }

    /// `toolhost call` as ada, without tool roots.
    fn command(&self, tool: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        cmd.env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLHOST_CONFIG")
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .args(["call", tool, "--timeout", "20", "--config"])
            .arg(&self.config)
            .arg("--data")
            .arg(self.data())
            .args(["--user", USER])
            .args(args);
        cmd
    }

    /// Runs a call to its end; (exit status, stdout, stderr). Review row 74: whatever the
    /// tool did, nothing of its sandbox outlives the call.
    fn run(&self, mut cmd: Command) -> (i32, String, String) {
        let out = cmd.output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        self.assert_nothing_left();
        (out.status.code().unwrap_or(-1), stdout, stderr)
    }

    /// Fails unless every process running as this host's tool uid (the tools, and the
    /// sandbox helpers once they dropped root) is gone within a few seconds.
    fn assert_nothing_left(&self) {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let left = processes_of(self.uid);
            if left.is_empty() {
                return;
            }
            assert!(
                Instant::now() < until,
                "processes of the sandbox uid {} outlived the call: {left:?}",
                self.uid
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `call`, with an account the machine lacks added to the host's /etc/passwd for this
    /// call alone (a bind mount in a mount namespace of its own); the call must succeed,
    /// and its stdout is returned.
    fn call_with_planted_account(&self, tool: &str, args: &[&str]) -> String {
        let planted = self.dir.path().join("planted-passwd");
        // First: read_file returns the first 400 bytes.
        machine::passwd_with(
            "planted_account:x:4242:4242::/home/planted:/bin/sh",
            &planted,
        );
        let mut call = self.command(tool, args);
        call.arg("--tools-dir").arg(&self.tools);
        let (code, stdout, stderr) = self.run(machine::with_passwd(&call, &planted));
        assert_eq!(code, 0, "{tool} {args:?} failed: {stdout}{stderr}");
        stdout
    }

    /// The call must fail, saying `why`.
    fn denied(&self, tool: &str, args: &[&str], why: &str) {
        let (code, stdout, stderr) = self.call(tool, args);
        assert_eq!(code, 1, "{tool} {args:?} was not denied: {stdout}{stderr}");
        assert!(
            stderr.contains(why) || stdout.contains(why),
            "{tool} {args:?}: expected {why:?} in: {stdout}{stderr}"
        );
    }

    /// The call must succeed, printing `expected`.
    fn allowed(&self, tool: &str, args: &[&str], expected: &str) -> String {
        let (code, stdout, stderr) = self.call(tool, args);
        assert_eq!(code, 0, "{tool} {args:?} failed: {stdout}{stderr}");
        assert!(stdout.contains(expected), "{tool} {args:?}: {stdout}");
        stdout
    }
}

fn strict() -> Host {
    Host::new("[sandbox]\nmemory_mb = 256\ntmp_mb = 16\n")
}

/// A uid for one host's tools that no other test's host uses at the same time (test
/// binaries run side by side, and tests within one): from the process id and a counter.
fn own_uid() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed) % 64;
    1_000_000 + std::process::id() * 64 + n
}

/// `config` with its `[sandbox]` table giving ada's tools `uid` (`uid_count = 1`: a
/// user's uid is `uid_base + hash % uid_count`).
fn with_uid(config: &str, uid: u32) -> String {
    let own = format!("uid_base = {uid}\nuid_count = 1\n");
    match config.find("[sandbox]\n") {
        Some(at) => {
            let (head, tail) = config.split_at(at + "[sandbox]\n".len());
            format!("{head}{own}{tail}")
        }
        None => format!("{config}\n[sandbox]\n{own}"),
    }
}

/// Processes whose real, effective, saved or file-system uid is `uid`, as "pid command".
/// Zombies are not counted: they have ended, and once `toolhost call` has exited, only
/// the host's init can reap the helpers it left to it.
fn processes_of(uid: u32) -> Vec<String> {
    let uid = uid.to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        // A process may end while it is being looked at.
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let runs_as = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .is_some_and(|ids| ids.split_whitespace().any(|id| id == uid));
        let zombie = status
            .lines()
            .find_map(|l| l.strip_prefix("State:"))
            .is_some_and(|state| state.trim_start().starts_with('Z'));
        if runs_as && !zombie {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!(
                "{} {}",
                name.to_string_lossy(),
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

// --- The file system ---

#[test]
fn cannot_read_etc_shadow() {
    let h = strict();
    h.denied("read_file", &["path=/etc/shadow"], "ENOENT");
    h.allowed("read_file", &["path=/etc/hosts"], "localhost");
}

#[test]
fn sees_no_host_accounts_in_etc_passwd() {
    // S4: an account planted in the host's passwd (bind-mounted over /etc/passwd in a
    // mount namespace of this call's own), so the check never depends on which accounts
    // the machine happens to have.
    let h = strict();
    let passwd = h.call_with_planted_account("read_file", &["path=/etc/passwd"]);
    assert!(passwd.contains("root:x:0:0"), "{passwd}");
    assert!(!passwd.contains("planted_account"), "{passwd}");
    // Unconfined, the same tool reads the planted account: the plant works.
    let h = Host::new("[sandbox]\nenabled = false\n");
    let passwd = h.call_with_planted_account("read_file", &["path=/etc/passwd"]);
    assert!(passwd.contains("planted_account:x:4242"), "{passwd}");
}

#[test]
fn cannot_list_root() {
    let h = strict();
    h.denied("list_dir", &["path=/root"], "ENOENT");
    h.allowed("list_dir", &["path=/officer/user"], "mine.txt");
}

#[test]
fn cannot_read_another_users_data() {
    let h = strict();
    let theirs = h.data().join("bob@example.com/secret.txt");
    h.denied(
        "read_file",
        &[&format!("path={}", theirs.display())],
        "ENOENT",
    );
    h.denied(
        "read_file",
        &["path=/officer/user/../bob@example.com/secret.txt"],
        "ENOENT",
    );
    h.allowed(
        "read_file",
        &["path=/officer/user/mine.txt"],
        "ada's own notes",
    );
}

#[test]
fn cannot_write_into_any_tool_folder() {
    let h = strict();
    h.denied(
        "write_file",
        &["path=/officer/tools/write_file/index.ts"],
        "EROFS",
    );
    h.denied("write_file", &["path=/officer/tools/new.txt"], "EROFS");
    h.allowed("write_file", &["path=/officer/user/new.txt"], "wrote");
    assert_eq!(
        std::fs::read_to_string(h.data().join(USER).join("new.txt")).unwrap(),
        "written by a tool"
    );
}

#[test]
fn cannot_write_outside_the_writable_paths() {
    let h = strict();
    for path in [
        "/usr/bin/evil",
        "/etc/evil",
        "/evil",
        "/run/toolhost/cache/evil",
    ] {
        h.denied("write_file", &[&format!("path={path}")], "EROFS");
    }
    // S1: the sandbox's /proc has no sysrq-trigger to write.
    h.denied(
        "write_file",
        &["path=/proc/sysrq-trigger"],
        "ENOENT: no such file or directory, open '/proc/sysrq-trigger'",
    );
    h.allowed("write_file", &["path=/tmp/fine"], "wrote");
}

/// A tool root of the host's own with a copy of `read_file` and a file inside its folder:
/// (root, tool folder).
fn own_read_file(h: &Host) -> (PathBuf, PathBuf) {
    let root = h.dir.path().join("tools");
    let tool = root.join("read_file");
    std::fs::create_dir_all(&tool).unwrap();
    for f in ["TOOL.md", "index.ts"] {
        std::fs::copy(escapes().join("read_file").join(f), tool.join(f)).unwrap();
    }
    std::fs::write(tool.join("inside.txt"), "inside the folder").unwrap();
    (root, tool)
}

#[test]
fn cannot_follow_a_symlink_out_of_the_tool_folder() {
    let h = strict();
    let secret = h.dir.path().join("host-secret.txt");
    std::fs::write(&secret, "host secret").unwrap();
    let (root, tool) = own_read_file(&h);
    std::os::unix::fs::symlink(&secret, tool.join("leak")).unwrap();
    std::os::unix::fs::symlink("../../../../../../../../etc/shadow", tool.join("climb")).unwrap();
    let h = Host { tools: root, ..h };
    h.denied("read_file", &["path=leak"], "ENOENT");
    h.denied("read_file", &["path=climb"], "ENOENT");
    h.allowed("read_file", &["path=inside.txt"], "inside the folder");
}

#[test]
fn cannot_follow_a_hard_link_out_of_the_tool_folder() {
    // S3: only a root host runs tools as another uid than its own, so only there is a file
    // the host owns out of a tool's reach; elsewhere this fails saying so.
    machine::root(
        "a file only root may read is out of a tool's reach only when tools run as another uid",
    );
    let h = strict();
    // A link someone placed in the folder to a file only root may read.
    let secret = h.dir.path().join("root-only.txt");
    std::fs::write(&secret, "root only").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (root, tool) = own_read_file(&h);
    std::fs::hard_link(&secret, tool.join("linked")).unwrap();
    let h = Host { tools: root, ..h };
    h.denied("read_file", &["path=linked"], "EACCES");
    h.allowed("read_file", &["path=inside.txt"], "inside the folder");
}

#[test]
fn cannot_hard_link_what_it_may_only_read_into_its_writable_space() {
    let h = strict();
    h.denied(
        "hard_link",
        &[
            "from=/officer/tools/read_file/index.ts",
            "to=/officer/user/copy.ts",
        ],
        "EXDEV",
    );
    h.allowed(
        "hard_link",
        &["from=/officer/user/mine.txt", "to=/officer/user/again.txt"],
        "ada's own notes",
    );
}

/// Copies a tool folder (flat, as the escape tools are).
fn copy_tool(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Every path under `dir` with its contents (empty for folders), in order.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all.push((path.clone(), Vec::new()));
            all.extend(snapshot(&path));
        } else {
            all.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    all.sort();
    all
}

/// Review row 10: a user's own tools folder that exists is read-only to their tools:
/// writing, moving or removing anything under `/officer/user/tools` fails, and the host's
/// files stay as they were.
#[test]
fn cannot_change_the_users_own_tools_folder() {
    let h = strict();
    for tool in ["write_file", "sh"] {
        copy_tool(&escapes().join(tool), &h.data().join("tools").join(tool));
    }
    let own = h.data().join(USER).join("tools");
    std::fs::create_dir_all(own.join("notes")).unwrap();
    std::fs::write(
        own.join("notes/TOOL.md"),
        "---\nname: notes\ndescription: Ada's own tool.\nversion: 1\n---\n\n# notes\n",
    )
    .unwrap();
    std::fs::write(
        own.join("notes/index.ts"),
        "export async function execute() {\n  return \"ada's own tool ran\";\n}\n",
    )
    .unwrap();
    let before = snapshot(&own);
    let refused = |tool: &str, arg: String, why: &str| {
        let (code, stdout, stderr) = h.call_in_data_layout(tool, &[&arg]);
        assert_eq!(code, 1, "{arg} was not refused: {stdout}{stderr}");
        assert!(
            stdout.contains(why) || stderr.contains(why),
            "{arg}: expected {why:?} in: {stdout}{stderr}"
        );
    };
    for path in [
        "/officer/user/tools/notes/index.ts",
        "/officer/user/tools/notes/new.ts",
        "/officer/user/tools/TOOL.md",
    ] {
        refused("write_file", format!("path={path}"), "EROFS");
    }
    for (cmd, why) in [
        (
            "mv /officer/user/tools/notes /officer/user/tools/moved",
            "Read-only file system",
        ),
        (
            "mv /officer/user/tools /officer/user/moved",
            "Device or resource busy",
        ),
        ("rm -rf /officer/user/tools/notes", "Read-only file system"),
        ("rm -rf /officer/user/tools", "Read-only file system"),
        (
            "chmod 777 /officer/user/tools/notes",
            "Read-only file system",
        ),
        ("mkdir /officer/user/tools/sh", "Read-only file system"),
    ] {
        refused("sh", format!("cmd=exec 2>&1; {cmd}"), why);
    }
    assert_eq!(snapshot(&own), before, "the user's tools changed");
    assert!(!h.data().join(USER).join("moved").exists());
    // It is her tool root all the same: her tool runs, and the home around it is writable.
    let (code, stdout, stderr) = h.call_in_data_layout("notes", &[]);
    assert_eq!((code, stdout.trim()), (0, "ada's own tool ran"), "{stderr}");
    let (code, stdout, stderr) =
        h.call_in_data_layout("write_file", &["path=/officer/user/fine.txt"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// Review row 14: a new user's home is handed to their tools' uid without following
/// links: a link in the home to a root-owned host file or folder is re-owned itself, and
/// what it points at keeps its owner.
#[test]
fn handing_a_home_over_follows_no_link() {
    machine::root("review row 14: only a root host hands homes to the tools' own uid");
    use std::os::unix::fs::MetadataExt;
    let h = strict();
    let file = h.dir.path().join("host-file");
    std::fs::write(&file, "root's").unwrap();
    let dir = h.dir.path().join("host-dir");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("inside"), "root's too").unwrap();
    let home = h.data().join(USER);
    std::os::unix::fs::symlink(&file, home.join("bin")).unwrap();
    std::os::unix::fs::symlink(&dir, home.join("etc")).unwrap();
    let owner = |p: &Path| std::fs::symlink_metadata(p).unwrap().uid();
    assert_eq!(owner(&home), 0, "the home must start as root's");
    h.allowed(
        "read_file",
        &["path=/officer/user/mine.txt"],
        "ada's own notes",
    );
    for handed in [
        home.clone(),
        home.join("mine.txt"),
        home.join("bin"),
        home.join("etc"),
    ] {
        assert_eq!(owner(&handed), h.uid, "{}", handed.display());
    }
    for kept in [file, dir.clone(), dir.join("inside")] {
        assert_eq!(
            owner(&kept),
            0,
            "{} was chowned through a link",
            kept.display()
        );
    }
}

// --- Processes ---

#[test]
fn cannot_see_or_signal_host_processes() {
    let h = strict();
    let me = std::process::id().to_string();
    let mut bystander = Command::new("sleep").arg("30").spawn().unwrap();
    h.denied(
        "signal",
        &[&format!("pid={me}"), "sig=0"],
        "No such process",
    );
    h.denied(
        "signal",
        &[&format!("pid={}", bystander.id()), "sig=15"],
        "No such process",
    );
    assert!(bystander.try_wait().unwrap().is_none());
    bystander.kill().unwrap();
    h.allowed("signal", &["pid=0", "sig=0"], "signalled");
}

#[test]
fn cannot_read_host_processes_environment() {
    let h = strict();
    let me = std::process::id();
    h.denied(
        "read_file",
        &[&format!("path=/proc/{me}/environ")],
        "ENOENT",
    );
    h.allowed(
        "read_file",
        &["path=/proc/self/environ"],
        "OFFICER_USER_HOME",
    );
}

#[test]
fn cannot_ptrace() {
    let h = strict();
    let me = std::process::id().to_string();
    h.denied(
        "syscall",
        &["name=ptrace", &format!("pid={me}")],
        "Operation not permitted",
    );
    h.denied(
        "syscall",
        &["name=process_vm_readv", &format!("pid={me}")],
        "Operation not permitted",
    );
    h.allowed("syscall", &["name=getpid", "pid=0"], "getpid returned");
}

/// Each system call is refused; the same tool's permitted call works.
fn denied_syscalls(h: &Host, names: &[&str]) {
    for name in names {
        h.denied(
            "syscall",
            &[&format!("name={name}"), "pid=0"],
            "Operation not permitted",
        );
    }
}

#[test]
fn cannot_open_unusual_socket_families_or_use_the_x32_abi() {
    let h = strict();
    for name in ["socket_vsock", "socket_alg"] {
        h.denied(
            "syscall",
            &[&format!("name={name}"), "pid=0"],
            "Address family not supported",
        );
    }
    // The x32 ABI: x86_64's second numbering of every call, which the filter refuses.
    #[cfg(target_arch = "x86_64")]
    h.denied(
        "syscall",
        &["name=x32_getpid", "pid=0"],
        "Function not implemented",
    );
    // The families a tool has a use for, and the ordinary ABI, work.
    h.allowed(
        "syscall",
        &["name=socket_inet", "pid=0"],
        "socket_inet returned",
    );
    h.allowed(
        "syscall",
        &["name=socket_unix", "pid=0"],
        "socket_unix returned",
    );
    h.allowed("syscall", &["name=getpid", "pid=0"], "getpid returned 2");
}

#[test]
fn cannot_mount_unshare_or_make_namespaces() {
    let h = strict();
    denied_syscalls(
        &h,
        &[
            "mount",
            "unshare",
            "userns",
            "setns",
            "chroot",
            "pivot_root",
        ],
    );
    h.allowed("syscall", &["name=getpid", "pid=0"], "getpid returned");
}

#[test]
fn cannot_load_seccomp_bpf_or_kernel_code() {
    let h = strict();
    denied_syscalls(
        &h,
        &[
            "seccomp",
            "prctl_seccomp",
            "bpf",
            "init_module",
            "keyctl",
            "io_uring",
            "perf_event",
        ],
    );
    h.allowed("syscall", &["name=getpid", "pid=0"], "getpid returned");
}

/// Review row 24, the Bash half (worker_isolation.rs has the warm Node.js one).
#[test]
fn killing_every_visible_process_touches_nothing_outside() {
    let h = strict();
    let mut bystander = Command::new("sleep").arg("30").spawn().unwrap();
    h.allowed("kill_all", &["target=all"], "survived");
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "a host process was killed"
    );
    h.allowed("kill_all", &["target=child"], "survived");
    bystander.kill().unwrap();
}

/// Review row 25 (worker_isolation.rs has it under serve, with another user served).
#[test]
fn a_fork_bomb_is_contained() {
    let h = Host::new("[sandbox]\nmax_processes = 64\n");
    let (_, stdout, stderr) = h.call("fork_many", &["n=100000"]);
    // Review row 25: fork fails with EAGAIN at the cap, until Bash gives up (had it
    // started them all, it would say how many).
    assert!(
        stderr.contains("fork: Resource temporarily unavailable"),
        "the process limit did not hold: {stdout}{stderr}"
    );
    if let Some(count) = stdout.trim().strip_prefix("started ") {
        assert!(count.parse::<usize>().unwrap() < 64, "{stdout}{stderr}");
    }
    // Nothing of the bomb outlives the call: `Host::run` saw every process of this host's
    // tool uid end (a search by name would also find the bombs of other tests).
    assert_eq!(processes_of(h.uid), Vec::<String>::new());
    h.allowed("fork_many", &["n=3"], "started 3");
}

#[test]
fn a_memory_bomb_is_contained() {
    // D5: without enforced cgroups nothing caps a tool's memory, so the test fails
    // saying so rather than passing without testing anything.
    machine::sandbox_with(&["cgroups"], "a tool's memory cap is its cgroup's");
    let h = strict();
    h.denied("hog_memory", &["mb=1024"], "killed (SIGKILL");
    h.allowed("hog_memory", &["mb=32"], "holding 32 MiB");
}

#[test]
fn filling_tmp_stops_at_its_cap() {
    let h = strict();
    h.denied("fill_tmp", &["mb=64"], "No space left on device");
    h.allowed("fill_tmp", &["mb=4"], "wrote 4 MiB");
}

#[test]
fn an_endless_stdout_is_cut_and_the_host_keeps_its_memory() {
    let h = strict();
    let (code, stdout, stderr) = {
        let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .env("XDG_CACHE_HOME", h.dir.path().join("cache"))
            .args(["call", "spew", "bytes=-1", "--timeout", "3", "--config"])
            .arg(&h.config)
            .arg("--tools-dir")
            .arg(&h.tools)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            out.stdout.len(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("timed out"), "{stderr}");
    assert!(
        stdout < 2 * 1024 * 1024,
        "{stdout} bytes reached the caller"
    );
    h.allowed("spew", &["bytes=1000"], &"x".repeat(1000));
}

/// Review row 2: the tool lists `/proc` and probes PID 1 (the sandbox's helper): it sees
/// its own PID namespace only, and nothing of PID 1's environment, executable, root or
/// memory.
#[test]
fn sees_only_its_own_processes_in_proc() {
    let h = strict();
    let out = h.allowed(
        "sh",
        &["cmd=exec 2>&1
echo \"pids: $(ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' ')\"
echo \"environ of 1: $(cat /proc/1/environ | wc -c) bytes\"
ls -l /proc/1/exe
ls /proc/1/root/
head -c 1 /proc/1/mem
echo end"],
        "end",
    );
    let pids: Vec<u32> = out
        .lines()
        .find_map(|l| l.strip_prefix("pids: "))
        .unwrap_or_else(|| panic!("{out}"))
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(pids.contains(&1) && pids.contains(&2), "{out}");
    assert!(
        pids.iter().all(|p| *p < 10),
        "host processes in /proc: {out}"
    );
    assert!(out.contains("environ of 1: 0 bytes"), "{out}");
    for what in ["/proc/1/exe", "/proc/1/root/", "/proc/1/mem"] {
        let line = out
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("nothing about {what}: {out}"));
        assert!(line.ends_with("Permission denied"), "{line}");
    }
}

/// Review row 23: the review's other dangerous calls are refused too (userfaultfd,
/// open_by_handle_at, clone into a new user namespace), no other uid can be taken, and
/// every process of the tool runs without capabilities (even in its bounding set), under no_new_privs and seccomp.
#[test]
fn cannot_fault_open_by_handle_clone_namespaces_or_gain_privileges() {
    let h = strict();
    denied_syscalls(&h, &["userfaultfd", "open_by_handle_at", "clone_newuser"]);
    // Root inside, mapped to one unprivileged host uid: there is no other uid to become.
    h.denied("syscall", &["name=setuid", "pid=1000"], "Invalid argument");
    let status = h.allowed(
        "sh",
        &["cmd=grep -E '^(Cap[A-Za-z]+|NoNewPrivs|Seccomp):' /proc/self/status"],
        "Seccomp",
    );
    let fields: Vec<(&str, &str)> = status
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k, v.trim()))
        .collect();
    assert_eq!(
        fields,
        [
            ("CapInh", "0000000000000000"),
            ("CapPrm", "0000000000000000"),
            ("CapEff", "0000000000000000"),
            ("CapBnd", "0000000000000000"),
            ("CapAmb", "0000000000000000"),
            ("NoNewPrivs", "1"),
            ("Seccomp", "2"),
        ],
        "{status}"
    );
    h.allowed("syscall", &["name=getpid", "pid=0"], "getpid returned");
}

/// Review row 31: a Bash tool leaves a `setsid nohup` process that ignores SIGTERM and
/// SIGHUP and a double-forked grandchild, a TypeScript tool a detached, unref'd child;
/// each returns at once, and none of them outlives the call.
#[test]
fn nothing_a_tool_detaches_outlives_its_call() {
    let h = strict();
    let tag = format!("linger-{}", h.uid);
    h.allowed("linger", &[&format!("tag={tag}")], "left 2 behind");
    assert_eq!(processes_named(&tag), Vec::<String>::new());
    let tag = format!("detached-{}", h.uid);
    h.allowed("spawn_detached", &[&format!("tag={tag}")], "spawned");
    assert_eq!(processes_named(&tag), Vec::<String>::new());
}

/// Processes whose command line starts with `name`, as "pid command".
fn processes_named(name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && cmdline.starts_with(name.as_bytes())
        {
            let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push(format!("{} {cmd}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// `toolhost call` as `cmd` would run it, started by a shell that first opens (without
/// close-on-exec, as shells do) a host file as descriptor 10 and a host folder as 251.
fn with_inherited_descriptors(cmd: &Command, file: &Path, dir: &Path) -> Command {
    let mut outer = Command::new("bash");
    outer
        .args([
            "-c",
            r#"exec 10<"$1" 251<"$2" || exit 3; shift 2; exec "$@""#,
            "bash",
        ])
        .arg(file)
        .arg(dir)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => outer.env(key, value),
            None => outer.env_remove(key),
        };
    }
    outer
}

/// Review row 73: descriptors the host process inherited (a secret file and a host folder,
/// left open by the shell that started it) never reach a tool: it holds no such
/// descriptor, and PID 1's are out of its reach.
#[test]
fn descriptors_the_host_inherited_never_reach_a_tool() {
    let h = strict();
    let secret = h.dir.path().join("fd-secret.txt");
    std::fs::write(&secret, "inherited secret").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut call = h.command(
        "sh",
        &["cmd=exec 2>&1
echo \"fds: $(ls /proc/self/fd | tr '\\n' ' ')\"
cat <&10
cat <&251
ls /proc/1/fd/
cat /proc/1/fd/10
ls /proc/1/fd/251/
echo end"],
    );
    call.arg("--tools-dir").arg(&h.tools);
    let (code, out, stderr) = h.run(with_inherited_descriptors(&call, &secret, h.dir.path()));
    assert_eq!(code, 0, "{out}{stderr}");
    // `ls` itself holds 0, 1, 2 and its directory.
    assert!(out.contains("fds: 0 1 2 3 \n"), "{out}");
    assert!(out.contains("10: Bad file descriptor"), "{out}");
    assert!(out.contains("251: Bad file descriptor"), "{out}");
    for what in ["/proc/1/fd/", "/proc/1/fd/10", "/proc/1/fd/251/"] {
        let line = out
            .lines()
            .find(|l| l.contains(&format!("'{what}'")) || l.contains(&format!("{what}:")))
            .unwrap_or_else(|| panic!("nothing about {what}: {out}"));
        assert!(line.ends_with("Permission denied"), "{line}");
    }
    for host in ["inherited secret", "fd-secret.txt", "toolhost.toml"] {
        assert!(!out.contains(host), "{host} reached the tool: {out}");
    }
}

/// Review row 73's note: descriptors the host process inherited (a host file, a host
/// folder) are held by no process of the sandbox: not the helper's first stage (the
/// network supervisor, outside the tool's namespaces), not PID 1, not the tool.
#[test]
fn no_sandbox_process_holds_a_descriptor_the_host_inherited() {
    let h = strict();
    let secret = h.dir.path().join("fd-secret.txt");
    std::fs::write(&secret, "inherited secret").unwrap();
    let mut call = h.command("sh", &["cmd=echo ready; sleep 3"]);
    call.arg("--tools-dir").arg(&h.tools);
    let mut child = with_inherited_descriptors(&call, &secret, h.dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    let mut sandbox = Vec::new();
    while sandbox.iter().all(|p: &String| !p.contains("sleep")) {
        assert!(Instant::now() < until, "the tool never started");
        std::thread::sleep(Duration::from_millis(20));
        sandbox = processes_of(h.uid);
    }
    let mut held = Vec::new();
    for process in &sandbox {
        let pid = process.split(' ').next().unwrap();
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .flatten()
        {
            if let Ok(target) = std::fs::read_link(fd.path())
                && (target == secret || target == h.dir.path())
            {
                held.push(format!(
                    "{process}: fd {:?} -> {}",
                    fd.file_name(),
                    target.display()
                ));
            }
        }
    }
    child.wait().unwrap();
    assert!(held.is_empty(), "{held:#?}");
}

/// Review row 27: `/dev/shm` is a private tmpfs capped at `tmp_mb` like `/tmp` (each its
/// own 16 MiB here), so filling it stops there too.
#[test]
fn filling_dev_shm_stops_at_its_cap() {
    let h = strict();
    let (code, stdout, stderr) = h.call("fill_tmp", &["mb=64", "dir=/dev/shm"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let text = format!("{stdout}{stderr}");
    assert!(text.contains("No space left on device"), "{text}");
    assert!(text.contains("16777216 bytes"), "{text}");
    h.allowed("fill_tmp", &["mb=4", "dir=/dev/shm"], "wrote 4 MiB");
}

// --- The network ---

/// A host where the escape tools that use the network declare it, with `extra` settings.
fn networked(extra: &str) -> Host {
    Host::new(&format!(
        "[sandbox]\nnetwork_allow = [\"tcp_connect\", \"udp_send\", \"resolve\"]\n{extra}\n"
    ))
}

/// Whether a connection arrived at `listener` (which must be non-blocking).
fn took_a_connection(listener: &TcpListener) -> bool {
    match listener.accept() {
        Ok((mut stream, _)) => {
            let mut text = String::new();
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(2)))
                .unwrap();
            let _ = std::io::Read::read_to_string(&mut stream, &mut text);
            assert_eq!(text, "hello from a tool");
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    }
}

#[test]
fn cannot_reach_a_tcp_port_on_the_hosts_loopback() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let to = ["host=127.0.0.1", &format!("port={port}")];
    // Without the network there is no loopback at all (S1: the refusal, not any error).
    strict().denied(
        "tcp_connect",
        &to,
        &format!("connect EACCES 127.0.0.1:{port}"),
    );
    // With it, 127.0.0.1 is the sandbox's own loopback, where nothing listens…
    let h = networked(&format!("network_ports = [{port}]"));
    h.denied("tcp_connect", &to, "ECONNREFUSED");
    h.denied(
        "tcp_connect",
        &["host=::ffff:127.0.0.1", &format!("port={port}")],
        "ECONNREFUSED",
    );
    assert!(!took_a_connection(&listener));
    // …unless the operator opens the host's loopback: then the same tool gets through.
    let h = networked(&format!(
        "network_ports = [{port}]\nnetwork_private = [\"127.0.0.1/32\"]"
    ));
    h.allowed("tcp_connect", &to, "connected");
    assert!(took_a_connection(&listener));
    // The ports stay the operator's to choose.
    let h = networked("network_ports = [443]\nnetwork_private = [\"127.0.0.1/32\"]");
    h.denied("tcp_connect", &to, "EACCES");
    assert!(!took_a_connection(&listener));
}

#[test]
fn a_networked_tool_cannot_reach_private_or_link_local_addresses() {
    let h = networked("network_ports = []");
    for host in [
        "10.1.2.3",
        "192.168.0.1",
        "169.254.169.254",
        "fd00::1",
        "::ffff:172.16.0.1",
    ] {
        let (code, stdout, stderr) = h.call("tcp_connect", &[&format!("host={host}"), "port=80"]);
        assert_eq!(code, 1, "{host}: {stdout}{stderr}");
        // Refused on the spot, with the reason in the tool's log, not left to time out.
        assert!(
            format!("{stdout}{stderr}").contains("EACCES"),
            "{host}: {stdout}{stderr}"
        );
    }
    // The same tool, on its own loopback, connects: a server inside the sandbox works.
    h.allowed(
        "tcp_connect",
        &["host=127.0.0.1", "port=0", "serve=true"],
        "connected",
    );
}

/// The host's first non-loopback IPv4 address, as the kernel's local routes list it.
fn own_interface_address() -> Option<std::net::Ipv4Addr> {
    let text = std::fs::read_to_string("/proc/net/fib_trie").ok()?;
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .filter(|w| w[1].contains("/32 host LOCAL"))
        .filter_map(|w| w[0].split_whitespace().last()?.parse().ok())
        .find(|ip: &std::net::Ipv4Addr| !ip.is_loopback())
}

/// F16: the supervisor connects from the host's network, where the host's own interface
/// address reaches the host's services (whatever range it is in); it is refused like
/// loopback, and so are documentation and discard-only ranges.
#[test]
fn a_networked_tool_cannot_reach_the_hosts_own_address_or_reserved_ranges() {
    let Some(own) = own_interface_address() else {
        panic!(
            "this machine has no non-loopback IPv4 address to test with (see /proc/net/fib_trie)"
        );
    };
    let listener = TcpListener::bind((own, 0)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let h = networked(&format!("network_ports = [{port}, 80]"));
    h.denied(
        "tcp_connect",
        &[&format!("host={own}"), &format!("port={port}")],
        "EACCES",
    );
    assert!(
        !took_a_connection(&listener),
        "the tool reached {own}:{port}"
    );
    for host in [
        "198.51.100.1",
        "203.0.113.1",
        "2001:db8::1",
        "100::1",
        "::8.8.8.8",
    ] {
        h.denied(
            "tcp_connect",
            &[&format!("host={host}"), "port=80"],
            "EACCES",
        );
    }
}

#[test]
fn cannot_send_udp() {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let port = socket.local_addr().unwrap().port().to_string();
    let to = ["host=127.0.0.1", &format!("port={port}")];
    strict().denied("udp_send", &to, "send failed");
    let mut buf = [0u8; 64];
    assert!(socket.recv(&mut buf).is_err(), "a datagram got out");
    // A networked tool's datagrams stay in its own namespace: to 127.0.0.1 they reach
    // the sandbox's loopback, and anywhere else there is no route.
    let h = networked("");
    h.allowed("udp_send", &to, "sent");
    assert!(socket.recv(&mut buf).is_err(), "a datagram got out");
    h.denied("udp_send", &["host=1.1.1.1", "port=53"], "unreachable");
    // The same tool code works inside the sandbox.
    h.allowed(
        "udp_send",
        &["host=127.0.0.1", "echo=true"],
        "echoed: datagram from a tool",
    );
}

#[test]
fn cannot_resolve_or_reach_an_outside_host() {
    // S2: a DNS server on the host's loopback, asked directly, answers any tool that
    // reaches it; an outside name would fail the same way on an offline host.
    let dns = dns_server();
    let server = format!("server={dns}");
    let h = strict();
    h.denied(
        "resolve",
        &["host=tool.example.test", &server],
        "queryA ECONNREFUSED tool.example.test",
    );
    h.denied(
        "tcp_connect",
        &["host=1.1.1.1", "port=443"],
        "connect EACCES 1.1.1.1:443",
    );
    h.allowed("resolve", &["host=localhost"], "127.0.0.1");
    // The same tool code, unconfined, gets the server's answer.
    Host::new("[sandbox]\nenabled = false\n").allowed(
        "resolve",
        &["host=tool.example.test", &server],
        "203.0.113.7",
    );
}

#[test]
fn a_networked_tool_resolves_names_through_the_sandboxs_relay() {
    let dns = dns_server();
    let h = networked(&format!("dns = [\"{dns}\"]"));
    h.allowed("resolve", &["host=tool.example.test"], "203.0.113.7");
    // Without the network, no name resolves, not even by asking that server directly.
    strict().denied(
        "resolve",
        &["host=tool.example.test", &format!("server={dns}")],
        "queryA ECONNREFUSED tool.example.test",
    );
}

/// A DNS server on the host's loopback that answers every A query with 203.0.113.7 and
/// every other with no records.
fn dns_server() -> std::net::SocketAddr {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let at = socket.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = socket.recv_from(&mut buf) {
            let query = &buf[..n];
            // The question: labels up to the root, then type and class.
            let mut end = 12;
            while end < n && query[end] != 0 {
                end += 1 + query[end] as usize;
            }
            let question = &query[12..end + 5];
            let is_a = query[end + 1..end + 3] == [0, 1];
            let mut answer = Vec::new();
            answer.extend(&query[..2]);
            answer.extend([0x81, 0x80, 0, 1, 0, u8::from(is_a), 0, 0, 0, 0]);
            answer.extend(question);
            if is_a {
                answer.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 203, 0, 113, 7]);
            }
            let _ = socket.send_to(&answer, from);
        }
    });
    at
}

#[test]
fn the_operator_can_forbid_the_network_to_a_tool_that_declares_it() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let h = Host::new(&format!(
        "[sandbox]\nnetwork = \"never\"\nnetwork_allow = [\"tcp_connect\"]\nnetwork_ports = [{port}]\nnetwork_private = [\"127.0.0.1/32\"]\n"
    ));
    let to = ["host=127.0.0.1", &format!("port={port}")];
    // S1: the refusal itself, and the same tool connecting where the policy allows it.
    h.denied(
        "tcp_connect",
        &to,
        &format!("connect EACCES 127.0.0.1:{port}"),
    );
    let h = Host::new(&format!(
        "[sandbox]\nnetwork_allow = [\"tcp_connect\"]\nnetwork_ports = [{port}]\nnetwork_private = [\"127.0.0.1/32\"]\n"
    ));
    h.allowed("tcp_connect", &to, "connected");
}

/// Listeners on the same free port of two host addresses (such as 127.0.0.1 and ::1),
/// non-blocking; panics saying which address this machine lacks.
fn listeners_on_one_port(a: IpAddr, b: IpAddr) -> (TcpListener, TcpListener, u16) {
    for _ in 0..20 {
        let first = TcpListener::bind((a, 0))
            .unwrap_or_else(|e| panic!("this machine cannot listen on {a}: {e}"));
        let port = first.local_addr().unwrap().port();
        match TcpListener::bind((b, port)) {
            Ok(second) => {
                first.set_nonblocking(true).unwrap();
                second.set_nonblocking(true).unwrap();
                return (first, second, port);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(e) => panic!("this machine cannot listen on {b}: {e}"),
        }
    }
    panic!("no port free on both {a} and {b}");
}

/// Review row 15: without the network a tool has no interface up: the host's loopback in
/// either family, and the host's own interface address, each with a server listening, are
/// out of reach.
#[test]
fn without_the_network_no_host_address_is_reached() {
    let Some(own) = own_interface_address() else {
        panic!(
            "this machine has no non-loopback IPv4 address to test with (see /proc/net/fib_trie)"
        );
    };
    let (v4, v6, port) = listeners_on_one_port(
        IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
    );
    let outside = TcpListener::bind((own, port)).unwrap();
    outside.set_nonblocking(true).unwrap();
    let h = strict();
    for (host, listener) in [
        ("127.0.0.1", &v4),
        ("::1", &v6),
        (&*own.to_string(), &outside),
    ] {
        let (code, stdout, stderr) = h.call(
            "tcp_connect",
            &[&format!("host={host}"), &format!("port={port}")],
        );
        let text = format!("{stdout}{stderr}");
        assert_eq!(code, 1, "{host}: {text}");
        // Refused on the spot: by Landlock's TCP rule where the kernel has it, else for
        // want of any interface.
        assert!(
            text.contains("EACCES") || text.contains("ENETUNREACH"),
            "{host}: {text}"
        );
        assert!(!took_a_connection(listener), "the tool reached {host}");
    }
}

/// Review row 16: every spelling of loopback a networked tool tries (IPv6, unspecified,
/// IPv4-mapped, NAT64, IPv4-compatible, integer, short and hex forms, a name) ends at the
/// sandbox's own loopback or is refused: none reaches the host's servers on that port.
#[test]
fn a_networked_tool_reaches_no_host_loopback_by_any_spelling() {
    let (v4, v6, port) = listeners_on_one_port(
        IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
    );
    let h = networked(&format!("network_ports = [{port}]"));
    for host in [
        "::1",
        "0.0.0.0",
        "::",
        "::ffff:7f00:1",
        "64:ff9b::7f00:1",
        "::127.0.0.1",
        "2130706433",
        "127.1",
        "0x7f.1",
        "localhost",
    ] {
        let (code, stdout, stderr) = h.call(
            "tcp_connect",
            &[&format!("host={host}"), &format!("port={port}")],
        );
        let text = format!("{stdout}{stderr}");
        assert_eq!(code, 1, "{host}: {text}");
        assert!(
            text.contains("ECONNREFUSED") || text.contains("EACCES"),
            "{host}: {text}"
        );
        assert!(
            !took_a_connection(&v4),
            "{host} reached the host's 127.0.0.1"
        );
        assert!(!took_a_connection(&v6), "{host} reached the host's ::1");
    }
    // They are working spellings: with the host's loopback opened, the same tool gets there.
    let h = networked(&format!(
        "network_ports = [{port}]\nnetwork_private = [\"127.0.0.1/32\", \"::1/128\"]"
    ));
    for (host, listener) in [("0x7f.1", &v4), ("2130706433", &v4), ("::1", &v6)] {
        h.allowed(
            "tcp_connect",
            &[&format!("host={host}"), &format!("port={port}")],
            "connected",
        );
        assert!(took_a_connection(listener), "{host}");
    }
}

/// Review row 20: the socket paths around `connect()`. Raw ICMP and AF_PACKET sockets are
/// refused; a host's abstract unix socket is not there (a sandbox has a network namespace
/// of its own, with or without the network); TCP Fast Open, which would connect without
/// `connect()`, is refused to a networked tool whose `connect()` gets through.
#[test]
fn other_socket_paths_are_refused_or_stay_inside() {
    use std::os::linux::net::SocketAddrExt;
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let offline = strict();
    let networked = Host::new(&format!(
        "[sandbox]\nnetwork_allow = [\"syscall\", \"tcp_connect\"]\nnetwork_ports = [{port}]\nnetwork_private = [\"127.0.0.1/32\"]\n"
    ));
    let name = format!("toolhost-escapes-{}", offline.uid);
    let abstract_addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
    let unix = std::os::unix::net::UnixListener::bind_addr(&abstract_addr).unwrap();
    unix.set_nonblocking(true).unwrap();
    for h in [&offline, &networked] {
        h.denied(
            "syscall",
            &["name=socket_raw_icmp", "pid=0"],
            "Operation not permitted",
        );
        h.denied(
            "syscall",
            &["name=socket_packet", "pid=0"],
            "Address family not supported",
        );
        h.denied(
            "syscall",
            &["name=unix_abstract", "pid=0", &format!("arg={name}")],
            "Connection refused",
        );
        assert!(
            unix.accept().is_err(),
            "the tool reached a host unix socket"
        );
    }
    let fast_open = ["name=tcp_fastopen", "pid=0", &format!("arg={port}")];
    offline.denied("syscall", &fast_open, "Network is unreachable");
    networked.denied("syscall", &fast_open, "Operation not supported");
    match tcp.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("TCP Fast Open reached the host: {other:?}"),
    }
    networked.allowed(
        "tcp_connect",
        &["host=127.0.0.1", &format!("port={port}")],
        "connected",
    );
    assert!(took_a_connection(&tcp));
}

/// Accepts on `listener` (non-blocking) until `stop` is set and nothing is pending: the
/// number of connections.
fn count_connections(
    listener: TcpListener,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut n = 0;
        loop {
            match listener.accept() {
                Ok(_) => n += 1,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if stop.load(Ordering::SeqCst) {
                        return n;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => panic!("accept: {e}"),
            }
        }
    })
}

/// Review row 21: the connect() race. One thread of the tool keeps rewriting the address
/// the other hands `connect()`, between one it may reach (127.0.0.2, opened with
/// `network_private`) and one it may not (127.0.0.3); the supervisor decides on its own
/// copy, so over a thousand connects the host's listener at the refused address gets none,
/// and each connect that succeeded reached the allowed one.
#[test]
fn a_connect_whose_address_changes_mid_call_never_reaches_a_refused_host() {
    let (allowed, refused, port) =
        listeners_on_one_port([127, 0, 0, 2].into(), [127, 0, 0, 3].into());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let allowed = count_connections(allowed, stop.clone());
    let refused = count_connections(refused, stop.clone());
    let h = Host::new(&format!(
        "[sandbox]\nnetwork_allow = [\"connect_race\"]\nnetwork_ports = [{port}]\nnetwork_private = [\"127.0.0.2/32\"]\n"
    ));
    let out = h.allowed(
        "connect_race",
        &[
            "allowed=127.0.0.2",
            "refused=127.0.0.3",
            &format!("port={port}"),
            "tries=1000",
        ],
        "connected=",
    );
    stop.store(true, Ordering::SeqCst);
    let (allowed, refused) = (allowed.join().unwrap(), refused.join().unwrap());
    assert_eq!(
        refused, 0,
        "the refused address got {refused} connections: {out}"
    );
    let outcomes: Vec<(&str, usize)> = out
        .split_whitespace()
        .filter_map(|o| o.split_once('='))
        .map(|(k, v)| (k, v.parse().unwrap()))
        .collect();
    let count = |k: &str| {
        outcomes
            .iter()
            .filter(|o| o.0 == k)
            .map(|o| o.1)
            .sum::<usize>()
    };
    assert!(count("connected") > 0, "{out}");
    assert_eq!(allowed, count("connected"), "{out}");
    // The refused address was tried: it ended at the sandbox's own loopback, or refused.
    assert!(count("ECONNREFUSED") + count("EACCES") > 0, "{out}");
    assert_eq!(outcomes.iter().map(|o| o.1).sum::<usize>(), 1000, "{out}");
}
