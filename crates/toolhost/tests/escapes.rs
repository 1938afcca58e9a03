//! The sandbox's escape suite: tools written to break out, run through `toolhost call`.
//! Every attempt must fail; the same tool code must succeed at the allowed variant, so
//! that a test cannot pass because the tool itself is broken.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]
#![allow(clippy::unwrap_used)]

use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
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
}

impl Host {
    fn new(config: &str) -> Host {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = dir.path().join("data");
        for user in [USER, "bob@example.com"] {
            std::fs::create_dir_all(data.join(user)).unwrap();
        }
        std::fs::write(data.join(USER).join("mine.txt"), "ada's own notes").unwrap();
        std::fs::write(data.join("bob@example.com/secret.txt"), "bob's secret").unwrap();
        let path = dir.path().join("toolhost.toml");
        std::fs::write(&path, config).unwrap();
        Host {
            config: path,
            tools: escapes(),
            dir,
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `toolhost call TOOL ARGS…` as ada; (exit status, stdout, stderr).
    fn call(&self, tool: &str, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLHOST_CONFIG")
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .args(["call", tool, "--timeout", "20", "--config"])
            .arg(&self.config)
            .arg("--tools-dir")
            .arg(&self.tools)
            .arg("--data")
            .arg(self.data())
            .args(["--user", USER])
            .args(args)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        (out.status.code().unwrap_or(-1), stdout, stderr)
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

// --- The file system ---

#[test]
fn cannot_read_etc_shadow() {
    let h = strict();
    h.denied("read_file", &["path=/etc/shadow"], "ENOENT");
    h.allowed("read_file", &["path=/etc/hosts"], "localhost");
}

#[test]
fn sees_no_host_accounts_in_etc_passwd() {
    let h = strict();
    let passwd = h.allowed("read_file", &["path=/etc/passwd"], "root:x:0:0");
    let host = std::fs::read_to_string("/etc/passwd").unwrap();
    let hidden = host
        .lines()
        .filter_map(|l| l.split(':').next())
        .find(|u| !["root", "nobody"].contains(u));
    if let Some(user) = hidden {
        assert!(!passwd.contains(&format!("{user}:")), "{passwd}");
    }
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
    h.denied("write_file", &["path=/proc/sysrq-trigger"], "E");
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
    let h = strict();
    // A link someone placed in the folder to a file only root may read.
    let secret = h.dir.path().join("root-only.txt");
    std::fs::write(&secret, "root only").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (root, tool) = own_read_file(&h);
    std::fs::hard_link(&secret, tool.join("linked")).unwrap();
    let h = Host { tools: root, ..h };
    if rustix::process::getuid().is_root() {
        h.denied("read_file", &["path=linked"], "EACCES");
    }
    h.allowed("read_file", &["path=inside.txt"], "inside the folder");
    // And a tool cannot make a link from its writable space to files it may only read.
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

/// Review row 14: on a root host a user's home is handed to that user's tool uid before
/// the first call, without following links: a root-owned host file and folder behind
/// links placed in the home keep their owner, and only the links change hands.
#[test]
fn handing_a_home_to_its_tool_uid_never_follows_a_link() {
    use std::os::unix::fs::MetadataExt;
    assert!(
        rustix::process::getuid().is_root(),
        "this test needs root: only a root host runs each user as its own uid and hands homes over"
    );
    let h = strict();
    let host_file = h.dir.path().join("host-binary");
    std::fs::write(&host_file, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&host_file, std::fs::Permissions::from_mode(0o755)).unwrap();
    let host_dir = h.dir.path().join("host-dir");
    std::fs::create_dir(&host_dir).unwrap();
    std::fs::write(host_dir.join("inner.conf"), "host config").unwrap();
    let home = h.data().join(USER);
    let links = ["bin", "lib", "rel"];
    std::os::unix::fs::symlink(&host_file, home.join("bin")).unwrap();
    std::os::unix::fs::symlink(&host_dir, home.join("lib")).unwrap();
    std::os::unix::fs::symlink("../../host-binary", home.join("rel")).unwrap();
    assert_eq!(std::fs::metadata(&home).unwrap().uid(), 0);

    h.allowed("list_dir", &["path=/officer/user"], "mine.txt");
    let uid = std::fs::metadata(&home).unwrap().uid();
    assert_ne!(uid, 0, "the home was not handed to the user's tool uid");
    assert_eq!(std::fs::metadata(home.join("mine.txt")).unwrap().uid(), uid);
    for link in links {
        let meta = std::fs::symlink_metadata(home.join(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link}");
        assert_eq!(meta.uid(), uid, "the link {link} itself changes hands");
    }
    for host in [&host_file, &host_dir, &host_dir.join("inner.conf")] {
        let meta = std::fs::metadata(host).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid()),
            (0, 0),
            "{} behind a link was handed over",
            host.display()
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

#[test]
fn a_fork_bomb_is_contained() {
    let h = Host::new("[sandbox]\nmax_processes = 64\n");
    let started = Instant::now();
    let (_, stdout, stderr) = h.call("fork_many", &["n=100000"]);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{stdout}{stderr}"
    );
    let count: usize = stdout
        .trim()
        .strip_prefix("started ")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        count < 64,
        "the process limit did not hold: {stdout}{stderr}"
    );
    // Nothing of the bomb outlives the call.
    std::thread::sleep(Duration::from_millis(200));
    let left = Command::new("pgrep")
        .args(["-f", "fork-many-"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&left.stdout).trim().is_empty());
    h.allowed("fork_many", &["n=3"], "started 3");
}

#[test]
fn a_memory_bomb_is_contained() {
    let h = strict();
    if !cgroups_enforced() {
        eprintln!("skipped: no cgroups on this machine");
        return;
    }
    h.denied("hog_memory", &["mb=1024"], "killed");
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
    // Without the network there is no loopback at all.
    strict().denied("tcp_connect", &to, "E");
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
    let h = strict();
    h.denied("resolve", &["host=example.com"], "example.com");
    h.denied("tcp_connect", &["host=1.1.1.1", "port=443"], "E");
    h.allowed("resolve", &["host=localhost"], "127.0.0.1");
}

#[test]
fn a_networked_tool_resolves_names_through_the_sandboxs_relay() {
    let dns = dns_server();
    let h = networked(&format!("dns = [\"{dns}\"]"));
    h.allowed("resolve", &["host=tool.example.test"], "203.0.113.7");
    // Without the network, no name resolves.
    strict().denied("resolve", &["host=tool.example.test"], "tool.example.test");
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
    h.denied(
        "tcp_connect",
        &["host=127.0.0.1", &format!("port={port}")],
        "E",
    );
}

fn cgroups_enforced() -> bool {
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["sandbox", "status", "--json"])
        .env_remove("TOOLHOST_CONFIG")
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    status["layers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["name"] == "cgroups" && l["available"] == true)
}
