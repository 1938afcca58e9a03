//! A whole fleet on loopback, as real processes: one PostgreSQL, one `nats-server` (with a
//! user per role), gateways (`toolhost serve --nats`) and runners (`toolhost runner`).
//! Every process is stopped by its process id when the test ends, passing or failing.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::stderr::Collected;
use crate::common::{Fixture, Server, copy_dir};

/// The password every NATS user of the test has (one per role and runner).
pub const PASSWORD: &str = "fleet-test-password";

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, what: &str) {
    let until = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(pid: u32, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// `program`, killed if the test's thread ends without stopping it (a test killed for
/// its time, say): `setpriv --pdeathsig` sets that up and becomes the program, same pid.
fn dies_with_the_test(program: &Path) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args(["--pdeathsig", "KILL", "--"]).arg(program);
    cmd
}

/// A throwaway PostgreSQL of this test's, in a temporary folder.
pub struct Postgres {
    dir: tempfile::TempDir,
    /// The postmaster, while it runs.
    server: std::sync::Mutex<Option<Child>>,
    bin: PathBuf,
    port: u16,
    as_user: Option<String>,
    pub url: String,
}

impl Postgres {
    pub fn start() -> Postgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is missing: scripts/test installs Debian's postgresql")
            .flatten()
            .map(|e| e.path().join("bin"))
            .filter(|p| p.join("initdb").exists())
            .max()
            .expect("no PostgreSQL binaries under /usr/lib/postgresql");
        let dir = tempfile::tempdir().unwrap();
        let as_user = rustix::process::getuid().is_root().then(|| {
            let ok = Command::new("id")
                .arg("postgres")
                .output()
                .is_ok_and(|o| o.status.success());
            if ok { "postgres" } else { "nobody" }.to_string()
        });
        if let Some(user) = &as_user {
            Command::new("chown")
                .arg(user)
                .arg(dir.path())
                .status()
                .unwrap();
        }
        let port = free_port();
        let pg = Postgres {
            url: format!("postgres://toolhost@127.0.0.1:{port}/postgres"),
            dir,
            server: std::sync::Mutex::new(None),
            bin,
            port,
            as_user,
        };
        let out = pg
            .command("initdb")
            .arg("-D")
            .arg(pg.data())
            .args(["-U", "toolhost", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.up();
        pg
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = match &self.as_user {
            Some(user) => {
                let gid = String::from_utf8(
                    Command::new("id")
                        .args(["-g", user])
                        .output()
                        .unwrap()
                        .stdout,
                )
                .unwrap();
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={user}"))
                    .arg(format!("--regid={}", gid.trim()))
                    .arg("--clear-groups")
                    .args(["--pdeathsig", "KILL", "--"])
                    .arg(self.bin.join(program));
                c
            }
            None => dies_with_the_test(&self.bin.join(program)),
        };
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Runs the server as this test's child (killed with the test should it end
    /// without stopping it), and waits until it listens.
    fn up(&self) {
        let log = std::fs::File::create(self.dir.path().join("server.log")).unwrap();
        let child = self
            .command("postgres")
            .arg("-D")
            .arg(self.data())
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-p",
                &self.port.to_string(),
            ])
            .arg("-c")
            .arg(format!(
                "unix_socket_directories={}",
                self.dir.path().display()
            ))
            .args(["-c", "fsync=off", "-c", "max_connections=200"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        *self.server.lock().unwrap() = Some(child);
        let until = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let exited = self
                .server
                .lock()
                .unwrap()
                .as_mut()
                .unwrap()
                .try_wait()
                .unwrap();
            assert!(
                exited.is_none() && Instant::now() < until,
                "PostgreSQL did not start: {}",
                std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server (a fast shutdown, by its pid) and waits until it is gone.
    pub fn stop(&self) {
        let Some(mut child) = self.server.lock().unwrap().take() else {
            return;
        };
        signal(child.id(), rustix::process::Signal::INT);
        let until = Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops and starts it again on the same port.
    pub fn restart(&self) {
        self.stop();
        self.up();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

fn nats_server() -> PathBuf {
    ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("nats-server is missing: scripts/test installs Debian's nats-server")
}

/// A `nats-server` with the fleet's users: `gateway` (every gateway), `runner-N` for each
/// runner (its own subjects only) and `admin` (everything: the tests' monitor).
pub struct Nats {
    child: Option<Child>,
    conf: PathBuf,
    _dir: tempfile::TempDir,
    pub port: u16,
    pub url: String,
}

/// NATS permissions of a runner: its own subjects, and answering on inboxes.
pub fn runner_permissions(id: &str) -> String {
    format!(
        r#"{{ publish: ["_INBOX.>", "toolhost.runners.{id}", "toolhost.alive.*", "toolhost.bundle.get"],
              subscribe: ["toolhost.call.{id}", "toolhost.cancel.{id}.*", "_INBOX.{id}.>"] }}"#
    )
}

impl Nats {
    pub fn start(runners: usize) -> Nats {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut users = vec![
            format!(
                r#"{{ user: "gateway", password: "{PASSWORD}", permissions: {{
                   publish: ["toolhost.call.>", "toolhost.cancel.>", "toolhost.gateways.*", "toolhost.catalog.changed", "toolhost.sessions.relay", "toolhost.access.changed", "_INBOX.>"],
                   subscribe: ["_INBOX.>", "toolhost.runners.*", "toolhost.gateways.*", "toolhost.alive.*", "toolhost.bundle.get", "toolhost.catalog.changed", "toolhost.sessions.relay", "toolhost.access.changed"] }} }}"#
            ),
            format!(r#"{{ user: "admin", password: "{PASSWORD}" }}"#),
        ];
        for n in 1..=runners {
            let id = format!("runner-{n}");
            users.push(format!(
                r#"{{ user: "{id}", password: "{PASSWORD}", permissions: {} }}"#,
                runner_permissions(&id)
            ));
        }
        let config = format!(
            "listen: \"127.0.0.1:{port}\"\nmax_payload: 8MB\nauthorization {{\n  users = [\n{}\n  ]\n}}\n",
            users.join(",\n")
        );
        let conf = dir.path().join("nats.conf");
        std::fs::write(&conf, config).unwrap();
        let mut nats = Nats {
            child: None,
            conf,
            _dir: dir,
            port,
            url: format!("nats://127.0.0.1:{port}"),
        };
        nats.up();
        nats
    }

    /// `nats-server` with the configuration file `conf` as shipped (its passwords from the
    /// environment, all set to [`PASSWORD`]), on a loopback port of the test's.
    pub fn shipped(conf: &Path) -> Nats {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut nats = Nats {
            child: None,
            conf: conf.to_path_buf(),
            _dir: dir,
            port,
            url: format!("nats://127.0.0.1:{port}"),
        };
        nats.up();
        nats
    }

    fn up(&mut self) {
        // The command line's address wins over the file's (a shipped one listens widely).
        let child = dies_with_the_test(&nats_server())
            .arg("-c")
            .arg(&self.conf)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .env("GATEWAY_PASSWORD", PASSWORD)
            .env("RUNNER_PASSWORD", PASSWORD)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_for_port(self.port, "nats-server");
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn restart(&mut self) {
        self.stop();
        self.up();
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `toolhost runner`, killed by its pid when dropped.
pub struct RunnerProcess {
    pub id: String,
    pub child: Child,
    logs: Collected,
    /// Where it serves `/metrics` (runners).
    pub metrics: Option<String>,
}

impl RunnerProcess {
    /// Starts `cmd` (a node called `id`) and waits until its stderr says `ready`.
    fn spawn(mut cmd: Command, id: &str, ready: &str) -> RunnerProcess {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut before = String::new();
        loop {
            let mut line = String::new();
            let n = stderr.read_line(&mut line).unwrap();
            before += &line;
            assert!(n > 0, "{id} exited before saying {ready:?}:\n{before}");
            if line.contains(ready) {
                break;
            }
        }
        RunnerProcess {
            id: id.to_string(),
            child,
            logs: Collected::start(id, before, stderr),
            metrics: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn logs(&self) -> String {
        self.logs.text()
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn pause(&self) {
        signal(self.pid(), rustix::process::Signal::STOP);
    }

    pub fn resume(&self) {
        signal(self.pid(), rustix::process::Signal::CONT);
    }
}

impl Drop for RunnerProcess {
    fn drop(&mut self) {
        signal(self.pid(), rustix::process::Signal::CONT);
        self.kill();
    }
}

/// The fleet: its fixture (tools and homes shared by every node), store, NATS, gateways
/// and runners.
/// Fields drop in order: the nodes stop first (gateways flush their call logs to the
/// store), then NATS, the store, and the fixture's folders.
pub struct Cluster {
    pub gateways: Vec<Server>,
    pub runners: Vec<Option<RunnerProcess>>,
    /// `toolhost cluster publish --watch` over the fixture's tools.
    pub publisher: Option<RunnerProcess>,
    pub token: String,
    pub nats: Nats,
    pub pg: Postgres,
    pub f: Fixture,
}

impl Cluster {
    /// `gateways` gateways and `runners` runners (of `slots` calls each), every runner
    /// heard by every gateway before this returns.
    pub fn start(gateways: usize, runners: usize, slots: usize) -> Cluster {
        Cluster::start_with(gateways, runners, slots, true)
    }

    /// The same, with the fleet's own test tools (`effect`, `secretive`) beside the MCP
    /// fixture's `echo` and `slow`, or without them.
    pub fn start_with(gateways: usize, runners: usize, slots: usize, fleet_tools: bool) -> Cluster {
        Cluster::start_on(
            Nats::start(runners + 1),
            gateways,
            runners,
            slots,
            fleet_tools,
        )
    }

    /// The same on `nats`.
    pub fn start_on(
        nats: Nats,
        gateways: usize,
        runners: usize,
        slots: usize,
        fleet_tools: bool,
    ) -> Cluster {
        let f = Fixture::new();
        if fleet_tools {
            copy_dir(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fleet-tools"),
                &f.tools(),
            );
        }
        let pg = Postgres::start();
        let mut cluster = Cluster {
            f,
            pg,
            nats,
            gateways: Vec::new(),
            runners: Vec::new(),
            publisher: None,
            token: String::new(),
        };
        cluster.publisher = Some(cluster.start_publisher());
        for n in 1..=runners {
            let runner = cluster.start_runner(n, slots);
            cluster.runners.push(Some(runner));
        }
        for n in 1..=gateways {
            let gateway = cluster.start_gateway(n);
            if n == 1 {
                cluster.token = crate::stored::admin_token(&gateway.logs());
            }
            cluster.gateways.push(gateway);
        }
        cluster.await_runners(runners);
        cluster
    }

    pub fn start_runner(&self, n: usize, slots: usize) -> RunnerProcess {
        let id = format!("runner-{n}");
        let mut cmd = self.node();
        cmd.args([
            "runner",
            "--nats",
            &self.nats.url,
            "--node",
            &id,
            "--listen",
            "127.0.0.1:0",
        ])
        .arg("--data")
        .arg(self.f.data())
        .args(["--slots", &slots.to_string()])
        .env("TOOLHOST_NATS_PASSWORD", PASSWORD)
        // A runner is never told where the database is (the test's own environment may
        // name one).
        .env_remove("TOOLHOST_DATABASE_URL")
        .env_remove("TOOLHOST_TEST_DATABASE_URL")
        // Each runner its own cache, as on its own machine.
        .env(
            "XDG_CACHE_HOME",
            self.f.dir.path().join(format!("cache-{id}")),
        );
        let mut process = RunnerProcess::spawn(cmd, &id, "taking up to");
        process.metrics = process
            .logs()
            .split("metrics at http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .map(str::to_string);
        process
    }

    /// `toolhost` as a node of this fleet: the fixture's environment, and killed with the
    /// test should it end without stopping it.
    fn node(&self) -> Command {
        let mut cmd = dies_with_the_test(Path::new(env!("CARGO_BIN_EXE_toolhost")));
        self.f.environment(&mut cmd);
        cmd
    }

    /// `toolhost cluster publish --watch` of the fixture's tools, once it watches.
    pub fn start_publisher(&self) -> RunnerProcess {
        let mut cmd = self.node();
        cmd.args([
            "cluster",
            "publish",
            "--watch",
            "--nats",
            &self.nats.url,
            "--node",
            "publisher",
        ])
        .arg("--data")
        .arg(self.f.data())
        .args(["--database", &self.pg.url])
        .env("TOOLHOST_NATS_PASSWORD", PASSWORD);
        RunnerProcess::spawn(cmd, "publisher", "watching the tool roots")
    }

    pub fn start_gateway(&self, n: usize) -> Server {
        let mut cmd = self.node();
        cmd.args([
            "serve",
            "--nats",
            &self.nats.url,
            "--node",
            &format!("gateway-{n}"),
        ])
        .arg("--data")
        .arg(self.f.data())
        .args(["--database", &self.pg.url])
        .env("TOOLHOST_NATS_PASSWORD", PASSWORD)
        .env(
            "XDG_CACHE_HOME",
            self.f.dir.path().join(format!("cache-gateway-{n}")),
        );
        Server::start(cmd)
    }

    /// Waits until every gateway has heard `n` runners (their `cluster` status).
    pub fn await_runners(&self, n: usize) {
        let until = Instant::now() + Duration::from_secs(20);
        for g in &self.gateways {
            loop {
                let status = self.status(g);
                let heard = status["runners"].as_array().map_or(0, Vec::len);
                if heard == n {
                    break;
                }
                assert!(
                    Instant::now() < until,
                    "gateway at {} heard {heard} runners, not {n}: {status}",
                    g.addr
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// `GET /api/v1/cluster` of gateway `g`.
    pub fn status(&self, g: &Server) -> serde_json::Value {
        let api = crate::api_client::Api {
            addr: &g.addr,
            token: Some(self.token.clone()),
        };
        let r = api.request("GET", "/cluster", None);
        assert_eq!(r.status, 200, "{}", r.body);
        crate::api_client::json_of(&r)
    }

    /// The lines of the side-effect log of the admin user.
    pub fn effects(&self) -> Vec<String> {
        std::fs::read_to_string(self.f.home("admin").join("effects.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub fn runner(&mut self, id: &str) -> &mut RunnerProcess {
        self.runners
            .iter_mut()
            .flatten()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("no runner {id}"))
    }
}

/// Makes `path` readable by tools' own users (sandboxed tools run as other uids).
pub fn world_readable(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A bare NATS client (the protocol is lines of text): what a test needs to check the
/// server's answers to a login and subscriptions, and to watch every message as admin.
pub struct RawNats {
    stream: std::net::TcpStream,
    reader: BufReader<std::net::TcpStream>,
}

impl RawNats {
    /// Connects as `user` (none: anonymously) and returns the server's first answer to
    /// `CONNECT` + `PING`: `PONG` when let in, else its `-ERR`.
    pub fn login(port: u16, user: Option<&str>, password: &str) -> (RawNats, String) {
        let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut raw = RawNats {
            reader: BufReader::new(stream.try_clone().unwrap()),
            stream,
        };
        let info = raw.line();
        assert!(info.starts_with("INFO "), "{info}");
        let connect = match user {
            Some(u) => serde_json::json!({"verbose": false, "pedantic": false, "headers": true,
                "user": u, "pass": password}),
            None => serde_json::json!({"verbose": false, "pedantic": false, "headers": true}),
        };
        raw.send(&format!("CONNECT {connect}\r\nPING\r\n"));
        let answer = raw.line();
        (raw, answer)
    }

    pub fn send(&mut self, text: &str) {
        use std::io::Write;
        self.stream.write_all(text.as_bytes()).unwrap();
    }

    /// The next protocol line, without its line end.
    pub fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    }

    /// The server's answer to `SUB subject` followed by `PING`: its lines up to the
    /// `PONG` (an `-ERR` comes first when the subscription is refused).
    pub fn subscribe(&mut self, subject: &str, sid: u32) -> String {
        self.send(&format!("SUB {subject} {sid}\r\nPING\r\n"));
        let mut answer = Vec::new();
        loop {
            let line = self.line();
            match line.as_str() {
                "PING" => self.send("PONG\r\n"),
                "PONG" => {
                    answer.push(line);
                    return answer.join("\n");
                }
                _ => answer.push(line),
            }
        }
    }

    /// Reads messages for `within`: each as (subject, headers, body).
    pub fn messages(&mut self, within: Duration) -> Vec<(String, String, String)> {
        use std::io::Read;
        self.stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let until = Instant::now() + within;
        let mut out = Vec::new();
        while Instant::now() < until {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => continue,
            }
            let line = line.trim_end().to_string();
            let parts: Vec<&str> = line.split(' ').collect();
            match parts.first().copied() {
                Some("PING") => self.send("PONG\r\n"),
                Some("MSG") => {
                    let size: usize = parts.last().unwrap().parse().unwrap();
                    let mut body = vec![0; size + 2];
                    self.reader.read_exact(&mut body).unwrap();
                    body.truncate(size);
                    out.push((
                        parts[1].to_string(),
                        String::new(),
                        String::from_utf8_lossy(&body).into_owned(),
                    ));
                }
                Some("HMSG") => {
                    let n = parts.len();
                    let header_size: usize = parts[n - 2].parse().unwrap();
                    let total: usize = parts[n - 1].parse().unwrap();
                    let mut all = vec![0; total + 2];
                    self.reader.read_exact(&mut all).unwrap();
                    all.truncate(total);
                    out.push((
                        parts[1].to_string(),
                        String::from_utf8_lossy(&all[..header_size]).into_owned(),
                        String::from_utf8_lossy(&all[header_size..]).into_owned(),
                    ));
                }
                _ => {}
            }
        }
        out
    }
}
