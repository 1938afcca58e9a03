//! One call's row in the call log, kept by every surface the same way: begun when the call
//! is accepted, finished with its result, and recorded however it ends (a call dropped
//! before its result, because its caller went away or cancelled it, is recorded as
//! abandoned).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use toolhost_runtime::{Stopped, Target, ToolResult};

use crate::Caller;
use crate::store::{CallLog, CallOutcome, CallRecord};

/// A call on its way to the call log. Dropping it records the call.
pub struct CallTrace {
    log: Arc<dyn CallLog>,
    record: CallRecord,
    started: Instant,
    finished: bool,
}

impl CallTrace {
    /// `caller` calling `tool` (resolved to `target`) through `surface` (`mcp-http`,
    /// `api`, …), with `args` (`sensitive` ones replaced before they are kept).
    pub fn begin(
        log: Arc<dyn CallLog>,
        caller: &Caller,
        tool: &str,
        surface: &'static str,
        args: &Value,
        target: &Target,
    ) -> CallTrace {
        let mut record = record(caller, tool, surface);
        record.arguments = CallRecord::arguments_for_log(args, &target.tool.sensitive_inputs());
        record.tool_set = target.set.clone();
        CallTrace {
            log,
            record,
            started: Instant::now(),
            finished: false,
        }
    }

    /// Gives the call's row this id (a surface that names its calls, so that its id finds
    /// the row later).
    pub fn with_id(mut self, id: String) -> CallTrace {
        self.record.id = Some(id);
        self
    }

    /// The call ended with `result`.
    pub fn finish(&mut self, result: &ToolResult) {
        self.finished = true;
        self.record.outcome = match (result.stopped, result.is_error) {
            (Some(Stopped::TimedOut), _) => CallOutcome::TimedOut,
            (Some(Stopped::Cancelled), _) => CallOutcome::Abandoned,
            (Some(Stopped::Overloaded), _) => CallOutcome::Error,
            (None, true) => CallOutcome::Error,
            (None, false) => CallOutcome::Ok,
        };
        if result.is_error {
            self.record.error = Some(first_chars(&result.joined_text()));
        }
        self.record.result_bytes = json_size(result);
        self.record.result = Some(CallRecord::result_for_log(result));
    }

    /// Whether [`CallTrace::finish`] was called.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// This call was refused before it ran (`why` says why, such as too many calls
    /// running): it is recorded as denied, not abandoned.
    pub fn refuse(mut self, why: &str) {
        self.finished = true;
        self.record.outcome = CallOutcome::Denied;
        self.record.error = Some(first_chars(why));
    }

    /// Records a call refused before anything ran (`why` says why).
    pub fn deny(log: &dyn CallLog, caller: &Caller, tool: &str, surface: &'static str, why: &str) {
        let mut record = record(caller, tool, surface);
        record.outcome = CallOutcome::Denied;
        record.error = Some(first_chars(why));
        log.record(record);
    }
}

impl Drop for CallTrace {
    fn drop(&mut self) {
        let mut record = std::mem::replace(&mut self.record, record_of_nobody());
        record.duration = self.started.elapsed();
        // Never waits: the response goes out right after this.
        self.log.record(record);
    }
}

/// The first 500 characters of an error, as the log keeps it.
fn first_chars(text: &str) -> String {
    text.chars().take(500).collect()
}

/// A record of `caller` calling `tool`, its outcome to be filled in (abandoned until then).
fn record(caller: &Caller, tool: &str, surface: &'static str) -> CallRecord {
    CallRecord {
        id: None,
        user: caller.user().to_string(),
        token: caller.token.clone(),
        agent: caller.agent.clone(),
        tool: tool.to_string(),
        tool_set: None,
        surface,
        started: SystemTime::now(),
        duration: Duration::ZERO,
        outcome: CallOutcome::Abandoned,
        error: None,
        result_bytes: 0,
        arguments: "{}".to_string(),
        result: None,
    }
}

fn record_of_nobody() -> CallRecord {
    CallRecord {
        id: None,
        user: String::new(),
        token: None,
        agent: None,
        tool: String::new(),
        tool_set: None,
        surface: "",
        started: SystemTime::UNIX_EPOCH,
        duration: Duration::ZERO,
        outcome: CallOutcome::Abandoned,
        error: None,
        result_bytes: 0,
        arguments: String::new(),
        result: None,
    }
}

/// The size of `value`'s JSON, counted as it is written, without keeping it (a result may
/// be a megabyte, and the response is serialised again on its way out).
pub fn json_size(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Mutex;

    use super::*;
    use toolhost_runtime::UserSpace;

    #[derive(Default)]
    struct Rows(Mutex<Vec<CallRecord>>);

    impl CallLog for Rows {
        fn record(&self, call: CallRecord) {
            self.0.lock().unwrap().push(call);
        }
    }

    fn ada() -> Caller {
        Caller::new(UserSpace {
            user: "ada".into(),
            home: "/d/ada".into(),
        })
    }

    /// A tool whose `key` input is sensitive.
    struct Keyed;

    impl toolhost_runtime::NativeTool for Keyed {
        fn name(&self) -> &str {
            "t"
        }
        fn description(&self) -> &str {
            "A test tool."
        }
        fn input_schema(&self) -> Value {
            serde_json::json!({"type": "object"})
        }
        fn sensitive_inputs(&self) -> Vec<String> {
            vec!["key".into()]
        }
        fn call(
            &self,
            _args: Value,
            _ctx: toolhost_runtime::NativeContext,
        ) -> toolhost_runtime::NativeOutput {
            Box::pin(async { Ok(Value::Null) })
        }
    }

    #[test]
    fn a_trace_records_its_outcome_or_abandonment() {
        let rows = Arc::new(Rows::default());
        let args = serde_json::json!({"q": "x", "key": "s3cret"});
        let mut target = Target::new(toolhost_runtime::ToolRef::Native(Arc::new(Keyed)));
        target.set = Some("keys".into());
        let mut t =
            CallTrace::begin(rows.clone(), &ada(), "t", "api", &args, &target).with_id("c1".into());
        t.finish(&ToolResult::error("boom"));
        drop(t);
        drop(CallTrace::begin(
            rows.clone(),
            &ada(),
            "u",
            "api",
            &args,
            &target,
        ));
        CallTrace::deny(rows.as_ref(), &ada(), "v", "api", "not granted");
        let rows = rows.0.lock().unwrap();
        assert_eq!(rows[0].id.as_deref(), Some("c1"));
        assert_eq!(rows[0].tool_set.as_deref(), Some("keys"));
        assert_eq!(rows[0].outcome, CallOutcome::Error);
        assert_eq!(rows[0].error.as_deref(), Some("boom"));
        assert!(
            !rows[0].arguments.contains("s3cret"),
            "{}",
            rows[0].arguments
        );
        assert!(rows[0].result_bytes > 0);
        let result: Value = serde_json::from_str(rows[0].result.as_deref().unwrap()).unwrap();
        assert_eq!(result["isError"], true);
        assert_eq!(result["content"][0]["text"], "boom");
        assert_eq!(rows[1].result, None);
        assert_eq!(rows[1].outcome, CallOutcome::Abandoned);
        assert_eq!(rows[2].outcome, CallOutcome::Denied);
        assert_eq!(rows[2].error.as_deref(), Some("not granted"));
    }
}

#[cfg(test)]
mod result_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::MAX_LOGGED_RESULT;

    #[test]
    fn a_large_result_is_cut_to_the_limit_with_a_marker() {
        let small = ToolResult::text("hello");
        let kept: Value = serde_json::from_str(&CallRecord::result_for_log(&small)).unwrap();
        assert_eq!(kept["content"][0]["text"], "hello");
        assert!(kept.get("truncated_from_bytes").is_none());
        // Control characters escape to six bytes each: the cut still fits.
        let big = ToolResult::text("\u{1}".repeat(100_000));
        let text = CallRecord::result_for_log(&big);
        assert!(text.len() <= MAX_LOGGED_RESULT, "{}", text.len());
        let kept: Value = serde_json::from_str(&text).unwrap();
        assert!(kept["truncated_from_bytes"].as_u64().unwrap() > 100_000);
        assert!(kept["content"][0]["text"].as_str().unwrap().ends_with('…'));
    }
}
