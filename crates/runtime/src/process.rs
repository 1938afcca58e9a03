//! Python and Bash tools: one process per call, speaking the documented protocol.
//!
//! In: parameters as a JSON object on stdin and as `TOOL_PARAM_<NAME>` variables, the call
//! id as `TOOL_CALL_ID`. Out: stdout is the result (plain text, or a JSON object with a
//! `content` array), stderr lines starting `::progress::` are progress, the rest is logged,
//! and a non-zero exit status makes the call an error.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::RuntimeError;
use crate::config::{ToolEnv, UserSpace};
use crate::events::{ErrorKind, EventReceiver, EventSender, ExecutionEvent};
use crate::launch::{Launcher, Started, ToolProcess};
use crate::lines::for_each_line;
use toolhost_sandbox::LaunchArg;

const PROGRESS_PREFIX: &str = "::progress::";
const MAX_LINE: usize = 64 * 1024;

/// `TOOL_PARAM_<NAME>` for each parameter that has a value.
pub(crate) fn param_env(params: &Value) -> Vec<(String, String)> {
    let Value::Object(map) = params else {
        return Vec::new();
    };
    map.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let name: String = k
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_uppercase()
                    } else {
                        '_'
                    }
                })
                .collect();
            let value = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (format!("TOOL_PARAM_{name}"), value)
        })
        .collect()
}

pub(crate) struct ProcessCall<'a> {
    pub launcher: &'a Launcher,
    pub program: &'a Path,
    pub entry: &'a Path,
    pub dir: &'a Path,
    pub space: &'a UserSpace,
    pub env: &'a ToolEnv,
    pub network: bool,
    pub params: &'a Value,
    pub tool_call_id: &'a str,
    pub max_text: usize,
}

/// Starts the call's process; returns its process group and the call's events.
pub(crate) async fn spawn(call: ProcessCall<'_>) -> Result<(i32, EventReceiver), RuntimeError> {
    let mut extra_env = param_env(call.params);
    extra_env.push(("TOOL_CALL_ID".into(), call.tool_call_id.to_string()));
    let Started {
        mut child,
        pgid,
        lease,
        refill,
        watched,
        ..
    } = call
        .launcher
        .start(ToolProcess {
            program: call.program,
            args: vec![LaunchArg::Path(call.entry.to_path_buf())],
            cwd: call.dir,
            space: call.space,
            env: call.env,
            extra_env,
            stdin: true,
            network: call.network,
            per_call: true,
            extra: Vec::new(),
            read_only: Vec::new(),
        })
        .await?;
    let (tx, rx) = crate::events::channel();
    let input = serde_json::to_vec(call.params).unwrap_or_default();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let max_text = call.max_text;
    tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            // A tool that never reads stdin must not block us: ignore a broken pipe.
            tokio::spawn(async move {
                let _ = stdin.write_all(&input).await;
            });
        }
        let mut out = tokio::spawn(read_capped(stdout, max_text + 64 * 1024));
        let mut err = tokio::spawn(read_stderr(stderr, tx.clone()));
        let status = child.wait().await;
        drop((lease, refill));
        // Background children may keep the pipes open after the tool exits: give them a
        // moment, then end the whole group, which closes the pipes, and read what is left.
        let (mut o, mut e) = (None, None);
        let drained = drain(&mut out, &mut err, &mut o, &mut e);
        if tokio::time::timeout(Duration::from_millis(500), drained)
            .await
            .is_err()
        {
            crate::node::signal_group(pgid, rustix::process::Signal::KILL);
            let rest = drain(&mut out, &mut err, &mut o, &mut e);
            // Only a process that left the group can hold the pipes this long.
            if tokio::time::timeout(Duration::from_secs(5), rest)
                .await
                .is_err()
            {
                out.abort();
                err.abort();
            }
        }
        let stdout = o.and_then(Result::ok).unwrap_or_default();
        let stderr_tail = e.and_then(Result::ok).unwrap_or_default();
        crate::node::signal_group(pgid, rustix::process::Signal::KILL);
        let (bytes, total) = stdout;
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        // `print` and `echo` end with a newline that is not part of the answer.
        if text.ends_with('\n') {
            text.pop();
            if text.ends_with('\r') {
                text.pop();
            }
        }
        let stopped = watched
            .as_ref()
            .and_then(|w| w.stopped())
            .map(str::to_string);
        drop(watched);
        let event = match status {
            // Stopped by the home quota: that is the reason, whatever the tool printed.
            Ok(s) if !s.success() && stopped.is_some() => ExecutionEvent::Error {
                kind: ErrorKind::Quota,
                message: stopped.unwrap_or_default(),
                stack: String::new(),
            },
            Ok(s) if s.success() => {
                let truncated_from = (total > bytes.len()).then_some(total);
                let value = match serde_json::from_str::<Value>(text.trim()) {
                    Ok(v @ Value::Object(_))
                        if truncated_from.is_none()
                            && v.get("content").is_some_and(Value::is_array) =>
                    {
                        v
                    }
                    _ => Value::String(text),
                };
                ExecutionEvent::Result {
                    value,
                    truncated_from,
                }
            }
            Ok(s) => {
                let mut message = text.trim().to_string();
                if message.is_empty() {
                    message = stderr_tail.trim().to_string();
                }
                if message.is_empty() {
                    message = crate::node::describe_exit(s);
                }
                ExecutionEvent::Error {
                    kind: ErrorKind::Exit,
                    message,
                    stack: String::new(),
                }
            }
            Err(e) => ExecutionEvent::Died(format!("waiting for the tool's process failed: {e}")),
        };
        let _ = tx.send(event);
    });
    Ok((pgid, rx))
}

/// Waits for both readers, remembering which finished: a `JoinHandle` must not be polled
/// again once it has produced its output, and this may be resumed after a timeout.
async fn drain<A, B>(
    a: &mut tokio::task::JoinHandle<A>,
    b: &mut tokio::task::JoinHandle<B>,
    ra: &mut Option<Result<A, tokio::task::JoinError>>,
    rb: &mut Option<Result<B, tokio::task::JoinError>>,
) {
    while ra.is_none() || rb.is_none() {
        tokio::select! {
            r = &mut *a, if ra.is_none() => *ra = Some(r),
            r = &mut *b, if rb.is_none() => *rb = Some(r),
        }
    }
}

/// Reads all of a stream, keeping at most `cap` bytes; returns them and the total length.
async fn read_capped(stream: Option<impl AsyncRead + Unpin>, cap: usize) -> (Vec<u8>, usize) {
    let Some(mut stream) = stream else {
        return (Vec::new(), 0);
    };
    let mut kept = Vec::new();
    let mut total = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n;
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, total)
}

/// Turns stderr into progress and log events; returns the last lines that were not
/// progress (the error message of a failing tool that printed nothing to stdout).
async fn read_stderr(stream: Option<impl AsyncRead + Unpin>, tx: EventSender) -> String {
    const TAIL: usize = 2048;
    let Some(stream) = stream else {
        return String::new();
    };
    let mut tail = String::new();
    for_each_line(stream, MAX_LINE, |text, _| {
        let event = match text.strip_prefix(PROGRESS_PREFIX) {
            Some(rest) => ExecutionEvent::Progress(vec![crate::result::text_block(rest.trim())]),
            None => {
                tail.push_str(&text);
                tail.push('\n');
                if tail.len() > TAIL {
                    let mut cut = tail.len() - TAIL;
                    while !tail.is_char_boundary(cut) {
                        cut += 1;
                    }
                    tail.drain(..cut);
                }
                ExecutionEvent::Log {
                    level: "stderr".into(),
                    text,
                }
            }
        };
        let _ = tx.send(event);
    })
    .await;
    tail
}
