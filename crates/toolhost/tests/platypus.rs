//! Platypus plugins loaded unmodified: every plugin of the corpus in
//! `tests/fixtures/plugins` (its README gives the expected behaviour this file asserts),
//! through `toolhost plugins`, `toolhost resolve`, `toolhost call --agent` and
//! `toolhost mcp --agent` (by hand, and with the official TypeScript SDK), `toolhost check`,
//! and edits reloading them.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use line_client::LineClient;
use serde_json::{Value, json};

/// The fixture's 1x1 red PNG (`model-output/index.js`, `PIXEL_PNG_BASE64`).
const PIXEL: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";
const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";
/// How long one `toolhost` process may take (boot with plugins takes 1-4 s).
const LIMIT: Duration = Duration::from_secs(45);
/// How long one MCP session may take in all.
const SESSION_LIMIT: Duration = Duration::from_secs(90);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plugins")
}

// --- a toolhost with plugins -----------------------------------------------------------

/// A temporary toolhost: its toolhost.toml, data directory and caches, and the plugins
/// `TOOLHOST_PLUGINS` names.
struct Host {
    dir: tempfile::TempDir,
    plugins: String,
    env: Vec<(String, String)>,
}

impl Host {
    /// `plugins`: fixture folder names, absolute paths, or `npm:NAME` for the package
    /// name `NAME` (resolved from `TOOLHOST_PLUGIN_DIR`'s `node_modules`).
    fn new(plugins: &[&str], config: &str) -> Host {
        // Plugins run on Node.js workers in the sandbox.
        common::machine::sandbox();
        let dir = tempfile::tempdir().unwrap();
        // Sandboxed workers run as their own uid on a root host: roots must be readable.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(dir.path().join("data/tools")).unwrap();
        std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
        let plugins = plugins
            .iter()
            .map(|p| match p.strip_prefix("npm:") {
                Some(name) => name.to_string(),
                None if p.starts_with('/') => p.to_string(),
                None => fixtures().join(p).display().to_string(),
            })
            .collect::<Vec<_>>()
            .join(",");
        Host {
            dir,
            plugins,
            env: Vec::new(),
        }
    }

    fn with_env(mut self, key: &str, value: &str) -> Host {
        self.env.push((key.into(), value.into()));
        self
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn data(&self) -> PathBuf {
        self.path().join("data")
    }

    /// `toolhost SUBCOMMAND --config … --data … ARGS…`.
    fn command(&self, subcommand: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        cmd.env_remove("PI_TOOLS_DIRS")
            .env_remove("TOOLHOST_CONFIG")
            .env_remove("TOOLHOST_LOG")
            .env_remove("TOOLHOST_LOG_FILE")
            .env_remove("TOOLHOST_PLUGIN_DIR")
            .env_remove("TOOLHOST_DATABASE_URL")
            .env("TOOLHOST_PLUGINS", &self.plugins)
            .env("XDG_CACHE_HOME", self.path().join("cache"))
            .env("XDG_DATA_HOME", self.path().join("xdg-data"))
            .arg(subcommand)
            .arg("--config")
            .arg(self.path().join("toolhost.toml"))
            .arg("--data")
            .arg(self.data())
            .args(args);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    fn run(&self, subcommand: &str, args: &[&str]) -> Run {
        run(self.command(subcommand, args))
    }

    /// `toolhost call --agent a --json TOOL --args ARGS`: the result, and the run.
    fn call(&self, tool: &str, args: Value) -> (Value, Run) {
        self.call_as("a", &[], tool, args)
    }

    fn call_as(&self, agent: &str, extra: &[&str], tool: &str, args: Value) -> (Value, Run) {
        let args = args.to_string();
        let mut all = vec!["--agent", agent, "--json"];
        all.extend_from_slice(extra);
        all.extend_from_slice(&[tool, "--args", &args]);
        let r = self.run("call", &all);
        let value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("`call {tool}` printed no JSON result ({e}): {r}"));
        (value, r)
    }

    /// `toolhost resolve --agent a --json ARGS…`: the turn.
    fn resolve(&self, args: &[&str]) -> (Value, Run) {
        let mut all = vec!["--agent", "a", "--json"];
        all.extend_from_slice(args);
        let r = self.run("resolve", &all);
        assert_eq!(r.code, Some(0), "resolve failed: {r}");
        (serde_json::from_str(&r.stdout).unwrap(), r)
    }

    /// `toolhost mcp --agent a ARGS…`, initialized.
    fn mcp(&self, args: &[&str]) -> Session {
        let mut all = vec!["--agent", "a"];
        all.extend_from_slice(args);
        let client = LineClient::start(self.command("mcp", &all));
        let dog = Watchdog::new(client.id(), SESSION_LIMIT, "toolhost mcp");
        let mut s = Session {
            client,
            _dog: dog,
            next: 1,
        };
        let init = s.client.initialize("2025-11-25");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        s
    }
}

/// A finished `toolhost` process.
struct Run {
    code: Option<i32>,
    stdout: String,
    /// Without ANSI colours.
    stderr: String,
    took: Duration,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?} after {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.took, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` to its end, killing it (and failing) past [`LIMIT`].
fn run(mut cmd: Command) -> Run {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut from: Box<dyn Read + Send>| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = from.read_to_end(&mut bytes);
            let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
        });
        rx
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = err.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
            panic!(
                "{cmd:?} ran longer than {LIMIT:?}: killed\n{}",
                strip_ansi(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = started.elapsed();
    // A grandchild left holding a pipe only cuts what is read.
    let stdout = out.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    let stderr = err.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    let stderr = strip_ansi(&stderr);
    assert!(!stderr.contains("panicked"), "toolhost panicked:\n{stderr}");
    Run {
        code: status.code(),
        stdout,
        stderr,
        took,
    }
}

type Job<'a, T> = Box<dyn FnOnce() -> T + Send + 'a>;

fn job<'a, T>(f: impl FnOnce() -> T + Send + 'a) -> Job<'a, T> {
    Box::new(f)
}

/// Runs every job at most three at a time (each one a `toolhost` process); their
/// results in order.
fn parallel<T: Send>(jobs: Vec<Job<'_, T>>) -> Vec<T> {
    let mut out = Vec::new();
    let mut jobs = jobs.into_iter().peekable();
    while jobs.peek().is_some() {
        let batch: Vec<_> = jobs.by_ref().take(3).collect();
        std::thread::scope(|s| {
            let running: Vec<_> = batch.into_iter().map(|job| s.spawn(job)).collect();
            for h in running {
                out.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
        });
    }
    out
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Kills process `pid` if it outlives `limit` (dropping the watchdog disarms it).
struct Watchdog(#[allow(dead_code)] mpsc::Sender<()>);

impl Watchdog {
    fn new(pid: u32, limit: Duration, what: &'static str) -> Watchdog {
        let (tx, rx) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                eprintln!("watchdog: {what} (pid {pid}) ran longer than {limit:?}: killing it");
                if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
        });
        Watchdog(tx)
    }
}

/// An MCP session over `toolhost mcp --agent a`.
struct Session {
    client: LineClient,
    _dog: Watchdog,
    next: u64,
}

impl Session {
    fn id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// `tools/list`: the tools (this begins a new turn).
    fn list(&mut self) -> Vec<Value> {
        let id = self.id();
        let r = self
            .client
            .ask(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        r["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .clone()
    }

    /// `tools/call`: the whole answer, and the notifications that came before it.
    fn call_collecting(
        &mut self,
        name: &str,
        args: Value,
        token: Option<&str>,
    ) -> (Value, Vec<Value>) {
        let id = self.id();
        let mut params = json!({"name": name, "arguments": args});
        if let Some(token) = token {
            params["_meta"] = json!({"progressToken": token});
        }
        self.client.ask_collecting(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        )
    }

    /// `tools/call` that must answer with a result (not a JSON-RPC error), and with no
    /// notification before it: the result.
    fn call(&mut self, name: &str, args: Value) -> Value {
        let (answer, before) = self.call_collecting(name, args.clone(), None);
        assert!(
            before.is_empty(),
            "{name} {args}: unexpected messages {before:?}"
        );
        assert!(
            answer["result"].is_object(),
            "{name} {args}: no result: {answer}"
        );
        answer["result"].clone()
    }

    fn close(self) {
        assert!(self.client.close().success());
    }
}

// --- what results look like ----------------------------------------------------------

/// A successful text result `text` (MCP and `call --json` have the same shape).
fn assert_text(result: &Value, text: &str, what: &str) {
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": text}]),
        "{what}: {result}"
    );
    assert_eq!(result["isError"], false, "{what}: {result}");
    assert!(
        result.get("structuredContent").is_none(),
        "{what}: {result}"
    );
}

/// A successful JSON result `value`: its text, plus `structuredContent` for an object.
fn assert_json(result: &Value, value: Value, what: &str) {
    assert_eq!(result["isError"], false, "{what}: {result}");
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{what}: {result}");
    assert_eq!(content[0]["type"], "text", "{what}: {result}");
    let seen: Value = serde_json::from_str(content[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(seen, value, "{what}: {result}");
    if value.is_object() {
        assert_eq!(result["structuredContent"], value, "{what}: {result}");
    } else {
        assert!(
            result.get("structuredContent").is_none(),
            "{what}: {result}"
        );
    }
}

/// An error result with the message `message`.
fn assert_error(result: &Value, message: &str, what: &str) {
    assert_eq!(result["isError"], true, "{what}: {result}");
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": message}]),
        "{what}: {result}"
    );
}

/// A rejected input: an error whose message is an input error naming `field`.
fn assert_rejected(result: &Value, field: &str, what: &str) {
    assert_eq!(result["isError"], true, "{what}: {result}");
    let text = result["content"][0]["text"].as_str().unwrap_or("");
    assert!(
        text.starts_with("invalid arguments:") && text.contains(&format!("`{field}`")),
        "{what}: the input error names `{field}`: {result}"
    );
}

/// The input schemas of the README's table ("Input schemas"), without `$schema`.
fn expected_schema(tool: &str) -> Value {
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let one_string = |name: &str, description: &str| {
        json!({"type": "object", "properties": {name: {"type": "string", "description": description}},
               "required": [name], "additionalProperties": false})
    };
    match tool {
        "static-map__greet" => json!({"type": "object", "properties": {
            "name": {"type": "string", "description": "Who to greet"},
            "times": {"default": 1, "description": "How many times", "type": "integer", "minimum": 1, "maximum": 5}},
            "required": ["name"], "additionalProperties": false}),
        "static-map__shout" => one_string("name", "Whose name to shout"),
        "generator__count" => json!({"type": "object", "properties": {
            "to": {"type": "integer", "minimum": 1, "maximum": 10, "description": "Where to stop counting"}},
            "required": ["to"], "additionalProperties": false}),
        "own-zod4__describe_me" => json!({"type": "object", "properties": {
            "topic": {"description": "What to describe", "type": "string"},
            "style": {"description": "How much detail to give", "default": "short", "type": "string", "enum": ["short", "long"]}},
            "required": ["topic"], "additionalProperties": false}),
        "own-zod3__add" => json!({"type": "object", "properties": {
            "a": {"type": "number", "description": "First addend"},
            "b": {"type": "number", "default": 2, "description": "Second addend"}},
            "required": ["a"], "additionalProperties": false}),
        "own-zod3__legacy_params" => one_string("word", "A word to tag"),
        "old-zod3__upper" => one_string("text", "Text to upper-case"),
        "json-schema__sum" => json!({"type": "object", "properties": {
            "values": {"type": "array", "items": {"type": "number"}, "description": "Numbers to add"}},
            "required": ["values"], "additionalProperties": false}),
        "commonjs__reverse" => one_string("text", "Text to reverse"),
        "date-input__today" => one_string("format", "A date format"),
        "slow-tool__wait" => json!({"type": "object", "properties": {
            "ms": {"type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_991_u64, "description": "How long to wait, in ms"}},
            "required": ["ms"], "additionalProperties": false}),
        "slow-tool__echo" => one_string("text", "Text to return"),
        "context-factory__whoami"
        | "generator__silent"
        | "model-output__report"
        | "model-output__image"
        | "model-output__image_file"
        | "model-output__denied"
        | "model-output__fails"
        | "model-output__soft"
        | "configured__settings"
        | "configured__echo_token"
        | "no-execute__server_side"
        | "factory-throws__ok"
        | "factory-hangs__ok"
        | "closers__noop" => empty,
        other => panic!("no expected schema for {other}"),
    }
}

/// `schema` without its `$schema`, and that `$schema`.
fn split_schema(schema: &Value) -> (Value, Option<String>) {
    let mut schema = schema.clone();
    let dialect = schema
        .as_object_mut()
        .unwrap()
        .remove("$schema")
        .map(|v| v.as_str().unwrap().to_string());
    (schema, dialect)
}

fn names(tools: &[Value], key: &str) -> Vec<String> {
    let mut names: Vec<String> = tools
        .iter()
        .map(|t| t[key].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn grants(sets: &[&str]) -> String {
    let list: Vec<String> = sets
        .iter()
        .map(|s| format!("{{ tool_set = \"{s}\" }}"))
        .collect();
    format!("[agents.a]\ngrants = [{}]\n", list.join(", "))
}

// --- boot -----------------------------------------------------------------------------

#[test]
fn boot_fails_naming_the_plugin() {
    // (plugins, extra toolhost.toml, what stderr must say)
    let cases: Vec<(&str, &str, Vec<&str>)> = vec![
        ("bad-name", "", vec!["Bad_Name", "must be a slug"]),
        (
            "api-v1",
            "",
            vec!["`api-v1`", "plugin API 1", "supports 2 to 3"],
        ),
        (
            "api-v4",
            "",
            vec![
                "`api-v4`",
                "plugin API 4",
                "supports 2 to 3",
                "needs a newer Toolhost",
            ],
        ),
        (
            "default-export",
            "",
            vec!["default-export", "must export a named `plugin`"],
        ),
        (
            "configured",
            "",
            vec!["plugin `configured`", "credentials is invalid", "apiToken"],
        ),
        (
            "configured",
            "[plugins.configured]\ncredentials = { apiToken = \"\" }\n",
            vec!["plugin `configured`", "credentials is invalid", "apiToken"],
        ),
        (
            "configured",
            "[plugins.configured]\ncredentials = { apiToken = \"x\" }\nconfig = { extra = 1 }\n",
            vec!["plugin `configured`", "config is invalid", "extra"],
        ),
        (
            "configured",
            "[plugins.configured]\ncredentials = { apiToken = \"x\" }\nconfig = { limit = 2.5 }\n",
            vec!["plugin `configured`", "config is invalid", "limit"],
        ),
        (
            "closers",
            "",
            vec!["plugin `closers`", "config is invalid", "logFile"],
        ),
    ];
    let hosts: Vec<Host> = cases
        .iter()
        .map(|(plugin, extra, _)| {
            Host::new(&[*plugin], &format!("[agents.a]\ngrants = []\n{extra}"))
        })
        .collect();
    let runs = parallel(
        hosts
            .iter()
            .map(|h| job(move || h.run("resolve", &["--agent", "a", "--json"])))
            .collect(),
    );
    for ((plugin, extra, needles), r) in cases.iter().zip(&runs) {
        assert!(
            r.code.is_some_and(|c| c != 0),
            "{plugin} {extra:?}: boot must fail: {r}"
        );
        assert!(r.stdout.is_empty(), "{plugin}: {r}");
        let error = r
            .stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_else(|| panic!("{plugin}: no error line: {r}"));
        assert!(error.contains(plugin), "{plugin}: the error names it: {r}");
        for n in needles {
            assert!(error.contains(n), "{plugin} {extra:?}: `{n}` in: {error}");
        }
    }
}

#[test]
fn plugins_json_reports_origin_entry_notes_and_gating() {
    // commonjs by package name (TOOLHOST_PLUGIN_DIR's node_modules), static-map by its
    // entry file, the rest by folder.
    let packages = tempfile::tempdir().unwrap();
    std::fs::set_permissions(packages.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    common::copy_dir(
        &fixtures().join("commonjs"),
        &packages.path().join("node_modules/commonjs"),
    );
    let static_entry = fixtures().join("static-map/index.ts").display().to_string();
    let host = Host::new(
        &[
            static_entry.as_str(),
            "context-factory",
            "date-input",
            "no-execute",
            "backends",
            "npm:commonjs",
        ],
        "[agents.a]\ngrants = []\n",
    )
    .with_env(
        "TOOLHOST_PLUGIN_DIR",
        &packages.path().display().to_string(),
    );
    let r = host.run("plugins", &["--json"]);
    assert_eq!(r.code, Some(0), "{r}");
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    let plugins = out["plugins"].as_array().unwrap();
    let plugin = |name: &str| {
        plugins
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no plugin {name}: {out}"))
    };
    let third: Vec<&str> = plugins
        .iter()
        .filter(|p| p["origin"] == "third-party")
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        third,
        [
            "static-map",
            "context-factory",
            "date-input",
            "no-execute",
            "backends",
            "commonjs"
        ],
        "in TOOLHOST_PLUGINS order"
    );
    assert!(
        plugins
            .iter()
            .filter(|p| p["origin"] != "third-party")
            .all(|p| p["origin"] == "core"),
        "{out}"
    );
    let entries = [
        ("static-map", fixtures().join("static-map/index.ts")),
        (
            "context-factory",
            fixtures().join("context-factory/index.js"),
        ),
        ("date-input", fixtures().join("date-input/index.js")),
        ("no-execute", fixtures().join("no-execute/index.js")),
        ("backends", fixtures().join("backends/index.js")),
        (
            "commonjs",
            packages.path().join("node_modules/commonjs/index.js"),
        ),
    ];
    for (name, entry) in &entries {
        let p = plugin(name);
        assert_eq!(p["entry"], entry.display().to_string(), "{p}");
        assert_eq!(p["version"], "1.0.0", "{p}");
        assert_eq!(p["api_version"], 3, "{p}");
        assert_eq!(p["gating"], "enabled", "{p}");
    }
    assert_eq!(
        plugin("static-map")["tool_sets"],
        json!(["static-map.greetings"])
    );
    assert_eq!(plugin("commonjs")["tool_sets"], json!(["commonjs.strings"]));
    assert_eq!(plugin("backends")["tool_sets"], json!([]));
    for quiet in ["static-map", "context-factory", "commonjs"] {
        let notes = &plugin(quiet)["notes"];
        assert!(
            notes.is_null() || notes == &json!([]),
            "{quiet} has nothing to note: {notes}"
        );
    }
    let notes = |name: &str| -> Vec<String> {
        plugin(name)["notes"]
            .as_array()
            .unwrap_or_else(|| panic!("{name} has notes: {}", plugin(name)))
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let date = notes("date-input");
    assert_eq!(date.len(), 1, "{date:?}");
    assert!(
        date[0].contains("`date-input__when`")
            && date[0].contains("date-input.dates")
            && date[0].contains("Date cannot be represented in JSON Schema"),
        "{date:?}"
    );
    let client = notes("no-execute");
    assert_eq!(client.len(), 1, "{client:?}");
    assert!(
        client[0].contains("`no-execute__client_side`") && client[0].contains("no execute"),
        "{client:?}"
    );
    let backends = notes("backends");
    assert_eq!(backends.len(), 2, "one note per backend: {backends:?}");
    assert!(
        backends.iter().any(|n| n.contains("web backend")
            && n.contains("searx")
            && n.contains("SearXNG")
            && n.contains("not used")),
        "{backends:?}"
    );
    assert!(
        backends.iter().any(|n| n.contains("sandbox backend")
            && n.contains("cloud")
            && n.contains("(Cloud)")
            && n.contains("not used")),
        "{backends:?}"
    );
    // The notes are boot warnings too.
    for n in date.iter().chain(&client).chain(&backends) {
        assert!(r.stderr.contains(n.as_str()), "warned at boot: {n}\n{r}");
    }
    // The sets as listed.
    let set = |id: &str| {
        out["tool_sets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("no set {id}"))
            .clone()
    };
    let greetings = set("static-map.greetings");
    assert_eq!(greetings["name"], "Greetings");
    assert_eq!(greetings["category"], "Examples");
    assert_eq!(greetings["description"], "Greets people.");
    assert_eq!(
        greetings["owner"],
        json!({"kind": "plugin", "name": "static-map"})
    );
    assert_eq!(greetings["tools_kind"], "static");
    assert_eq!(
        greetings["tools"],
        json!(["static-map__greet", "static-map__shout"])
    );
    let context = set("context-factory.context");
    assert_eq!(context["tools_kind"], "factory");
    assert_eq!(
        context["description"],
        "Reports the context its factory was called with."
    );
    assert_eq!(
        set("date-input.dates")["tools"],
        json!(["date-input__today"])
    );
    assert_eq!(
        set("no-execute.mixed")["tools"],
        json!(["no-execute__server_side"])
    );
    assert_eq!(
        set("commonjs.strings")["tools"],
        json!(["commonjs__reverse"])
    );
    assert!(
        !out["tool_sets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["owner"]["name"] == "backends"),
        "backends contributes no tool set"
    );
    // The notes name a left-out tool by its Toolhost name.
    assert!(
        date[0].contains("date-input__when"),
        "the note should name `date-input__when`: {date:?}"
    );
    assert!(
        client[0].contains("no-execute__client_side"),
        "the note should name `no-execute__client_side`: {client:?}"
    );
}

// --- resolve --------------------------------------------------------------------------

#[test]
fn resolve_lists_every_plugin_tool_with_its_schema() {
    let plugins = [
        "static-map",
        "context-factory",
        "generator",
        "model-output",
        "configured",
        "own-zod4",
        "own-zod3",
        "old-zod3",
        "json-schema",
        "commonjs",
        "date-input",
        "no-execute",
        "slow-tool",
        "backends",
    ];
    let sets = [
        "static-map.greetings",
        "context-factory.context",
        "generator.progress",
        "model-output.outputs",
        "configured.configured",
        "own-zod4.describe",
        "own-zod3.math",
        "old-zod3.text",
        "json-schema.numbers",
        "commonjs.strings",
        "date-input.dates",
        "no-execute.mixed",
        "slow-tool.timing",
    ];
    let host = Host::new(
        &plugins,
        &format!(
            "{}[plugins.configured]\ncredentials = {{ apiToken = \"tok-123\" }}\n",
            grants(&sets)
        ),
    );
    let (turn, r) = host.resolve(&[]);
    assert_eq!(turn["warnings"], json!([]), "{r}");
    assert_eq!(turn["collisions"], json!([]), "{r}");
    let tools = turn["tools"].as_array().unwrap();
    let expected_tools = [
        ("commonjs__reverse", "commonjs.strings"),
        ("configured__echo_token", "configured.configured"),
        ("configured__settings", "configured.configured"),
        ("context-factory__whoami", "context-factory.context"),
        ("date-input__today", "date-input.dates"),
        ("generator__count", "generator.progress"),
        ("generator__silent", "generator.progress"),
        ("json-schema__sum", "json-schema.numbers"),
        ("model-output__denied", "model-output.outputs"),
        ("model-output__fails", "model-output.outputs"),
        ("model-output__image", "model-output.outputs"),
        ("model-output__image_file", "model-output.outputs"),
        ("model-output__report", "model-output.outputs"),
        ("model-output__soft", "model-output.outputs"),
        ("no-execute__server_side", "no-execute.mixed"),
        ("old-zod3__upper", "old-zod3.text"),
        ("own-zod3__add", "own-zod3.math"),
        ("own-zod3__legacy_params", "own-zod3.math"),
        ("own-zod4__describe_me", "own-zod4.describe"),
        ("slow-tool__echo", "slow-tool.timing"),
        ("slow-tool__wait", "slow-tool.timing"),
        ("static-map__greet", "static-map.greetings"),
        ("static-map__shout", "static-map.greetings"),
    ];
    assert_eq!(
        names(tools, "name"),
        expected_tools
            .iter()
            .map(|(n, _)| n.to_string())
            .collect::<Vec<_>>(),
        "{r}"
    );
    let mut dialect_gaps = Vec::new();
    for (name, set) in expected_tools {
        let t = tools.iter().find(|t| t["name"] == name).unwrap();
        assert_eq!(t["set"], set, "{t}");
        let plugin = set.split('.').next().unwrap();
        assert_eq!(t["owner"], json!({"kind": "plugin", "name": plugin}), "{t}");
        let (schema, dialect) = split_schema(&t["input_schema"]);
        assert_eq!(schema, expected_schema(name), "{name}'s input schema");
        // `$schema` is draft-07 on every zod-made schema, absent from json-schema__sum.
        let want = (name != "json-schema__sum").then(|| DRAFT_07.to_string());
        if dialect != want {
            dialect_gaps.push(format!("{name}: $schema {dialect:?}, README: {want:?}"));
        }
    }
    let description = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["description"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        description("static-map__greet"),
        "Greet someone by name, once or a few times."
    );
    assert_eq!(
        description("own-zod3__legacy_params"),
        "An AI SDK 4 style tool: `parameters`, not `inputSchema`."
    );
    assert_eq!(
        description("commonjs__reverse"),
        "Reverse a text, character by character."
    );
    // The factory's logs (TOOLHOST_LOG is unset: nothing of them at the default level).
    assert!(!r.stderr.contains("context-factory called"), "{r}");
    // Every zod-made schema, zod 3's (zod-to-json-schema) too, declares draft-07.
    assert!(
        dialect_gaps.is_empty(),
        "`$schema` differs from the README: {dialect_gaps:#?}"
    );
}

// --- calls through the CLI ------------------------------------------------------------

#[test]
fn static_map_typescript_plugin_via_call() {
    let host = Host::new(&["static-map"], &grants(&["static-map.greetings"]));
    let h = &host;
    let mut runs = parallel(vec![
        job(move || {
            h.run(
                "call",
                &["--agent", "a", "static-map__greet", "name=Ada", "times=3"],
            )
        }),
        job(move || h.call("static-map__greet", json!({"name": "Ada"})).1),
        job(move || h.call("static-map__shout", json!({"name": "Ada"})).1),
        job(move || {
            h.call("static-map__greet", json!({"name": "Ada", "times": 0}))
                .1
        }),
    ])
    .into_iter();
    let plain = runs.next().unwrap();
    assert_eq!(plain.code, Some(0), "{plain}");
    assert_eq!(
        plain.stdout, "Hello, Ada! Hello, Ada! Hello, Ada!\n",
        "{plain}"
    );
    let result =
        |r: Run| -> Value { serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{r}")) };
    assert_text(&result(runs.next().unwrap()), "Hello, Ada!", "greet Ada");
    assert_json(
        &result(runs.next().unwrap()),
        json!({"text": "ADA"}),
        "shout Ada",
    );
    let zero = runs.next().unwrap();
    assert_eq!(zero.code, Some(1), "a rejected call fails: {zero}");
    assert_rejected(&result(zero), "times", "greet times 0");
}

#[test]
fn generator_plugin_via_call() {
    let host = Host::new(&["generator"], &grants(&["generator.progress"]));
    let h = &host;
    let mut runs = parallel(vec![
        job(move || h.call("generator__count", json!({"to": 3}))),
        job(move || h.call("generator__silent", json!({}))),
        job(move || h.call("generator__count", json!({"to": 11}))),
    ])
    .into_iter();
    let (count, r) = runs.next().unwrap();
    assert_json(&count, json!({"step": 3, "of": 3}), "count to 3");
    assert!(!r.stdout.contains("ignored"), "{r}");
    // Progress goes to stderr, one update per yield, in order.
    let steps: Vec<usize> = (1..=3)
        .map(|i| {
            r.stderr
                .find(&format!("\"step\": {i},"))
                .unwrap_or_else(|| panic!("progress step {i}: {r}"))
        })
        .collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{r}");
    assert_eq!(r.stderr.matches("progress:").count(), 3, "{r}");
    let (silent, r) = runs.next().unwrap();
    assert_json(&silent, Value::Null, "silent");
    assert!(
        !r.stdout.contains("ignored") && !r.stderr.contains("progress"),
        "{r}"
    );
    let (eleven, _) = runs.next().unwrap();
    assert_rejected(&eleven, "to", "count to 11");
}

#[test]
fn model_output_plugin_via_call() {
    let host = Host::new(&["model-output"], &grants(&["model-output.outputs"]));
    let h = &host;
    let tools = ["report", "image", "image_file", "denied", "fails", "soft"];
    let results: Vec<(Value, Run)> = parallel(
        tools
            .iter()
            .map(|t| job(move || h.call(&format!("model-output__{t}"), json!({}))))
            .collect(),
    );
    let image = json!([
        {"type": "text", "text": "a pixel"},
        {"type": "image", "data": PIXEL, "mimeType": "image/png"},
    ]);
    for (tool, (result, r)) in tools.iter().zip(&results) {
        match *tool {
            "report" => {
                assert_text(result, "3 rows", "report");
                assert!(!r.stdout.contains("internal"), "{r}");
            }
            "image" | "image_file" => {
                assert_eq!(result["content"], image, "{tool}: {result}");
                assert_eq!(result["isError"], false, "{tool}: {result}");
            }
            "denied" => assert_error(result, "not allowed", "denied"),
            "fails" => assert_error(result, "boom: the tool failed", "fails"),
            "soft" => assert_json(result, json!({"error": "soft failure"}), "soft"),
            _ => unreachable!(),
        }
        let code = if *tool == "denied" || *tool == "fails" {
            1
        } else {
            0
        };
        assert_eq!(r.code, Some(code), "{tool}: {r}");
    }
}

#[test]
fn own_zod_and_old_zod_plugins_via_call() {
    let host = Host::new(
        &["own-zod4", "own-zod3", "old-zod3"],
        &grants(&["own-zod4.describe", "own-zod3.math", "old-zod3.text"]),
    );
    let h = &host;
    let cases: Vec<(&str, Value)> = vec![
        ("own-zod4__describe_me", json!({"topic": "owls"})),
        (
            "own-zod4__describe_me",
            json!({"topic": "owls", "style": "long"}),
        ),
        (
            "own-zod4__describe_me",
            json!({"topic": "owls", "style": "medium"}),
        ),
        ("own-zod3__add", json!({"a": 3})),
        ("own-zod3__add", json!({"a": 1.5, "b": 2.25})),
        ("own-zod3__legacy_params", json!({"word": "hi"})),
        ("old-zod3__upper", json!({"text": "Hello"})),
    ];
    let results: Vec<Value> = parallel(
        cases
            .iter()
            .map(|(t, a)| job(move || h.call(t, a.clone()).0))
            .collect(),
    );
    assert_text(&results[0], "short description of owls", "describe_me owls");
    assert_text(
        &results[1],
        "long description of owls",
        "describe_me owls long",
    );
    assert_rejected(&results[2], "style", "describe_me style medium");
    assert_json(&results[3], json!(5), "add a 3 (b defaults to 2)");
    assert_json(&results[4], json!(3.75), "add 1.5 2.25");
    assert_text(&results[5], "legacy:hi", "legacy_params");
    assert_text(&results[6], "HELLO", "upper");
}

/// Toolhost's argument preparation coerces a number written as a string ("3") to the
/// number for every tool (crates/runtime/src/validate.rs): models often quote numbers. A
/// string that is no number is still rejected, naming the field, before the plugin's own
/// zod sees it.
#[test]
fn own_zod3_add_takes_a_quoted_number_and_rejects_a_word() {
    let host = Host::new(&["own-zod3"], &grants(&["own-zod3.math"]));
    let (result, r) = host.call("own-zod3__add", json!({"a": "3"}));
    assert_eq!(result["content"][0]["text"], "5", "{r}");
    let (result, _) = host.call("own-zod3__add", json!({"a": "three"}));
    assert_rejected(&result, "a", "add a \"three\"");
}

#[test]
fn json_schema_and_commonjs_plugins_via_call() {
    let host = Host::new(
        &["json-schema", "commonjs"],
        &grants(&["json-schema.numbers", "commonjs.strings"]),
    );
    let h = &host;
    let cases: Vec<(&str, Value)> = vec![
        ("json-schema__sum", json!({"values": [1, 2, 3.5]})),
        ("json-schema__sum", json!({"values": []})),
        ("json-schema__sum", json!({"values": ["1"]})),
        ("json-schema__sum", json!({})),
        ("json-schema__sum", json!({"values": [1], "extra": true})),
        ("commonjs__reverse", json!({"text": "stressed"})),
        ("commonjs__reverse", json!({"text": "héllo🙂"})),
    ];
    let results: Vec<Value> = parallel(
        cases
            .iter()
            .map(|(t, a)| job(move || h.call(t, a.clone()).0))
            .collect(),
    );
    assert_json(&results[0], json!(6.5), "sum 1 2 3.5");
    assert_json(&results[1], json!(0), "sum []");
    assert_rejected(&results[2], "values", "sum [\"1\"]");
    assert_rejected(&results[3], "values", "sum {}");
    assert_rejected(&results[4], "extra", "sum with extra");
    assert_text(&results[5], "desserts", "reverse stressed");
    assert_text(&results[6], "🙂olléh", "reverse by code point");
}

#[test]
fn date_input_and_no_execute_keep_their_other_tools() {
    let host = Host::new(
        &["date-input", "no-execute"],
        &grants(&["date-input.dates", "no-execute.mixed"]),
    );
    let h = &host;
    let mut runs = parallel(vec![
        job(move || {
            h.call("date-input__today", json!({"format": "YYYY-MM-DD"}))
                .1
        }),
        job(move || h.call("no-execute__server_side", json!({})).1),
        job(move || {
            h.run(
                "call",
                &["--agent", "a", "date-input__when", "--args", "{}"],
            )
        }),
        job(move || {
            h.run(
                "call",
                &["--agent", "a", "no-execute__client_side", "question=x"],
            )
        }),
    ])
    .into_iter();
    let json =
        |r: Run| -> Value { serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{r}")) };
    assert_text(&json(runs.next().unwrap()), "today:YYYY-MM-DD", "today");
    assert_text(&json(runs.next().unwrap()), "ran", "server_side");
    for (tool, r) in [
        ("date-input__when", runs.next().unwrap()),
        ("no-execute__client_side", runs.next().unwrap()),
    ] {
        assert_eq!(r.code, Some(2), "{tool} is unknown: {r}");
        assert!(
            r.stderr
                .contains(&format!("agent `a` has no tool `{tool}`")),
            "{tool}: {r}"
        );
    }
}

#[test]
fn slow_tool_plugin_via_call() {
    let host = Host::new(&["slow-tool"], &grants(&["slow-tool.timing"]));
    let h = &host;
    let mut runs = parallel(vec![
        job(move || h.call("slow-tool__wait", json!({"ms": 0}))),
        job(move || h.call("slow-tool__echo", json!({"text": "ping"}))),
        job(move || h.call("slow-tool__wait", json!({"ms": -1}))),
        job(move || h.call("slow-tool__wait", json!({"ms": 1.5}))),
        job(move || {
            h.call_as(
                "a",
                &["--timeout", "1"],
                "slow-tool__wait",
                json!({"ms": 20000}),
            )
        }),
    ])
    .into_iter();
    assert_text(&runs.next().unwrap().0, "waited 0 ms", "wait 0");
    assert_text(&runs.next().unwrap().0, "ping", "echo");
    assert_rejected(&runs.next().unwrap().0, "ms", "wait -1");
    assert_rejected(&runs.next().unwrap().0, "ms", "wait 1.5");
    // A call that times out ends at its deadline, as an error: the plugin's own
    // `aborted`, or Toolhost's timeout result.
    let (late, r) = runs.next().unwrap();
    assert_eq!(late["isError"], true, "{r}");
    let text = late["content"][0]["text"].as_str().unwrap();
    assert!(text == "aborted" || text.contains("timed out"), "{r}");
    assert!(
        r.took < Duration::from_secs(15),
        "bounded by --timeout 1: {r}"
    );
}

// --- settings ---------------------------------------------------------------------------

#[test]
fn configured_plugin_settings_and_redaction() {
    let sets = grants(&["configured.configured"]);
    let defaults = Host::new(
        &["configured"],
        &format!("{sets}[plugins.configured]\ncredentials = {{ apiToken = \"tok-123\" }}\n"),
    )
    .with_env("TOOLHOST_LOG", "debug");
    let configured = Host::new(
        &["configured"],
        &format!(
            "{sets}[plugins.configured]\nconfig = {{ greeting = \"Hey\", limit = 5 }}\ncredentials = {{ apiToken = \"secret-token-xyz\" }}\n"
        ),
    )
    .with_env("TOOLHOST_LOG", "debug");
    let (d, c) = (&defaults, &configured);
    let mut runs = parallel(vec![
        job(move || d.call("configured__settings", json!({}))),
        job(move || d.call("configured__echo_token", json!({}))),
        job(move || c.call("configured__settings", json!({}))),
        job(move || c.call("configured__echo_token", json!({}))),
    ])
    .into_iter();
    let (settings, r1) = runs.next().unwrap();
    assert_json(
        &settings,
        json!({"greeting": "Hi", "limit": 3, "tokenLength": 7}),
        "config defaults applied by the plugin's schema",
    );
    let (echo, r2) = runs.next().unwrap();
    // The runtime redacts credential values from results as it does from logs.
    assert_text(&echo, "[REDACTED]", "echo_token");
    let (settings, r3) = runs.next().unwrap();
    assert_json(
        &settings,
        json!({"greeting": "Hey", "limit": 5, "tokenLength": 16}),
        "config and credentials from the file",
    );
    let (echo, r4) = runs.next().unwrap();
    assert_text(&echo, "[REDACTED]", "echo_token");
    for (token, r) in [
        ("tok-123", &r1),
        ("tok-123", &r2),
        ("secret-token-xyz", &r3),
        ("secret-token-xyz", &r4),
    ] {
        assert!(r.stderr.contains("DEBUG"), "TOOLHOST_LOG=debug logs: {r}");
        assert!(!r.stderr.contains(token), "the token is in the logs: {r}");
        assert!(!r.stdout.contains(token), "the token is in the result: {r}");
    }
}

/// `credentials = { apiToken = { env = "VAR" } }` hands the plugin VAR's value, never the
/// table itself.
#[test]
fn configured_credentials_from_the_environment() {
    let host = Host::new(
        &["configured"],
        &format!(
            "{}[plugins.configured]\nconfig = {{ greeting = \"Hey\", limit = 5 }}\ncredentials = {{ apiToken = {{ env = \"PLATYPUS_TEST_TOKEN\" }} }}\n",
            grants(&["configured.configured"])
        ),
    )
    .with_env("PLATYPUS_TEST_TOKEN", "secret-token-xyz")
    .with_env("TOOLHOST_LOG", "debug");
    let r = host.run("call", &["--agent", "a", "--json", "configured__settings"]);
    assert_eq!(r.code, Some(0), "the credential from the environment: {r}");
    let settings: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_json(
        &settings,
        json!({"greeting": "Hey", "limit": 5, "tokenLength": 16}),
        "credentials from the environment",
    );
    let (echo, r2) = host.call("configured__echo_token", json!({}));
    assert_text(&echo, "[REDACTED]", "echo_token");
    for r in [&r, &r2] {
        assert!(!r.stderr.contains("secret-token-xyz"), "{r}");
    }
}

// --- factories ----------------------------------------------------------------------------

/// The context-factory plugin, copied, also logging the whole ctx its factory gets (so
/// that `toolhost resolve`'s turn flags can be seen).
fn ctx_logging_copy(into: &Path) -> String {
    let to = into.join("context-factory");
    common::copy_dir(&fixtures().join("context-factory"), &to);
    let index = to.join("index.js");
    let source = std::fs::read_to_string(&index).unwrap();
    let anchor = r#"plugin.logger.info({ agentId: ctx.agentId }, "context-factory resolved");"#;
    assert!(source.contains(anchor));
    let patched = source.replace(
        anchor,
        &format!(
            "{anchor}\n          plugin.logger.info(\"ctx-seen \" + JSON.stringify({{ workspaceId: ctx.workspaceId, agentId: ctx.agentId, orgId: ctx.orgId, frontendUrl: ctx.frontendUrl ?? null, userId: ctx.userId, config: plugin.config ?? null }}));"
        ),
    );
    std::fs::write(&index, patched).unwrap();
    to.display().to_string()
}

/// The JSON value logged after `marker`.
fn logged(stderr: &str, marker: &str) -> Value {
    let at = stderr
        .find(marker)
        .unwrap_or_else(|| panic!("no `{marker}` in:\n{stderr}"));
    serde_json::Deserializer::from_str(&stderr[at + marker.len()..])
        .into_iter::<Value>()
        .next()
        .unwrap()
        .unwrap()
}

#[test]
fn context_factory_gets_every_ctx_field() {
    // `call --agent` (and its turn): the agent's workspace and org, the caller's user.
    let call = Host::new(
        &["context-factory"],
        r#"
[agents.agent-1]
workspace = "ws-1"
org = "org-1"
grants = [{ tool_set = "context-factory.context" }]
[plugins.context-factory]
config = { color = "blue" }
"#,
    )
    .with_env("TOOLHOST_LOG", "debug");
    // `resolve`: every turn flag, and no plugin config.
    let copy = tempfile::tempdir().unwrap();
    std::fs::set_permissions(copy.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let patched = ctx_logging_copy(copy.path());
    let resolve = Host::new(
        &[patched.as_str()],
        &grants(&["context-factory.context"]).replace("[agents.a]", "[agents.agent-1]"),
    )
    .with_env("TOOLHOST_LOG", "info");
    let (c, r) = (&call, &resolve);
    let mut runs = parallel(vec![
        job(move || {
            c.call_as(
                "agent-1",
                &["--user", "user-1"],
                "context-factory__whoami",
                json!({}),
            )
            .1
        }),
        job(move || {
            c.call_as(
                "agent-1",
                &["--user", "user-1"],
                "context-factory__whoami",
                json!({"extra": 1}),
            )
            .1
        }),
        job(move || {
            r.run(
                "resolve",
                &[
                    "--agent",
                    "agent-1",
                    "--json",
                    "--user",
                    "user-1",
                    "--workspace",
                    "ws-1",
                    "--org",
                    "org-1",
                    "--frontend-url",
                    "https://frontend.test",
                ],
            )
        }),
    ])
    .into_iter();
    let whoami = runs.next().unwrap();
    let result: Value = serde_json::from_str(&whoami.stdout).unwrap_or_else(|_| panic!("{whoami}"));
    assert_json(
        &result,
        json!({"workspaceId": "ws-1", "agentId": "agent-1", "orgId": "org-1", "frontendUrl": null,
               "userId": "user-1", "config": {"color": "blue"}, "hasCloser": true}),
        "whoami",
    );
    // The factory's logs, in order: debug (message only), then info with its object.
    let called = whoami
        .stderr
        .find("[plugin context-factory] context-factory called")
        .unwrap_or_else(|| panic!("{whoami}"));
    let resolved = whoami
        .stderr
        .find(r#"[plugin context-factory] context-factory resolved {"agentId":"agent-1"}"#)
        .unwrap_or_else(|| panic!("{whoami}"));
    assert!(called < resolved, "{whoami}");
    let line = |at: usize| {
        let start = whoami.stderr[..at].rfind('\n').map_or(0, |n| n + 1);
        whoami.stderr[start..].lines().next().unwrap().to_string()
    };
    // Each line carries the plugin's level (as Toolhost's level or as a `level` field).
    let (called, resolved) = (line(called), line(resolved));
    assert!(
        called.contains("level=debug") || called.contains("DEBUG"),
        "{called}"
    );
    assert!(
        resolved.contains("level=info") || resolved.contains("INFO"),
        "{resolved}"
    );
    assert_eq!(
        whoami.stderr.matches("context-factory called").count(),
        1,
        "one factory call for the call's turn: {whoami}"
    );
    let extra = runs.next().unwrap();
    let result: Value = serde_json::from_str(&extra.stdout).unwrap_or_else(|_| panic!("{extra}"));
    assert_rejected(&result, "extra", "whoami extra");
    let resolved = runs.next().unwrap();
    assert_eq!(resolved.code, Some(0), "{resolved}");
    assert_eq!(
        logged(&resolved.stderr, "ctx-seen "),
        json!({"workspaceId": "ws-1", "agentId": "agent-1", "orgId": "org-1",
               "frontendUrl": "https://frontend.test", "userId": "user-1", "config": null}),
        "{resolved}"
    );
}

/// A plugin's logger writes at its own level: `debug` lines stay out of TOOLHOST_LOG=info,
/// warnings and errors show at the default level.
#[test]
fn plugin_log_levels_are_kept() {
    let host = Host::new(&["context-factory"], &grants(&["context-factory.context"]))
        .with_env("TOOLHOST_LOG", "info");
    let (result, r) = host.call("context-factory__whoami", json!({}));
    assert_eq!(result["structuredContent"]["agentId"], "a", "{r}");
    assert!(
        r.stderr.contains("context-factory resolved"),
        "the info line: {r}"
    );
    assert!(
        !r.stderr.contains("context-factory called"),
        "a plugin's debug line shows at TOOLHOST_LOG=info: {r}"
    );
}

#[test]
fn factory_throws_and_factory_hangs_leave_the_rest_of_the_turn() {
    let all = Host::new(
        &["factory-throws", "factory-hangs"],
        &format!(
            "[turns]\nresolve_timeout = 1\n{}",
            grants(&[
                "factory-throws.broken",
                "factory-throws.fine",
                "factory-hangs.slow",
                "factory-hangs.fine"
            ])
        ),
    );
    // The per-set deadline alone (the default turn deadline is 20 s).
    let per_set = Host::new(
        &["factory-hangs"],
        &format!(
            "[tool_sets.\"factory-hangs.slow\"]\nresolve_timeout = 1\n{}",
            grants(&["factory-hangs.slow", "factory-hangs.fine"])
        ),
    );
    let (a, p) = (&all, &per_set);
    let mut runs = parallel(vec![
        job(move || a.run("resolve", &["--agent", "a", "--json"])),
        job(move || a.run("call", &["--agent", "a", "factory-throws__ok"])),
        job(move || a.run("call", &["--agent", "a", "factory-hangs__ok"])),
        job(move || p.run("resolve", &["--agent", "a", "--json"])),
    ])
    .into_iter();
    let r = runs.next().unwrap();
    assert_eq!(r.code, Some(0), "{r}");
    assert!(
        r.took < Duration::from_secs(15),
        "bounded by the deadline: {r}"
    );
    let turn: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        names(turn["tools"].as_array().unwrap(), "name"),
        ["factory-hangs__ok", "factory-throws__ok"],
        "{r}"
    );
    let warnings = turn["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 2, "{r}");
    let warning = |set: &str| -> String {
        let w = warnings
            .iter()
            .find(|w| w["source"].as_str().unwrap().contains(set))
            .unwrap_or_else(|| panic!("no warning names {set}: {r}"));
        w["message"].as_str().unwrap().to_string()
    };
    let thrown = warning("factory-throws.broken");
    assert!(
        thrown.contains("cannot reach the backend") && thrown.contains("factory-throws.broken"),
        "{thrown}"
    );
    assert!(
        warning("factory-hangs.slow").contains("did not finish within 1 s"),
        "{r}"
    );
    for (tool, r) in [
        ("factory-throws__ok", runs.next().unwrap()),
        ("factory-hangs__ok", runs.next().unwrap()),
    ] {
        assert_eq!(r.code, Some(0), "{tool}: {r}");
        assert_eq!(r.stdout, "ok\n", "{tool}: {r}");
        assert!(r.took < Duration::from_secs(15), "{tool}: {r}");
        assert!(
            r.stderr
                .contains("warning: tool set `factory-throws.broken`")
                && r.stderr.contains("cannot reach the backend")
                && r.stderr.contains("warning: tool set `factory-hangs.slow`"),
            "{tool}: the turn's warnings: {r}"
        );
    }
    let r = runs.next().unwrap();
    assert_eq!(r.code, Some(0), "{r}");
    assert!(
        r.took < Duration::from_secs(15),
        "bounded by the set's deadline: {r}"
    );
    let turn: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        names(turn["tools"].as_array().unwrap(), "name"),
        ["factory-hangs__ok"]
    );
    assert_eq!(turn["warnings"].as_array().unwrap().len(), 1, "{r}");
    assert!(
        turn["warnings"][0]["source"]
            .as_str()
            .unwrap()
            .contains("factory-hangs.slow"),
        "{r}"
    );
    assert!(
        turn["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("did not finish within 1 s"),
        "{r}"
    );
}

// --- closers --------------------------------------------------------------------------

/// A host with the closers plugin writing to `closed.log` in the default user's home
/// (`/officer/user` in the sandbox the plugin runs in; plugins see no other host path).
fn closers_host() -> Host {
    Host::new(
        &["closers"],
        &format!(
            "{}[plugins.closers]\nconfig = {{ logFile = \"/officer/user/closed.log\" }}\n",
            grants(&["closers.closers"])
        ),
    )
}

fn closed_log(host: &Host) -> Option<String> {
    std::fs::read_to_string(host.data().join("default/closed.log")).ok()
}

#[test]
fn closers_run_once_when_a_cli_turn_ends() {
    let call = closers_host();
    let resolve = closers_host();
    let (c, r) = (&call, &resolve);
    let mut runs = parallel(vec![
        job(move || c.run("call", &["--agent", "a", "closers__noop"])),
        job(move || r.run("resolve", &["--agent", "a", "--json"])),
    ])
    .into_iter();
    let called = runs.next().unwrap();
    assert_eq!(called.code, Some(0), "{called}");
    assert_eq!(called.stdout, "noop\n", "{called}");
    assert_eq!(
        closed_log(&call).as_deref(),
        Some("closed\n"),
        "one line per factory call: {called}"
    );
    // The closer that never settles is abandoned after 5 s: it does not hold the turn's
    // end longer.
    assert!(called.took < Duration::from_secs(12), "{called}");
    assert!(
        called
            .stderr
            .contains("warning: a closer of tool set `closers.closers` failed")
            && called.stderr.contains("closer exploded"),
        "the thrown closer is reported: {called}"
    );
    let resolved = runs.next().unwrap();
    assert_eq!(resolved.code, Some(0), "{resolved}");
    let turn: Value = serde_json::from_str(&resolved.stdout).unwrap();
    assert_eq!(
        names(turn["tools"].as_array().unwrap(), "name"),
        ["closers__noop"]
    );
    assert_eq!(
        turn["tools"][0]["input_schema"],
        json!({"$schema": DRAFT_07, "type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(
        closed_log(&resolve).as_deref(),
        Some("closed\n"),
        "{resolved}"
    );
    assert!(resolved.took < Duration::from_secs(12), "{resolved}");
}

/// Polls the closers' log until it reads `want` (a closer runs on the worker, after the
/// turn's end was asked for).
fn wait_for_log(host: &Host, want: &str) {
    let until = Instant::now() + Duration::from_secs(5);
    while closed_log(host).as_deref() != Some(want) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(25));
    }
    assert_eq!(closed_log(host).as_deref(), Some(want));
}

#[test]
fn closers_over_mcp_run_when_the_next_turn_begins() {
    let host = closers_host();
    let mut s = host.mcp(&[]);
    assert_eq!(names(&s.list(), "name"), ["closers__noop"]);
    assert_text(&s.call("closers__noop", json!({})), "noop", "noop");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        closed_log(&host),
        None,
        "not written before the closers run"
    );
    // A new turn (tools/list) ends the previous one: its closers run.
    assert_eq!(names(&s.list(), "name"), ["closers__noop"]);
    wait_for_log(&host, "closed\n");
    assert_text(&s.call("closers__noop", json!({})), "noop", "noop");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        closed_log(&host).as_deref(),
        Some("closed\n"),
        "the second turn is still open"
    );
    s.close();
}

/// When an MCP stdio session ends (stdin closed), its last turn's closers run before the
/// process exits.
#[test]
fn mcp_closers_of_the_last_turn_run_when_the_session_ends() {
    let host = closers_host();
    let mut s = host.mcp(&[]);
    assert_eq!(names(&s.list(), "name"), ["closers__noop"]);
    assert_text(&s.call("closers__noop", json!({})), "noop", "noop");
    s.close();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        closed_log(&host).as_deref(),
        Some("closed\n"),
        "the session's last turn was never closed"
    );
}

// --- MCP ----------------------------------------------------------------------------------

#[test]
fn mcp_serves_plugin_tools_schemas_results_progress_and_cancellation() {
    let sets = [
        "static-map.greetings",
        "generator.progress",
        "model-output.outputs",
        "slow-tool.timing",
        "json-schema.numbers",
        "own-zod3.math",
        "own-zod4.describe",
        "configured.configured",
    ];
    let host = Host::new(
        &[
            "static-map",
            "generator",
            "model-output",
            "slow-tool",
            "json-schema",
            "own-zod3",
            "own-zod4",
            "configured",
        ],
        &format!(
            "{}[plugins.configured]\ncredentials = {{ apiToken = \"tok-123\" }}\n",
            grants(&sets)
        ),
    )
    .with_env("TOOLHOST_LOG", "debug");
    let mut s = host.mcp(&[]);

    // tools/list: every tool, its description, its schema as the README gives it.
    let tools = s.list();
    assert_eq!(
        names(&tools, "name"),
        [
            "configured__echo_token",
            "configured__settings",
            "generator__count",
            "generator__silent",
            "json-schema__sum",
            "model-output__denied",
            "model-output__fails",
            "model-output__image",
            "model-output__image_file",
            "model-output__report",
            "model-output__soft",
            "own-zod3__add",
            "own-zod3__legacy_params",
            "own-zod4__describe_me",
            "slow-tool__echo",
            "slow-tool__wait",
            "static-map__greet",
            "static-map__shout",
        ]
    );
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let (schema, _) = split_schema(&t["inputSchema"]);
        assert_eq!(schema, expected_schema(name), "{name}'s inputSchema");
    }
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
    assert_eq!(
        tool("static-map__greet")["description"],
        "Greet someone by name, once or a few times."
    );
    assert_eq!(
        tool("own-zod4__describe_me")["description"],
        "Describe a topic, briefly or at length."
    );
    assert_eq!(tool("generator__count")["inputSchema"]["$schema"], DRAFT_07);
    assert!(
        tool("json-schema__sum")["inputSchema"]
            .get("$schema")
            .is_none()
    );

    // Results: text, json (+ structuredContent for objects), content parts, errors.
    assert_text(
        &s.call("static-map__greet", json!({"name": "Ada", "times": 3})),
        "Hello, Ada! Hello, Ada! Hello, Ada!",
        "greet 3",
    );
    assert_json(
        &s.call("static-map__shout", json!({"name": "Ada"})),
        json!({"text": "ADA"}),
        "shout",
    );
    let report = s.call("model-output__report", json!({}));
    assert_text(&report, "3 rows", "report");
    assert!(!report.to_string().contains("internal"), "{report}");
    let image = json!([
        {"type": "text", "text": "a pixel"},
        {"type": "image", "data": PIXEL, "mimeType": "image/png"},
    ]);
    for t in ["model-output__image", "model-output__image_file"] {
        let r = s.call(t, json!({}));
        assert_eq!(r["content"], image, "{t}: {r}");
        assert_eq!(r["isError"], false, "{t}: {r}");
    }
    assert_error(
        &s.call("model-output__denied", json!({})),
        "not allowed",
        "denied",
    );
    assert_error(
        &s.call("model-output__fails", json!({})),
        "boom: the tool failed",
        "fails",
    );
    assert_json(
        &s.call("model-output__soft", json!({})),
        json!({"error": "soft failure"}),
        "soft",
    );
    assert_json(&s.call("own-zod3__add", json!({"a": 3})), json!(5), "add");
    assert_text(
        &s.call("own-zod4__describe_me", json!({"topic": "owls"})),
        "short description of owls",
        "describe_me",
    );
    assert_json(
        &s.call("json-schema__sum", json!({"values": [1, 2, 3.5]})),
        json!(6.5),
        "sum",
    );
    assert_text(
        &s.call("slow-tool__echo", json!({"text": "ping"})),
        "ping",
        "echo",
    );
    let started = Instant::now();
    assert_text(
        &s.call("slow-tool__wait", json!({"ms": 120})),
        "waited 120 ms",
        "wait 120",
    );
    assert!(started.elapsed() >= Duration::from_millis(120));
    assert_json(
        &s.call("configured__settings", json!({})),
        json!({"greeting": "Hi", "limit": 3, "tokenLength": 7}),
        "settings",
    );
    assert_text(
        &s.call("configured__echo_token", json!({})),
        "[REDACTED]",
        "echo_token",
    );

    // Rejected inputs: an input error naming the field; execute does not run.
    let rejected: Vec<(&str, Value, &str)> = vec![
        (
            "static-map__greet",
            json!({"name": "Ada", "times": 0}),
            "times",
        ),
        (
            "static-map__greet",
            json!({"name": "Ada", "times": 6}),
            "times",
        ),
        (
            "static-map__greet",
            json!({"name": "Ada", "times": 1.5}),
            "times",
        ),
        ("static-map__greet", json!({"times": 2}), "name"),
        ("generator__count", json!({"to": 0}), "to"),
        ("generator__count", json!({"to": 11}), "to"),
        ("generator__count", json!({"to": 2.5}), "to"),
        ("generator__silent", json!({"extra": 1}), "extra"),
        ("model-output__report", json!({"extra": 1}), "extra"),
        ("json-schema__sum", json!({"values": ["1"]}), "values"),
        ("json-schema__sum", json!({}), "values"),
        (
            "json-schema__sum",
            json!({"values": [1], "extra": true}),
            "extra",
        ),
        (
            "own-zod4__describe_me",
            json!({"topic": "owls", "style": "medium"}),
            "style",
        ),
        ("slow-tool__wait", json!({"ms": -1}), "ms"),
        ("slow-tool__wait", json!({"ms": 1.5}), "ms"),
    ];
    for (tool, args, field) in rejected {
        let what = format!("{tool} {args}");
        assert_rejected(&s.call(tool, args), field, &what);
    }

    // Progress: one notification per yield when the call has a progress token.
    let started = Instant::now();
    let (answer, before) = s.call_collecting("generator__count", json!({"to": 3}), Some("count-3"));
    let took = started.elapsed();
    assert_json(&answer["result"], json!({"step": 3, "of": 3}), "count to 3");
    assert!(!answer.to_string().contains("ignored"), "{answer}");
    assert_eq!(before.len(), 3, "three progress notifications: {before:?}");
    let mut last = 0.0;
    for (i, n) in before.iter().enumerate() {
        assert_eq!(n["method"], "notifications/progress", "{n}");
        assert_eq!(n["params"]["progressToken"], "count-3", "{n}");
        let progress = n["params"]["progress"].as_f64().unwrap();
        assert!(progress > last, "progress increases: {before:?}");
        last = progress;
        let message: Value =
            serde_json::from_str(n["params"]["message"].as_str().unwrap()).unwrap();
        assert_eq!(message, json!({"step": i + 1, "of": 3}), "{n}");
    }
    assert!(
        took >= Duration::from_millis(100),
        "yields 50 ms apart: {took:?}"
    );
    // Without a token: no notifications.
    let (answer, before) = s.call_collecting("generator__count", json!({"to": 2}), None);
    assert_json(&answer["result"], json!({"step": 2, "of": 2}), "count to 2");
    assert!(before.is_empty(), "{before:?}");
    // A generator that never yields: no progress, a null result, not an error.
    let (answer, before) = s.call_collecting("generator__silent", json!({}), Some("silent"));
    assert!(before.is_empty(), "{before:?}");
    assert_json(&answer["result"], Value::Null, "silent");
    assert!(!answer.to_string().contains("ignored"), "{answer}");

    // Cancellation: notifications/cancelled ends the wait; the cancelled request gets no
    // answer and the session goes on at once.
    let started = Instant::now();
    s.client
        .tell(json!({"jsonrpc": "2.0", "id": 9000, "method": "tools/call",
        "params": {"name": "slow-tool__wait", "arguments": {"ms": 30000}}}));
    std::thread::sleep(Duration::from_millis(300));
    s.client.tell(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9000, "reason": "enough"}}),
    );
    let (answer, before) = s.call_collecting("slow-tool__echo", json!({"text": "after"}), None);
    assert_text(&answer["result"], "after", "echo after the cancel");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(300));
    let (answer2, before2) = s.call_collecting("slow-tool__echo", json!({"text": "again"}), None);
    assert_text(&answer2["result"], "again", "echo again");
    assert!(
        before
            .iter()
            .chain(&before2)
            .all(|m| m.get("id") != Some(&json!(9000))),
        "no answer to a cancelled request: {before:?} {before2:?}"
    );

    // The server ended the cancelled call (its record says so), long before 30 s.
    let until = Instant::now() + Duration::from_secs(5);
    let abandoned = |logs: &str| {
        logs.lines()
            .any(|l| l.contains("tool=slow-tool__wait") && l.contains("outcome=Abandoned"))
    };
    while !abandoned(&strip_ansi(&s.client.logs())) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(25));
    }
    let logs = strip_ansi(&s.client.logs());
    assert!(
        abandoned(&logs),
        "the cancelled call is recorded as abandoned:\n{logs}"
    );
    assert!(logs.contains("DEBUG"), "TOOLHOST_LOG=debug: {logs}");
    assert!(
        !logs.contains("tok-123"),
        "the token is in the logs:\n{logs}"
    );
    s.close();
}

/// `toolhost mcp --agent a` resolves its turns in the agent's `workspace` and `org`, as
/// `toolhost call --agent a` does.
#[test]
fn mcp_agent_turns_get_the_agents_workspace_and_org() {
    let host = Host::new(
        &["context-factory"],
        "[agents.a]\nworkspace = \"ws-1\"\norg = \"org-1\"\ngrants = [{ tool_set = \"context-factory.context\" }]\n",
    );
    let mut s = host.mcp(&["--user", "user-1"]);
    assert_eq!(names(&s.list(), "name"), ["context-factory__whoami"]);
    let who = s.call("context-factory__whoami", json!({}));
    assert_eq!(who["isError"], false, "{who}");
    let ctx = &who["structuredContent"];
    assert_eq!(ctx["agentId"], "a", "{who}");
    assert_eq!(ctx["userId"], "user-1", "the caller: {who}");
    assert_eq!(ctx["config"], Value::Null, "{who}");
    assert_eq!(ctx["hasCloser"], true, "{who}");
    s.close();
    assert_eq!(
        (ctx["workspaceId"].clone(), ctx["orgId"].clone()),
        (json!("ws-1"), json!("org-1")),
        "the agent's workspace and org over MCP: {who}"
    );
}

#[test]
fn typescript_sdk_against_plugin_tools() {
    let host = Host::new(
        &["generator", "model-output", "slow-tool"],
        &grants(&[
            "generator.progress",
            "model-output.outputs",
            "slow-tool.timing",
        ]),
    );
    let probe = host.command("mcp", &["--agent", "a"]);
    let args: Vec<String> = probe
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let dir = common::clients_dir();
    let mut cmd = Command::new("node");
    cmd.current_dir(&dir)
        .arg(dir.join("plugins_client.mjs"))
        .arg(json!({"bin": env!("CARGO_BIN_EXE_toolhost"), "args": args}).to_string());
    for (k, v) in probe.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    common::run_client(cmd, "the TypeScript SDK against plugin tools");
}

// --- reload -------------------------------------------------------------------------------

/// An edited plugin reloads as an edited tool folder does: the session is told its tools
/// may have changed (`list_changed`), the next call runs the new code (on a fresh worker:
/// Node.js never unloads a module), and the next turn describes the tools anew: a static
/// map's renamed tool as a factory's.
#[test]
fn an_edited_plugin_reloads_and_the_session_is_told() {
    let copies = tempfile::tempdir().unwrap();
    std::fs::set_permissions(copies.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (slow, context) = (
        copies.path().join("slow-tool"),
        copies.path().join("context-factory"),
    );
    common::copy_dir(&fixtures().join("slow-tool"), &slow);
    common::copy_dir(&fixtures().join("context-factory"), &context);
    let host = Host::new(
        &[slow.to_str().unwrap(), context.to_str().unwrap()],
        &grants(&["slow-tool.timing", "context-factory.context"]),
    );
    let mut s = host.mcp(&[]);
    let listed = names(&s.list(), "name");
    assert!(
        listed.contains(&"context-factory__whoami".to_string()),
        "{listed:?}"
    );
    assert_text(
        &s.call("slow-tool__echo", json!({"text": "ping"})),
        "ping",
        "echo",
    );

    let edit = |file: &Path, from: &str, to: &str| {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains(from), "{}: {from}", file.display());
        std::fs::write(file, text.replace(from, to)).unwrap();
    };
    edit(
        &slow.join("index.js"),
        "execute: async ({ text }) => text,",
        "execute: async ({ text }) => `edited: ${text}`,",
    );
    edit(&slow.join("index.js"), "wait: tool({", "pause: tool({");
    edit(
        &context.join("index.js"),
        "whoami: tool({",
        "whoami_v2: tool({",
    );
    std::thread::sleep(Duration::from_millis(1500));

    let (answer, before) = s.call_collecting("slow-tool__echo", json!({"text": "ping"}), None);
    assert!(
        before
            .iter()
            .any(|m| m["method"] == "notifications/tools/list_changed"),
        "the session is told: {before:?}"
    );
    assert_text(&answer["result"], "edited: ping", "the edited echo");
    let listed = names(&s.list(), "name");
    assert!(
        listed.contains(&"context-factory__whoami_v2".to_string())
            && !listed.contains(&"context-factory__whoami".to_string()),
        "the factory's new tool: {listed:?}"
    );
    assert!(
        listed.contains(&"slow-tool__pause".to_string())
            && !listed.contains(&"slow-tool__wait".to_string()),
        "the static map's renamed tool: {listed:?}"
    );
    assert_text(
        &s.call("slow-tool__pause", json!({"ms": 1})),
        "waited 1 ms",
        "the renamed tool",
    );
    s.close();
}

/// A plugin's tool set has no icon of its own in Platypus's manifest: the operator gives it
/// one with `[tool_sets."PLUGIN.SET"] icon`, and its tools show it.
#[test]
fn a_plugin_tool_set_takes_the_icon_the_operator_gives_it() {
    let host = Host::new(
        &["static-map"],
        &format!(
            "{}[tool_sets.\"static-map.greetings\"]\nicon = \"hand\"\n",
            grants(&["static-map.greetings"])
        ),
    );
    let (v, r) = host.resolve(&[]);
    let tools = v["tools"].as_array().unwrap_or_else(|| panic!("{r}"));
    assert_eq!(tools.len(), 2, "{r}");
    for t in tools {
        assert_eq!(t["icon"], "hand", "{t}");
    }
}

/// `toolhost check PATH` on plugins: each loaded as boot would (its `[plugins.NAME]` from the
/// configuration), with boot's errors and notes; the exit status says whether any failed.
#[test]
fn check_reports_what_boot_would() {
    let host = Host::new(
        &[],
        "[plugins.configured]\ncredentials = { apiToken = \"tok-123\" }\n",
    );
    let check = |paths: &[&str]| {
        let cmd = host.command("check", &[]);
        // `check` takes PATHs or the catalog flags: the helper's `--data` goes.
        let args: Vec<std::ffi::OsString> = cmd
            .get_args()
            .map(|a| a.to_os_string())
            .take_while(|a| a != "--data")
            .collect();
        let mut cmd = Command::new(cmd.get_program());
        for (k, v) in host.command("check", &[]).get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.args(args).arg("--json");
        for p in paths {
            cmd.arg(fixtures().join(p));
        }
        run(cmd)
    };
    let ok = check(&["date-input", "configured", "backends"]);
    assert_eq!(ok.code, Some(0), "{ok}");
    let v: Value = serde_json::from_str(&ok.stdout).unwrap_or_else(|e| panic!("{e}: {ok}"));
    assert_eq!(v["errors"], 0, "{v}");
    assert_eq!(
        v["warnings"], 3,
        "one note for date-input, two for backends: {v}"
    );
    let date = &v["plugins"][0];
    assert_eq!(date["name"], "date-input");
    assert_eq!(date["ok"], true);
    assert_eq!(
        date["tool_sets"],
        json!([{"id": "date-input.dates", "tools_kind": "static", "tools": ["date-input__today"]}])
    );
    assert!(
        date["notes"][0]
            .as_str()
            .unwrap()
            .contains("`date-input__when`"),
        "{date}"
    );
    assert_eq!(v["plugins"][1]["tool_sets"][0]["tools_kind"], "factory");

    let bad = check(&["bad-name", "api-v4", "static-map"]);
    assert_eq!(bad.code, Some(1), "{bad}");
    let v: Value = serde_json::from_str(&bad.stdout).unwrap_or_else(|e| panic!("{e}: {bad}"));
    assert_eq!(v["errors"], 2, "{v}");
    assert!(
        v["plugins"][0]["error"]
            .as_str()
            .unwrap()
            .contains("\"Bad_Name\" must be a slug"),
        "{v}"
    );
    assert!(
        v["plugins"][1]["error"]
            .as_str()
            .unwrap()
            .contains("plugin `api-v4`"),
        "{v}"
    );
    assert_eq!(v["plugins"][2]["ok"], true, "{v}");
}
