//! The console's playground and history in a real Chromium: `serve --database` with the
//! fixture tools and `ticker` (written here: its progress messages carry the wall-clock
//! time the tool sent them), driven by `tests/browser/playground.mjs`: validation refuses
//! bad values before anything is sent, `slow` runs with its progress bar and message
//! advancing, another run is cancelled, `ticker` measures how long a progress update
//! takes from the tool to the screen, then the history (grouped, filtered by status), a
//! call's detail with its result, and Replay into the playground with the form prefilled;
//! another user sees none of those calls.
#![allow(clippy::unwrap_used)]

#[path = "mcp/browser.rs"]
mod browser;
#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/stored.rs"]
mod stored;

use browser::{assert_budgets, assert_screenshots, run_script, serve_console};
use common::Fixture;
use serde_json::Value;
use stored::new_token;

/// A progress update must be on screen within this long of the tool sending it.
const PROGRESS_BUDGET_MS: f64 = 100.0;

/// A tool whose progress messages say when they were sent (`Date.now()`, the same clock
/// the browser reads: both run on this machine).
const TICKER_MD: &str = "---
name: ticker
label: Ticker
description: Reports a tick with the time it was sent, then returns the count as JSON.
version: 1
inputs:
  steps:
    type: number
    description: How many ticks.
  delay_ms:
    type: number
    description: Pause after each tick, in milliseconds.
    optional: true
    default: 100
---

# Ticker
";

const TICKER_TS: &str = "type Update = (partial: { content: Array<{ type: string; text: string }> }) => void;

export async function execute(
  _toolCallId: string,
  params: { steps: number; delay_ms: number },
  _signal?: AbortSignal,
  onUpdate?: Update,
) {
  for (let i = 1; i <= params.steps; i++) {
    onUpdate?.({ content: [{ type: 'text', text: `tick ${i} of ${params.steps} sent at ${Date.now()}` }] });
    await new Promise((resolve) => setTimeout(resolve, params.delay_ms));
  }
  return { content: [{ type: 'text', text: JSON.stringify({ ticks: params.steps }) }] };
}
";

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_playground_and_history_in_chromium() {
    let f = Fixture::new();
    let ticker = f.tools().join("ticker");
    std::fs::create_dir_all(&ticker).unwrap();
    std::fs::write(ticker.join("TOOL.md"), TICKER_MD).unwrap();
    std::fs::write(ticker.join("index.ts"), TICKER_TS).unwrap();
    let (mut server, token, base) = serve_console(&f);

    // A user who may read but not call, to see that the history is one's own.
    let reader = new_token(
        &f,
        &f.dir.path().join("toolhost.db"),
        &["--user", "rita", "--scope", "tools:read"],
    );
    let result: Value = run_script("playground", &base, &token, &[("READER_TOKEN", &reader)]);
    let pages = &result["pages"];

    // Validation refused bad values before anything was sent.
    let v = &pages["validation"];
    assert_eq!(v["callsSent"], 0, "{v}");
    assert!(
        v["echoRequired"].as_str().unwrap().contains("required"),
        "{v}"
    );
    assert!(
        v["slowNumber"].as_str().unwrap().contains("not a number"),
        "{v}"
    );
    assert!(v["rawJson"].as_str().unwrap().contains("line 1"), "{v}");

    // `slow`: the message and the bar advanced step by step, then its result.
    let slow = &pages["slow"];
    let seen = strings(&slow["messages"]);
    let steps: Vec<&String> = seen.iter().filter(|m| m.starts_with("step ")).collect();
    assert!(steps.len() >= 3, "the progress advanced: {seen:?}");
    assert_eq!(steps.last().unwrap().as_str(), "step 5 of 5", "{seen:?}");
    let bars: Vec<f64> = slow["bars"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert!(bars.windows(2).all(|w| w[0] <= w[1]), "{bars:?}");
    assert!(
        bars.iter().any(|b| *b > 0.0 && *b < 1.0),
        "a determinate bar: {bars:?}"
    );
    assert_eq!(slow["outcome"], "success", "{slow}");
    assert_eq!(slow["result"], "done 5 steps", "{slow}");
    assert!(slow["elapsed"].as_str().unwrap().ends_with('s'), "{slow}");

    // The cancelled run.
    assert_eq!(
        pages["cancel"]["outcome"], "cancelled",
        "{}",
        pages["cancel"]
    );

    // The budget: every progress update on screen within 100 ms of the tool sending it.
    let lat = &pages["latency"];
    let frames: Vec<f64> = lat["frame"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert!(frames.len() >= 10, "ticks measured: {lat}");
    let max = frames.iter().copied().fold(0.0, f64::max);
    eprintln!("progress, tool to screen (ms): {frames:?}; max {max}");
    assert!(
        max < PROGRESS_BUDGET_MS,
        "a progress update took {max} ms to reach the screen: {lat}"
    );
    assert_eq!(lat["result"], "{\n  \"ticks\": 20\n}", "{lat}");

    // History: newest first, the two `slow` runs grouped, the filter, the detail, replay.
    let h = &pages["history"];
    assert_eq!(strings(&h["rows"]), ["ticker", "slow ×2", "echo"], "{h}");
    assert_eq!(strings(&h["cancelled"]), ["slow"], "{h}");
    let d = &pages["detail"];
    assert!(
        d["arguments"].as_str().unwrap().contains("\"steps\": 5"),
        "{d}"
    );
    assert_eq!(d["result"], "done 5 steps", "{d}");
    assert_eq!(d["status"], "success", "{d}");
    // Run from the console (through the API, with the session cookie): logged as such.
    assert_eq!(d["surface"], "console", "{d}");
    let r = &pages["replay"];
    assert_eq!(r["steps"], "5", "{r}");
    assert_eq!(r["delay"], "300", "{r}");

    // Another user sees none of it, and may not run what it may not call.
    let other = &pages["reader"];
    assert_eq!(other["rows"], 0, "{other}");
    assert_eq!(other["detailStatus"], 404, "{other}");
    assert!(
        other["replay"]
            .as_str()
            .unwrap()
            .contains("not in your history"),
        "{other}"
    );
    assert_eq!(other["runDisabled"], true, "{other}");
    assert_eq!(other["steps"], "", "nothing replayed: {other}");

    assert_budgets(&result, 4);
    assert_screenshots(&[
        "playground",
        "playground-invalid",
        "playground-running",
        "playground-result",
        "playground-cancelled",
        "history",
        "history-cancelled",
        "call-detail",
        "playground-replay",
    ]);
    server.stop();
}
