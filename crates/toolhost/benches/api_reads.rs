//! API reads at scale, on SQLite and PostgreSQL: 10,000 tools (100 tool roots of 100
//! tools, each root a tool set), 100,000 call-log rows, 200 agents, 21 users.
//!
//! The store is filled through the store's own paths (`insert_calls` in batches,
//! `create_agent`, `put_user`, `create_token`), then the real `toolhost serve --database`
//! is started over it (sandbox off: no tool runs) and one keep-alive HTTP/1.1 connection
//! sends the reads in turn, round after round, so that every read meets the same machine
//! noise. Reported: p50 and p99 of each read and their ratios to `GET /api/v1/healthz`
//! (no token, one `SELECT 1`), measured in the same rounds. Goal (the control-plane
//! issue): p50 <= 2 ms, p99 <= 10 ms.
//!
//! PostgreSQL is measured when `TOOLHOST_TEST_DATABASE_URL` is set (`source
//! scripts/postgres.sh`), in a database of its own created here; otherwise only SQLite is,
//! and the output says so.
//!
//! Run: `cargo bench -p toolhost --bench api_reads` (`-- --quick` for fewer rounds,
//! `-- --rounds N`).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use sqlx::Connection;
use toolhost_store::{
    AgentSpec, CallRow, GrantSpec, Location, NewToken, Outcome, Role, Rule, Scope, Store,
};

const SETS: usize = 100;
const TOOLS_PER_SET: usize = 100;
const TOOLS: usize = SETS * TOOLS_PER_SET;
const CALLS: usize = 100_000;
const AGENTS: usize = 200;
const USERS: usize = 20;
/// The calls span the last 30 days.
const SPAN_MS: i64 = 30 * 24 * 3600 * 1000;
/// The deep page starts this many rows from the newest.
const DEEP: usize = 95_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(if args.iter().any(|a| a == "--quick") {
            150
        } else {
            1000
        });
    let dir = tempfile::tempdir().unwrap();
    let roots = generate_roots(&dir.path().join("roots"));
    let config = dir.path().join("toolhost.toml");
    // No tool runs here: the sandbox (and its spare helpers) would only add noise.
    std::fs::write(&config, "[sandbox]\nenabled = false\n").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let mut engines = vec![(
        "SQLite",
        Location::Sqlite(dir.path().join("sqlite/toolhost.db")),
    )];
    let postgres = std::env::var("TOOLHOST_TEST_DATABASE_URL").ok();
    match &postgres {
        Some(url) => engines.push((
            "PostgreSQL",
            Location::Postgres(rt.block_on(fresh_postgres(url))),
        )),
        None => eprintln!(
            "PostgreSQL not measured: TOOLHOST_TEST_DATABASE_URL is not set (source \
             scripts/postgres.sh, or run scripts/test); SQLite only"
        ),
    }
    println!(
        "API reads: {TOOLS} tools in {SETS} tool sets, {CALLS} calls, {AGENTS} agents, \
         {} users; {rounds} rounds of every read on one keep-alive connection",
        USERS + 1
    );
    for (engine, location) in engines {
        let t = Instant::now();
        let data = rt.block_on(fill(location.clone()));
        eprintln!(
            "{engine}: store filled in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        let server = Serve::start(dir.path(), &config, &roots, &location);
        eprintln!(
            "{engine}: serve listening in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let reads = reads(&data);
        let mut client = Client::connect(&server.addr);
        for read in &reads {
            check(read, &mut client, &data);
        }
        let samples = measure(&mut client, &reads, rounds);
        report(engine, &reads, &samples);
        drop(client);
        server.stop();
    }
}

/// What the reads need to know of the data.
struct Data {
    admin: String,
    viewer: String,
    /// The call id `DEEP` rows from the newest.
    deep_cursor: String,
    /// A tool with few calls, and how many.
    rare_tool: (String, usize),
    /// The tool with the most calls.
    hot_tool: String,
    agent: String,
    user: String,
    viewer_calls: usize,
    timeouts: usize,
    /// A week before the newest call (ms).
    week_ago: i64,
}

struct ApiRead {
    label: &'static str,
    path: String,
    token: Option<String>,
}

fn reads(d: &Data) -> Vec<ApiRead> {
    let admin = Some(d.admin.clone());
    let r = |label, path: String, token: &Option<String>| ApiRead {
        label,
        path: format!("/api/v1{path}"),
        token: token.clone(),
    };
    vec![
        r("GET /healthz (baseline)", "/healthz".into(), &None),
        r("GET /tool-sets", "/tool-sets".into(), &admin),
        r("GET /calls?limit=50", "/calls?limit=50".into(), &admin),
        r(
            "GET /calls, a deep page (cursor)",
            format!("/calls?limit=50&cursor={}", d.deep_cursor),
            &admin,
        ),
        r(
            "GET /calls?tool= (rare tool)",
            format!("/calls?limit=50&tool={}", d.rare_tool.0),
            &admin,
        ),
        r(
            "GET /calls?tool= (hot tool)",
            format!("/calls?limit=50&tool={}", d.hot_tool),
            &admin,
        ),
        r(
            "GET /calls?agent=",
            format!("/calls?limit=50&agent={}", d.agent),
            &admin,
        ),
        r(
            "GET /calls?outcome=timeout",
            "/calls?limit=50&outcome=timeout".into(),
            &admin,
        ),
        r(
            "GET /calls?user=",
            format!("/calls?limit=50&user={}", d.user),
            &admin,
        ),
        r(
            "GET /calls?tool=&outcome=error",
            format!("/calls?limit=50&tool={}&outcome=error", d.hot_tool),
            &admin,
        ),
        r(
            "GET /calls?until= (a week ago)",
            format!("/calls?limit=50&until={}", d.week_ago),
            &admin,
        ),
        r(
            "GET /calls as a viewer (own calls)",
            "/calls?limit=50".into(),
            &Some(d.viewer.clone()),
        ),
        r("GET /agents", "/agents".into(), &admin),
        r(
            "GET /agents?cursor= (page 3)",
            "/agents?cursor=agent-099".into(),
            &admin,
        ),
        r(
            "GET /agents/{id}/effective-tools",
            format!("/agents/{}/effective-tools", d.agent),
            &admin,
        ),
        r("GET /audit", "/audit?limit=50".into(), &admin),
    ]
}

/// Each read answers what it should (once, before measuring).
fn check(read: &ApiRead, client: &mut Client, d: &Data) {
    let (status, body) = client.get(&read.path, read.token.as_deref());
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    assert_eq!(
        status,
        200,
        "{}: {}",
        read.path,
        String::from_utf8_lossy(&body)
    );
    let items = json["items"].as_array().map_or(0, Vec::len);
    let all = |key: &str, want: &str| {
        json["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c[key] == want)
    };
    match read.label {
        "GET /tool-sets" => {
            let sets = json.as_array().unwrap();
            let tools: usize = sets
                .iter()
                .map(|s| s["tools"].as_array().unwrap().len())
                .sum();
            assert!(
                sets.len() >= SETS && tools >= TOOLS,
                "{} sets, {tools} tools",
                sets.len()
            );
        }
        "GET /calls?limit=50" | "GET /agents" | "GET /audit" => {
            assert!(items == 50 && json["next"].is_string(), "{json}");
        }
        "GET /agents?cursor= (page 3)" => {
            assert!(
                items == 50 && json["items"][0]["id"] == "agent-100",
                "{json}"
            );
        }
        "GET /calls, a deep page (cursor)" => {
            assert_eq!(items, 50);
            assert!(json["items"][0]["id"].as_str().unwrap() < d.deep_cursor.as_str());
        }
        "GET /calls?tool= (rare tool)" => {
            assert_eq!(items, d.rare_tool.1.min(50));
            assert!(all("tool", &d.rare_tool.0));
        }
        "GET /calls?tool= (hot tool)" => assert!(items == 50 && all("tool", &d.hot_tool)),
        "GET /calls?agent=" => assert!(items > 0 && all("agent", &d.agent)),
        "GET /calls?outcome=timeout" => {
            assert!(items == d.timeouts.min(50) && all("outcome", "timeout"))
        }
        "GET /calls?user=" => assert!(items == 50 && all("user", &d.user)),
        "GET /calls?tool=&outcome=error" => {
            assert!(items > 0 && all("tool", &d.hot_tool) && all("outcome", "error"))
        }
        "GET /calls?until= (a week ago)" => assert!(
            items == 50
                && json["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|c| c["started_at"].as_i64().unwrap() < d.week_ago)
        ),
        "GET /calls as a viewer (own calls)" => {
            assert!(items == d.viewer_calls.min(50) && all("user", "viewer@example.com"))
        }
        "GET /agents/{id}/effective-tools" => {
            assert!(
                json["tools"].as_array().unwrap().len() >= TOOLS_PER_SET,
                "{json}"
            )
        }
        _ => {}
    }
}

fn measure(client: &mut Client, reads: &[ApiRead], rounds: usize) -> Vec<Vec<Duration>> {
    let mut samples = vec![Vec::with_capacity(rounds); reads.len()];
    let warm = rounds / 10 + 5;
    for round in 0..warm + rounds {
        for (i, read) in reads.iter().enumerate() {
            let t = Instant::now();
            let (status, _) = client.get(&read.path, read.token.as_deref());
            let took = t.elapsed();
            assert_eq!(status, 200, "{}", read.path);
            if round >= warm {
                samples[i].push(took);
            }
        }
    }
    samples
}

fn report(engine: &str, reads: &[ApiRead], samples: &[Vec<Duration>]) {
    let stats: Vec<(f64, f64)> = samples
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.sort();
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            (ms(s[s.len() / 2]), ms(s[s.len() * 99 / 100]))
        })
        .collect();
    let (base50, base99) = stats[0];
    println!("\n{engine}:");
    println!(
        "  {:<36} {:>8} {:>8} {:>9} {:>9}  goal (p50 <= 2 ms, p99 <= 10 ms)",
        "read", "p50 ms", "p99 ms", "p50 ×base", "p99 ×base"
    );
    for (read, (p50, p99)) in reads.iter().zip(&stats) {
        let goal = if *p50 <= 2.0 && *p99 <= 10.0 {
            "ok"
        } else {
            "MISSED"
        };
        println!(
            "  {:<36} {p50:>8.3} {p99:>8.3} {:>8.1}x {:>8.1}x  {goal}",
            read.label,
            p50 / base50,
            p99 / base99
        );
    }
}

/// `SETS` roots of `TOOLS_PER_SET` TypeScript tools, each root a tool set (`toolset.toml`).
fn generate_roots(dir: &Path) -> Vec<PathBuf> {
    let categories = ["Data", "Research", "Operations", "Writing", "Finance"];
    (0..SETS)
        .map(|s| {
            let root = dir.join(format!("set-{s:02}"));
            std::fs::create_dir_all(&root).unwrap();
            std::fs::write(
                root.join("toolset.toml"),
                format!(
                    "id = \"set-{s:02}\"\nname = \"Set {s:02}\"\ncategory = \"{}\"\ndescription = \"Generated tools, set {s}.\"\nicon = \"wrench\"\n",
                    categories[s % categories.len()]
                ),
            )
            .unwrap();
            for t in 0..TOOLS_PER_SET {
                let name = tool_name(s * TOOLS_PER_SET + t);
                let folder = root.join(&name);
                std::fs::create_dir_all(&folder).unwrap();
                std::fs::write(folder.join("TOOL.md"), tool_md(&name)).unwrap();
                std::fs::write(
                    folder.join("index.ts"),
                    "export async function execute() { return { content: [] }; }\n",
                )
                .unwrap();
            }
            root
        })
        .collect()
}

fn tool_name(index: usize) -> String {
    format!(
        "s{:02}_t{:02}",
        index / TOOLS_PER_SET,
        index % TOOLS_PER_SET
    )
}

/// A realistic TOOL.md (the catalog scan benchmark's): four inputs, a few paragraphs.
fn tool_md(name: &str) -> String {
    format!(
        "---\nname: {name}\nlabel: Tool {name}\ndescription: Looks things up in the {name} service. Use it when the user asks about {name} records.\nversion: 1\nlanguage: typescript\ninputs:\n  query:\n    type: string\n    description: What to look for.\n  limit:\n    type: number\n    description: Maximum number of results.\n    optional: true\n    default: 10\n  mode:\n    type: enum\n    values: fast,thorough\n    description: Search mode.\n    optional: true\n  token:\n    type: string\n    description: API token override.\n    optional: true\n    sensitive: true\n---\n\n# {name}\n\nSearches the service and returns matching records.\n"
    )
}

/// A new database on the PostgreSQL server at `url`.
async fn fresh_postgres(url: &str) -> String {
    let name = format!("bench_{}", toolhost_store::new_id());
    let mut admin = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    admin.close().await.unwrap();
    let mut parsed = url::Url::parse(url).unwrap();
    parsed.set_path(&name);
    parsed.to_string()
}

/// A small deterministic generator (splitmix64), so every run holds the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Users, tokens, agents (with their audit rows) and the call log.
async fn fill(location: Location) -> Data {
    let store = Store::open(location, None).await.unwrap();
    store
        .put_user("toolhost", "admin", Role::Admin)
        .await
        .unwrap();
    let token = |user: &str, scopes: Vec<Scope>| NewToken {
        name: format!("bench {user}"),
        user: user.into(),
        scopes,
        agent: None,
        expires_at: None,
    };
    let (_, admin) = store
        .create_token("toolhost", token("admin", Scope::ALL.to_vec()))
        .await
        .unwrap();
    let users: Vec<String> = (0..USERS)
        .map(|u| format!("user{u:02}@example.com"))
        .collect();
    for u in &users {
        store.put_user("admin", u, Role::Operator).await.unwrap();
    }
    store
        .put_user("admin", "viewer@example.com", Role::Viewer)
        .await
        .unwrap();
    let (_, viewer) = store
        .create_token("admin", token("viewer@example.com", vec![Scope::ToolsRead]))
        .await
        .unwrap();

    let mut rng = Rng(0x5eed);
    for a in 0..AGENTS {
        let grant = |set: usize| GrantSpec {
            tool_set: Some(format!("set-{set:02}")),
            ..GrantSpec::default()
        };
        let mut first = grant(a % SETS);
        first
            .rules
            .insert(tool_name((a % SETS) * TOOLS_PER_SET), Rule::Deny);
        let grants = vec![
            first,
            grant((a * 7 + 3) % SETS),
            GrantSpec {
                tool_set: Some("time".into()),
                ..GrantSpec::default()
            },
        ];
        let spec = AgentSpec {
            name: format!("Agent {a}"),
            description: "A generated agent.".into(),
            icon: Some("bot".into()),
            grants,
            ..AgentSpec::default()
        };
        store
            .create_agent(&users[a % USERS], &format!("agent-{a:03}"), spec)
            .await
            .unwrap();
    }

    // Calls over the last 30 days, oldest first. Tools are skewed (a few hot, a long
    // tail), 70 % as an agent, users skewed, outcomes mostly successes.
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    let mut per_tool: BTreeMap<usize, usize> = BTreeMap::new();
    let (mut viewer_calls, mut timeouts) = (0, 0);
    let mut rows = Vec::with_capacity(CALLS);
    let mut ids = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let started_at = now - SPAN_MS + (i as i64) * (SPAN_MS / CALLS as i64);
        let tool = ((rng.unit().powi(3)) * TOOLS as f64) as usize;
        *per_tool.entry(tool).or_default() += 1;
        let principal = if rng.below(200) == 0 {
            viewer_calls += 1;
            "viewer@example.com".to_string()
        } else {
            users[(rng.unit().powi(2) * USERS as f64) as usize].clone()
        };
        let agent = (rng.below(10) < 7).then(|| format!("agent-{:03}", rng.below(AGENTS)));
        let outcome = match rng.below(1000) {
            0..=899 => Outcome::Success,
            900..=969 => Outcome::Error,
            970..=989 => Outcome::Denied,
            990..=996 => Outcome::Cancelled,
            _ => Outcome::Timeout,
        };
        timeouts += usize::from(outcome == Outcome::Timeout);
        // The store's id format: 16 hex digits of time (ms << 16 | counter), 12 random.
        let stamp = ((started_at as u64) << 16) | (i as u64 & 0xffff);
        let id = format!("{stamp:016x}{:012x}", rng.next() & 0xffff_ffff_ffff);
        ids.push(id.clone());
        rows.push(CallRow {
            id,
            started_at,
            duration_ms: 5 + rng.below(2000) as i64,
            principal,
            token_id: Some(format!("{:012x}", rng.next() & 0xffff_ffff_ffff)),
            agent_id: agent,
            transport: "mcp-http".into(),
            tool: tool_name(tool),
            tool_set: Some(format!("set-{:02}", tool / TOOLS_PER_SET)),
            error: (outcome == Outcome::Error).then(|| "the service did not answer".into()),
            outcome,
            result_bytes: rng.below(20_000) as i64,
            arguments: format!(
                "{{\"query\":\"records about item {}\",\"limit\":{},\"token\":\"[sensitive]\"}}",
                rng.below(100_000),
                rng.below(50)
            ),
            result: None,
        });
    }
    for batch in rows.chunks(2000) {
        store.insert_calls(batch).await.unwrap();
    }
    store.close().await;
    // The rare tool: one with the fewest calls (at least one); the hot one: the most.
    let rare = per_tool.iter().min_by_key(|(_, n)| **n).unwrap();
    let hot = per_tool.iter().max_by_key(|(_, n)| **n).unwrap();
    Data {
        admin,
        viewer,
        deep_cursor: ids[CALLS - DEEP].clone(),
        rare_tool: (tool_name(*rare.0), *rare.1),
        hot_tool: tool_name(*hot.0),
        agent: "agent-042".into(),
        user: users[7].clone(),
        viewer_calls,
        timeouts,
        week_ago: now - 7 * 24 * 3600 * 1000,
    }
}

/// The real `toolhost serve --database` over the filled store, stopped by SIGTERM.
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    fn start(dir: &Path, config: &Path, roots: &[PathBuf], location: &Location) -> Serve {
        let database = match location {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(url) => url.clone(),
        };
        let log = dir.join(format!("serve-{}.log", std::process::id()));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        cmd.arg("serve")
            .args(["--listen", "127.0.0.1:0", "--database", &database])
            .arg("--config")
            .arg(config);
        for root in roots {
            cmd.arg("--tools-dir").arg(root);
        }
        let child = cmd
            .env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLHOST_DATABASE_URL")
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("XDG_DATA_HOME", dir.join("xdg-data"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(120);
        let mut server = Serve {
            child,
            addr: String::new(),
        };
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(rest) = text.split("serving MCP at http://").nth(1) {
                server.addr = rest.split("/mcp").next().unwrap().to_string();
                return server;
            }
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("serve exited ({status}) before listening:\n{text}");
            }
            assert!(
                Instant::now() < until,
                "serve did not listen within 120 s:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(mut self) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let _ = self.child.wait();
    }
}

/// A bare HTTP/1.1 client on one keep-alive connection.
struct Client {
    conn: BufReader<TcpStream>,
    request: Vec<u8>,
}

impl Client {
    fn connect(addr: &str) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        Client {
            conn: BufReader::with_capacity(256 * 1024, stream),
            request: Vec::with_capacity(512),
        }
    }

    /// `GET path`: the status and the body.
    fn get(&mut self, path: &str, token: Option<&str>) -> (u16, Vec<u8>) {
        self.request.clear();
        write!(self.request, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
        if let Some(t) = token {
            write!(self.request, "Authorization: Bearer {t}\r\n").unwrap();
        }
        self.request.extend_from_slice(b"\r\n");
        self.conn.get_mut().write_all(&self.request).unwrap();
        let mut line = String::new();
        self.conn.read_line(&mut line).unwrap();
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line: {line:?}"));
        let (mut length, mut chunked) = (None, false);
        loop {
            line.clear();
            self.conn.read_line(&mut line).unwrap();
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.trim().parse::<usize>().unwrap());
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.trim().eq_ignore_ascii_case("chunked");
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.conn.read_line(&mut line).unwrap();
                let size = usize::from_str_radix(line.trim(), 16).unwrap();
                let start = body.len();
                body.resize(start + size, 0);
                self.conn.read_exact(&mut body[start..]).unwrap();
                line.clear();
                self.conn.read_line(&mut line).unwrap();
                if size == 0 {
                    break;
                }
            }
        } else {
            body.resize(length.unwrap_or(0), 0);
            self.conn.read_exact(&mut body).unwrap();
        }
        (status, body)
    }
}
