//! README, "Command line": every command "never panics". This runs the real binary with
//! random and hostile arguments for every subcommand and asserts that each run ends with
//! 0, 1 or 2 (never 101, a panic, nor a signal such as an abort) and prints no "panicked".
//!
//! The surface comes from the binary's own `--help` (subcommands, flags, their value
//! names and possible values, positionals), so a flag added later is fuzzed too. Values are
//! drawn per kind (paths, users, seconds, JSON, addresses, names) and from a pool of
//! hostile strings (huge and odd numbers, unicode, empty, flags as values, invalid UTF-8).
//! The generator is seeded: a failure prints the seed and the exact command line, and
//! `TOOLHOST_FUZZ_SEED=N` replays it; `TOOLHOST_FUZZ_SHOW=1` prints every run and how it
//! ended, to see how deep the generated cases reach.
//!
//! As root, every path it can write to lies in a temporary folder: written paths (sync's
//! target, `new --dir`, `--data`, `--log-file`, homes, caches) are relative to a scratch
//! working directory or absolute paths inside the temporary folder.
#![allow(clippy::unwrap_used)]

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_toolhost");
/// Generated command lines per subcommand: with about 15 subcommands, a few hundred runs,
/// most of them a few milliseconds.
const CASES_PER_COMMAND: usize = 30;
/// Commands that keep running by design (`serve`, `runner`, `list --watch`, `cluster
/// publish --watch`) are stopped after this.
const RUNNING_FOR: Duration = Duration::from_millis(1500);
/// Anything else still running after this is a hang, reported as a failure.
const HANG: Duration = Duration::from_secs(60);

/// A deterministic generator (xorshift64*): the same seed gives the same command lines.
struct Rng {
    state: u64,
    /// A calm case draws only plausible values, then may get one hostile mutation, so that
    /// it gets past argument parsing into the command (a case where every value may be
    /// hostile is nearly always a usage error after the first bad value).
    calm: bool,
}

impl Rng {
    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// One subcommand as its `--help` describes it.
#[derive(Debug, Clone)]
struct Surface {
    path: Vec<String>,
    /// `--flag` and, when it takes one, its value's name and possible values.
    options: Vec<(String, Option<String>, Vec<String>)>,
    /// Positionals: name, required, repeated.
    positionals: Vec<(String, bool, bool)>,
    /// Options the usage line requires (`--agent <AGENT>`).
    required: Vec<String>,
}

fn help(path: &[String]) -> String {
    let out = Command::new(BIN)
        .args(path)
        .arg("--help")
        .env_remove("TOOLHOST_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?} --help failed: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every runnable subcommand, recursively (`sandbox status`, `token new`, `plugins` and
/// `plugins secret`, …).
fn surfaces(path: Vec<String>, found: &mut Vec<Surface>) {
    let text = help(&path);
    let mut section = "";
    let mut children = Vec::new();
    let mut surface = Surface {
        path: path.clone(),
        options: Vec::new(),
        positionals: Vec::new(),
        required: Vec::new(),
    };
    for line in text.lines() {
        if let Some(usage) = line.strip_prefix("Usage: ") {
            surface.required = usage
                .split_whitespace()
                .filter(|w| w.starts_with("--"))
                .map(String::from)
                .collect();
        }
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(first) = words.first() else { continue };
        match section {
            "Commands:"
                if line.starts_with("  ") && !line.starts_with("   ") && *first != "help" =>
            {
                children.push(first.to_string());
            }
            "Arguments:" if first.starts_with('<') || first.starts_with('[') => {
                let name = first.trim_end_matches("...");
                surface.positionals.push((
                    name[1..name.len() - 1].to_string(),
                    first.starts_with('<'),
                    first.ends_with("..."),
                ));
            }
            "Options:" if first.starts_with('-') => {
                let Some(at) = words.iter().position(|w| w.starts_with("--")) else {
                    continue;
                };
                let flag = words[at].trim_end_matches(',').to_string();
                if flag == "--help" || flag == "--version" {
                    continue;
                }
                let value = words
                    .get(at + 1)
                    .filter(|w| w.starts_with('<'))
                    .map(|w| w.trim_matches(['<', '>']).to_string());
                let possible = line
                    .split_once("[possible values: ")
                    .and_then(|(_, rest)| rest.split_once(']'))
                    .map(|(values, _)| values.split(", ").map(String::from).collect())
                    .unwrap_or_default();
                surface.options.push((flag, value, possible));
            }
            _ => {}
        }
    }
    // A command with subcommands that also runs on its own (`plugins`, beside `plugins
    // secret`) has options of its own.
    if children.is_empty() || !surface.options.is_empty() {
        found.push(surface);
    }
    for child in children {
        let mut p = path.clone();
        p.push(child);
        surfaces(p, found);
    }
}

/// The scratch world every run lives in.
struct World {
    root: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools"),
            &r.join("tools"),
        );
        std::fs::create_dir_all(r.join("cwd")).unwrap();
        std::fs::write(r.join("file.txt"), "not a folder\n").unwrap();
        // A root whose toolset.toml does not boot and whose one tool is broken.
        std::fs::create_dir_all(r.join("broken/bad_tool")).unwrap();
        std::fs::write(r.join("broken/toolset.toml"), "id = 7\nbogus = [\n").unwrap();
        std::fs::write(r.join("broken/bad_tool/TOOL.md"), "---\nname: [\n---\n").unwrap();
        std::fs::write(r.join("broken/bad_tool/index.ts"), "export const = ;\n").unwrap();
        std::fs::create_dir_all(r.join("üñí cødé\nline")).unwrap();
        std::fs::create_dir_all(r.join("data/tools")).unwrap();
        std::fs::write(
            r.join("good.toml"),
            "[serve]\nlisten = \"127.0.0.1:0\"\n\n[runtime]\ntimeout = 20\n\n\
             [agents.a]\ngrants = [{ tool_set = \"time\" }, { tool_set = \"tools\", deny = [\"hash\"] }]\n",
        )
        .unwrap();
        std::fs::write(
            r.join("bad.toml"),
            "[runtime]\nbogus = 1\ntimeout = -1e20\n",
        )
        .unwrap();
        World { root }
    }

    fn path(&self, rel: &str) -> String {
        self.root.path().join(rel).to_string_lossy().into_owned()
    }

    fn cwd(&self) -> PathBuf {
        self.root.path().join("cwd")
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Strings that break naive parsing: odd numbers, unicode, empty, flags, separators. All
/// relative, so a command that writes where they point writes inside the scratch folder.
fn hostile() -> Vec<OsString> {
    let mut v: Vec<OsString> = [
        "",
        " ",
        "-",
        "--",
        "=",
        ":=",
        "-h",
        "--tools-dir",
        "--json",
        "1e20",
        "-1e20",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "-0",
        "0",
        "-1",
        "1e-300",
        "5e-324",
        "1e308",
        "1e309",
        "18446744073709551616",
        "-9223372036854775809",
        "4294967296",
        "0x10",
        "1_000",
        "  3",
        "ü",
        "名前",
        "\u{202e}evil",
        "a\u{0}b",
        "\n",
        "\t\r",
        "%s%n%x",
        "${HOME}",
        "$(id)",
        "'\"",
        "\\",
        "a=b",
        "a:=[",
        "a:=1e999",
        "..",
        ".",
        "~",
        "*",
        "?",
        "[",
        "{",
        "}",
        "C:\\x",
        "nul",
        "con",
        "-.5",
        "+1",
        "0.000001",
    ]
    .iter()
    .map(|s| s.replace('\0', "")) // a NUL cannot be an argument
    .map(OsString::from)
    .collect();
    v.push("x".repeat(70_000).into());
    v.push("é".repeat(5_000).into());
    v.push(OsStr::from_bytes(b"\xff\xfe\x80 not utf-8").to_owned());
    v
}

fn paths(w: &World) -> Vec<OsString> {
    let mut v: Vec<OsString> = [
        w.path("tools"),
        w.path("tools/hash"),
        w.path("broken"),
        w.path("broken/bad_tool"),
        w.path("file.txt"),
        w.path("file.txt/below"),
        w.path("missing/deeper"),
        w.path("üñí cødé\nline"),
        w.path("data"),
        w.path("tools/../tools"),
        // Absolute paths outside the scratch folder only where nothing can be written:
        // a character device (no folder can be made below it) and proc's read-only root.
        "/dev/null/x".into(),
        "/proc/toolhost-fuzz".into(),
        "../tools".into(),
        "../broken".into(),
        "out".into(),
        "./new one".into(),
        "..".into(),
        ".".into(),
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    v.extend(hostile().into_iter().take(12));
    v
}

fn strings(items: &[&str]) -> Vec<OsString> {
    items.iter().map(OsString::from).collect()
}

/// A value for an option or positional named `kind`.
/// A value for an option or positional named `kind` (`flag` is the option, if any).
fn value(rng: &mut Rng, w: &World, flag: &str, kind: &str, possible: &[String]) -> OsString {
    if !rng.calm && rng.chance(25) {
        return rng.pick(&hostile());
    }
    if !possible.is_empty() && (rng.calm || rng.chance(70)) {
        return rng.pick(possible).into();
    }
    if rng.calm {
        let calm: Vec<OsString> = match (flag, kind) {
            ("--config", _) => vec![w.path("good.toml").into()],
            ("--log-file", _) => vec!["log.txt".into(), w.path("logs.txt").into()],
            ("--data", _) => vec![w.path("data").into()],
            ("--tools-dir", _) | (_, "SEED_DIR") => {
                vec![w.path("tools").into(), w.path("broken").into()]
            }
            (_, "PATH") => vec![
                w.path("tools").into(),
                w.path("tools/hash").into(),
                w.path("broken/bad_tool").into(),
            ],
            (_, "TARGET_DIR" | "DIR") => {
                vec!["out".into(), w.path("data/tools").into(), ".".into()]
            }
            (_, "EMAIL") => strings(&["ada@example.com", "default", "ü@é"]),
            (_, "JSON") => strings(&[
                "{}",
                "{\"text\": \"x\"}",
                "{\"json\": \"[1]\", \"query\": \".\"}",
            ]),
            (_, "ADDR") => strings(&["127.0.0.1:0", "[::1]:0"]),
            (_, "KEY=VALUE") => strings(&[
                "text=hello",
                "text:=\"ü\"",
                "algorithm=sha256",
                "algorithm=md5",
                "json=[1,2,3]",
                "query=length",
                "encoding=hex",
                "expected=abc",
            ]),
            (_, "SECS") => Vec::new(),
            (_, "NAME") => strings(&["hash", "json_query", "text_stats"]),
            _ => strings(&[
                "hash",
                "json_query",
                "text_stats",
                "a",
                "time",
                "get_current_time",
                "tools",
            ]),
        };
        if !calm.is_empty() {
            return rng.pick(&calm);
        }
    }
    let pool = match kind {
        "DIR" | "DATA_PATH" | "PATH" | "SEED_DIR" | "TARGET_DIR" => paths(w),
        "EMAIL" => strings(&[
            "ada@example.com",
            "default",
            "tools",
            "TOOLS.",
            "users",
            ".hidden",
            "a/b",
            "a\\b",
            "\u{7f}",
            "ü@é",
            "..",
            "",
            &"u".repeat(300),
        ]),
        "SECS" => strings(&[
            "1e20",
            "NaN",
            "-0",
            "0",
            "inf",
            "1e-300",
            "5e-324",
            "1",
            "20",
            "2.5",
            "1e308",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "0x10",
            "",
        ]),
        "JSON" => {
            let mut v = strings(&[
                "{}",
                "[]",
                "null",
                "1",
                "\"s\"",
                "{\"text\": \"x\"}",
                "{\"text\": 1e20}",
                "{\"a\": 1e999}",
                "\"\\ud800\"",
                "{",
                "",
                "{\"__proto__\": {\"text\": 1}}",
                "{\"text\": \"x\", \"algorithm\": \"md9\"}",
            ]);
            v.push("[".repeat(10_000).into());
            v.push(format!("{}1{}", "[".repeat(100), "]".repeat(100)).into());
            v
        }
        "ADDR" => strings(&[
            "127.0.0.1:0",
            "[::1]:0",
            "localhost:0",
            "0.0.0.0:0",
            "[::]:0",
            "127.0.0.1:99999",
            "127.0.0.1",
            ":0",
            "unix:/x",
            "1.2.3.4:0",
            "256.0.0.1:0",
            "[::1",
            "",
        ]),
        "KEY=VALUE" => {
            let key = rng.pick(&strings(&[
                "text",
                "algorithm",
                "expected",
                "encoding",
                "json",
                "query",
                "",
                "__proto__",
                "a b",
                "ü",
            ]));
            let op = if rng.chance(50) { "=" } else { ":=" };
            let v = if !rng.calm && rng.chance(50) {
                rng.pick(&hostile())
            } else {
                value(rng, w, "", "JSON", &[])
            };
            let mut s = key;
            s.push(op);
            s.push(v);
            return s;
        }
        // Tool, agent, set and workspace names, URLs.
        _ => strings(&[
            "hash",
            "json_query",
            "text_stats",
            "a",
            "time",
            "ghost",
            "get_current_time",
            "tools",
            "../x",
            "-",
            "名前",
            "a b",
            &"n".repeat(300),
            "http://[::1",
            "x:",
        ]),
    };
    rng.pick(&pool)
}

/// One generated command line for `s`.
fn command_line(rng: &mut Rng, w: &World, s: &Surface) -> Vec<OsString> {
    let mut args: Vec<OsString> = s.path.iter().map(OsString::from).collect();
    for (flag, takes, possible) in &s.options {
        // `serve` always gets an address, so that it never takes a fixed port.
        let forced = flag == "--listen";
        let required = s.required.contains(flag);
        let included = forced || (required && rng.chance(95)) || rng.chance(40);
        if !included {
            continue;
        }
        // A repeated flag is a usage error clap catches; rare, so most runs go further.
        for _ in 0..(1 + usize::from(!rng.calm && rng.chance(10))) {
            match takes {
                None => args.push(flag.into()),
                Some(kind) => {
                    let mut v = value(rng, w, flag, kind, possible);
                    if forced && rng.calm {
                        v = rng.pick(&strings(&["127.0.0.1:0", "[::1]:0"]));
                    } else if forced {
                        v = rng.pick(&strings(&[
                            "127.0.0.1:0",
                            "[::1]:0",
                            "localhost:0",
                            "0.0.0.0:0",
                            "1.2.3.4:0",
                            "127.0.0.1:99999",
                            "",
                            "unix:/x",
                        ]));
                    }
                    if rng.chance(20) {
                        let mut joined = OsString::from(format!("{flag}="));
                        joined.push(v);
                        args.push(joined);
                    } else {
                        args.push(flag.into());
                        args.push(v);
                    }
                }
            }
        }
    }
    for (name, required, repeated) in &s.positionals {
        if !required && !rng.chance(60) {
            continue;
        }
        if !rng.calm && rng.chance(5) {
            continue; // a required one missing
        }
        let n = if *repeated { 1 + rng.below(3) } else { 1 };
        for _ in 0..n {
            args.push(value(rng, w, "", name, &[]));
        }
    }
    let has_data = args.iter().any(|a| a.as_bytes().starts_with(b"--data"));
    if rng.calm && !has_data && !s.required.iter().any(|f| f == "--user") {
        // `--user` needs `--data` here: a calm case keeps them together.
        if let Some(at) = args
            .iter()
            .position(|a| a.as_bytes().starts_with(b"--user"))
        {
            let flag = args.remove(at);
            if !flag.as_bytes().contains(&b'=') && at < args.len() {
                args.remove(at);
            }
        }
    }
    if rng.calm && args.len() > s.path.len() && rng.chance(35) {
        // The one hostile mutation: a value replaced, or an argument inserted.
        let at = s.path.len() + rng.below(args.len() - s.path.len());
        let bad = rng.pick(&hostile());
        if rng.chance(50) {
            args[at] = bad;
        } else {
            args.insert(at, bad);
        }
    }
    if !rng.calm && rng.chance(20) {
        let extra = rng.pick(&strings(&[
            "--bogus", "--", "stray", "-x", "--json=1", "-h", "-V",
        ]));
        let at = s.path.len() + rng.below(args.len() - s.path.len() + 1);
        args.insert(at, extra);
    }
    // Never a path above the scratch folder, even as a hostile value.
    assert!(!args.iter().any(|a| a.as_bytes().starts_with(b"../..")));
    args
}

/// What the command gets on stdin (`token hash` and `mcp` read it).
fn stdin_bytes(rng: &mut Rng) -> Vec<u8> {
    match rng.below(5) {
        0 => Vec::new(),
        1 => b"garbage{\n[1,2\n".to_vec(),
        2 => b"\xff\xfe\x00 not utf-8\n".to_vec(),
        3 => br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}"#
            .iter()
            .chain(b"\n")
            .copied()
            .collect(),
        _ => "a-token-\u{202e}\n".repeat(1000).into_bytes(),
    }
}

fn environment(rng: &mut Rng, w: &World) -> Vec<(&'static str, OsString)> {
    // The tool roots come from the environment unless a run names its own, so that most
    // runs reach the catalog, the runtime and the sandbox.
    let roots: OsString = if rng.calm || rng.chance(80) {
        w.path("tools").into()
    } else {
        rng.pick(&strings(&[":::", "../tools:../broken", "", "missing"]))
    };
    let mut env = vec![
        ("PATH", std::env::var_os("PATH").unwrap_or_default()),
        ("HOME", w.path("home").into()),
        ("XDG_DATA_HOME", w.path("xdg-data").into()),
        ("XDG_CACHE_HOME", w.path("xdg-cache").into()),
        ("TOOLHOST_CONFIG", w.path("good.toml").into()),
        ("PI_TOOLS_DIRS", roots),
    ];
    if rng.chance(15) {
        env.push((
            "TOOLHOST_LOG",
            rng.pick(&strings(&["trace", "[[[", "", "toolhost=debug,=", "off"])),
        ));
    }
    if !rng.calm && rng.chance(10) {
        env.push((
            "TOOLHOST_PLUGINS",
            rng.pick(&strings(&["web", ",,,", "web,web", "nope", "utilities"])),
        ));
    }
    if !rng.calm && rng.chance(10) {
        env.push((
            "TOOLHOST_CONFIG",
            rng.pick(&[
                w.path("bad.toml").into(),
                "/dev/null".into(),
                "missing.toml".into(),
            ]),
        ));
    }
    env
}

/// How a run ended.
struct Outcome {
    status: Option<ExitStatus>,
    stopped: bool,
    /// A command that should have ended by itself was still running after `HANG`.
    hung: bool,
    stderr: String,
}

fn run(args: &[OsString], env: &[(&str, OsString)], stdin: Vec<u8>, cwd: &Path) -> Outcome {
    let mut child: Child = Command::new(BIN)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let mut out = child.stdout.take().unwrap();
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let mut err = child.stderr.take().unwrap();
    let stderr = std::sync::Arc::new(Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&stderr);
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let watching = args.iter().any(|a| a.as_bytes().starts_with(b"--watch"));
    let keeps_running = args.first().is_some_and(|a| a == "serve" || a == "runner")
        || (args.first().is_some_and(|a| a == "list") && watching)
        || (args.first().is_some_and(|a| a == "cluster")
            && args.get(1).is_some_and(|a| a == "publish")
            && watching);
    let started = Instant::now();
    let mut stopped = false;
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        let serving = String::from_utf8_lossy(&stderr.lock().unwrap()).contains("serving MCP at");
        let elapsed = started.elapsed();
        if !stopped && ((keeps_running && (serving || elapsed > RUNNING_FOR)) || elapsed > HANG) {
            // A polite stop first: serve's shutdown path is part of what must not panic.
            let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            stopped = true;
        }
        if elapsed > HANG + Duration::from_secs(10) {
            // Not even a stop ends it (for `serve`: a shutdown that hangs).
            killed = true;
            child.kill().unwrap();
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    reader.join().unwrap();
    let stderr = String::from_utf8_lossy(&stderr.lock().unwrap()).into_owned();
    Outcome {
        status,
        stopped: stopped && keeps_running,
        hung: killed || (stopped && !keeps_running),
        stderr,
    }
}

fn shown(args: &[OsString]) -> String {
    args.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            let s = if s.len() > 80 {
                format!("{}…({} bytes)", &s[..s.floor_char_boundary(80)], s.len())
            } else {
                s.into_owned()
            };
            format!("{s:?}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn no_command_panics_whatever_its_arguments() {
    let mut found = Vec::new();
    surfaces(Vec::new(), &mut found);
    // The help parser must have seen the whole surface, or this test would test little.
    let names: Vec<String> = found.iter().map(|s| s.path.join(" ")).collect();
    for expected in [
        "check",
        "list",
        "sync",
        "new",
        "call",
        "sandbox status",
        "plugins",
        "resolve",
        "doctor",
        "mcp",
        "serve",
        "token new",
        "token hash",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }
    let call = found.iter().find(|s| s.path == ["call"]).unwrap();
    assert!(
        call.options
            .iter()
            .any(|(f, v, _)| f == "--timeout" && v.as_deref() == Some("SECS")),
        "{call:?}"
    );
    assert!(
        call.positionals
            .iter()
            .any(|(n, _, repeated)| n == "KEY=VALUE" && *repeated),
        "{call:?}"
    );

    let seed: u64 = std::env::var("TOOLHOST_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x70_0150_57ED);
    let world = World::new();
    let mut rng = Rng {
        state: seed | 1,
        calm: false,
    };
    let mut cases = Vec::new();
    for s in &found {
        for i in 0..CASES_PER_COMMAND {
            rng.calm = i % 3 != 0;
            cases.push((
                command_line(&mut rng, &world, s),
                environment(&mut rng, &world),
                stdin_bytes(&mut rng),
            ));
        }
    }

    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let codes = Mutex::new(std::collections::BTreeMap::<String, usize>::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((args, env, stdin)) = cases.get(i) else {
                        break;
                    };
                    let o = run(args, env, stdin.clone(), &world.cwd());
                    let code = o.status.and_then(|s| s.code());
                    let label = match (code, o.stopped) {
                        _ if o.hung => "hung".to_string(),
                        (_, true) => "stopped".to_string(),
                        (Some(c), _) => c.to_string(),
                        (None, _) => "signal".to_string(),
                    };
                    if std::env::var_os("TOOLHOST_FUZZ_SHOW").is_some() {
                        eprintln!(
                            "== {label}: {}\n{}",
                            shown(args),
                            o.stderr.lines().take(3).collect::<Vec<_>>().join("\n")
                        );
                    }
                    *codes.lock().unwrap().entry(label).or_default() += 1;
                    let ok_code = !o.hung && (o.stopped || matches!(code, Some(0..=2)));
                    if !ok_code || o.stderr.contains("panicked") {
                        let env: Vec<String> = env
                            .iter()
                            .skip(4)
                            .map(|(k, v)| format!("{k}={:?}", v.to_string_lossy()))
                            .collect();
                        failures.lock().unwrap().push(format!(
                            "{:?} (stopped: {}, hung: {}): {} toolhost {}\n{}",
                            o.status,
                            o.stopped,
                            o.hung,
                            env.join(" "),
                            shown(args),
                            o.stderr.chars().take(2000).collect::<String>()
                        ));
                    }
                }
            });
        }
    });
    let codes = codes.into_inner().unwrap();
    eprintln!(
        "{} runs with seed {seed} in {:.1} s; endings: {codes:?}",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} runs panicked or ended badly (replay with TOOLHOST_FUZZ_SEED={seed}):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
    // The generator reaches every side: runs that succeed, tool and check errors (exit 1,
    // which needs a call run in the sandbox or a catalog checked), usage errors, and
    // servers that came up and were stopped.
    for ending in ["0", "1", "2", "stopped"] {
        assert!(
            codes.get(ending).copied().unwrap_or(0) >= 5,
            "{ending}: {codes:?}"
        );
    }
}
