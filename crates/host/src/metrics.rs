//! What `/metrics` reports about calls: counts by tool and outcome, and a latency
//! histogram. Fed by the call log (every surface records every call there), so no
//! surface counts on its own.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};

use crate::store::{CallLog, CallOutcome, CallRecord};

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0,
];

/// Call counters, shared by the call log that feeds them and the surface that shows them.
#[derive(Debug, Default)]
pub struct CallMetrics {
    inner: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    /// Tool → outcome → calls.
    by_tool: BTreeMap<String, BTreeMap<&'static str, u64>>,
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

fn outcome_name(o: CallOutcome) -> &'static str {
    match o {
        CallOutcome::Ok => "success",
        CallOutcome::Error => "error",
        CallOutcome::Abandoned => "cancelled",
        CallOutcome::TimedOut => "timeout",
        CallOutcome::Denied => "denied",
    }
}

impl CallMetrics {
    fn observe(&self, call: &CallRecord) {
        let mut c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // The tool is usually known already: no allocation then.
        let outcome = outcome_name(call.outcome);
        match c.by_tool.get_mut(&call.tool) {
            Some(outcomes) => *outcomes.entry(outcome).or_default() += 1,
            None => {
                c.by_tool
                    .insert(call.tool.clone(), BTreeMap::from([(outcome, 1)]));
            }
        }
        // A refusal ran nothing: it has no latency worth a bucket.
        if call.outcome == CallOutcome::Denied {
            return;
        }
        let secs = call.duration.as_secs_f64();
        for (i, le) in BUCKETS.iter().enumerate() {
            if secs <= *le {
                c.buckets[i] += 1;
            }
        }
        c.count += 1;
        c.sum += secs;
    }

    /// The counters in Prometheus's text format.
    pub fn render(&self, out: &mut String) {
        let c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        out.push_str("# HELP toolhost_calls_total Tool calls, by tool and outcome.\n");
        out.push_str("# TYPE toolhost_calls_total counter\n");
        for (tool, outcomes) in &c.by_tool {
            let tool = escape(tool);
            for (outcome, n) in outcomes {
                let _ = writeln!(
                    out,
                    "toolhost_calls_total{{tool=\"{tool}\",outcome=\"{outcome}\"}} {n}"
                );
            }
        }
        out.push_str(
            "# HELP toolhost_call_duration_seconds How long calls took (refusals left out).\n",
        );
        out.push_str("# TYPE toolhost_call_duration_seconds histogram\n");
        for (le, n) in BUCKETS.iter().zip(c.buckets) {
            let _ = writeln!(
                out,
                "toolhost_call_duration_seconds_bucket{{le=\"{le}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "toolhost_call_duration_seconds_bucket{{le=\"+Inf\"}} {}",
            c.count
        );
        let _ = writeln!(out, "toolhost_call_duration_seconds_sum {}", c.sum);
        let _ = writeln!(out, "toolhost_call_duration_seconds_count {}", c.count);
    }
}

/// A label value as the text format wants it.
pub fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A call log that counts every call into [`CallMetrics`], then hands it on.
pub(crate) struct Metered {
    pub(crate) metrics: Arc<CallMetrics>,
    pub(crate) next: Arc<dyn CallLog>,
}

impl CallLog for Metered {
    fn record(&self, call: CallRecord) {
        self.metrics.observe(&call);
        self.next.record(call);
    }

    fn counts(&self) -> crate::store::LogCounts {
        self.next.counts()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn call(tool: &str, outcome: CallOutcome, ms: u64) -> CallRecord {
        CallRecord {
            id: None,
            tool_set: None,
            user: "u".into(),
            token: None,
            agent: None,
            tool: tool.into(),
            surface: "mcp-stdio",
            started: SystemTime::now(),
            duration: Duration::from_millis(ms),
            outcome,
            error: None,
            result_bytes: 0,
            arguments: "{}".into(),
            result: None,
        }
    }

    #[test]
    fn counts_render_in_the_text_format() {
        let m = CallMetrics::default();
        m.observe(&call("echo", CallOutcome::Ok, 3));
        m.observe(&call("echo", CallOutcome::Ok, 40));
        m.observe(&call("we\"ird", CallOutcome::Denied, 0));
        let mut out = String::new();
        m.render(&mut out);
        assert!(
            out.contains("toolhost_calls_total{tool=\"echo\",outcome=\"success\"} 2\n"),
            "{out}"
        );
        assert!(
            out.contains("toolhost_calls_total{tool=\"we\\\"ird\",outcome=\"denied\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("toolhost_call_duration_seconds_bucket{le=\"0.005\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("toolhost_call_duration_seconds_bucket{le=\"0.05\"} 2\n"),
            "{out}"
        );
        assert!(
            out.contains("toolhost_call_duration_seconds_count 2\n"),
            "{out}"
        );
    }
}
