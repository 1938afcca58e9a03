//! The typed messages against the real harness: what it sends and handles, read from
//! its source, must be exactly the enums' kinds, and a conversation with it (on real
//! Node.js) must produce only frames that the host's strict types accept.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::config::{ToolEnv, UserSpace};
use crate::launch::{Launcher, ToolProcess};
use crate::node::frame;
use toolhost_sandbox::LaunchArg;

const HARNESS: &str = super::super::HARNESS;

/// Every distinct capture of `pattern`'s first group in the harness.
fn captures(pattern: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let (before, after) = pattern.split_once("(WORD)").unwrap();
    let mut rest = HARNESS;
    while let Some(at) = rest.find(before) {
        rest = &rest[at + before.len()..];
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if rest[word.len()..].starts_with(after) && !word.is_empty() {
            found.insert(word);
        }
    }
    found
}

fn set<'a>(words: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    words.into_iter().map(str::to_string).collect()
}

#[test]
fn the_harness_sends_exactly_the_worker_kinds_and_handles_exactly_the_host_kinds() {
    // Sent: `{ type: 'x', id…` / `{ type: 'ready', pid…` and the result's fast path,
    // `{"type":"result",…` (the progress blocks' `{ type: 'text', text…` are content).
    let mut sent = captures("{ type: '(WORD)', id");
    sent.extend(captures("{ type: '(WORD)', pid"));
    sent.extend(captures("{\"type\":\"(WORD)\","));
    assert_eq!(sent, set(WorkerKind::ALL.map(WorkerKind::as_str)));

    let handled = captures("message.type === '(WORD)'");
    assert_eq!(handled, set(HostMessage::KINDS));
    let params = json!({});
    let call = HostMessage::Call(sample_call(&params));
    let cancel = HostMessage::Cancel { id: 1 };
    assert_eq!(set([call.kind(), cancel.kind()]), set(HostMessage::KINDS));

    let kinds = captures("kind: '(WORD)'");
    let ours: BTreeSet<String> = WorkerErrorKind::ALL
        .iter()
        .map(|k| {
            serde_json::to_value(k)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds, ours);
}

fn sample_call(params: &Value) -> CallMessage<'_> {
    static OP: crate::plugin::PluginOp = crate::plugin::PluginOp::Load;
    static SETTINGS: Value = Value::Null;
    CallMessage {
        id: 7,
        entry: Path::new("/tools/x/index.ts"),
        version: "v1",
        tool_call_id: "call_1",
        params,
        max_text: 100,
        plugin: Some(crate::plugin::PluginMessage {
            op: crate::plugin::PluginCallOp::Op(&OP),
            settings: &SETTINGS,
        }),
    }
}

#[test]
fn a_call_carries_exactly_the_fields_the_harness_reads() {
    let params = json!({"q": 1});
    let encoded = serde_json::to_value(HostMessage::Call(sample_call(&params))).unwrap();
    let fields: BTreeSet<String> = encoded
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "type")
        .cloned()
        .collect();
    let start = HARNESS.find("function runCall({ ").unwrap() + "function runCall({ ".len();
    let end = start + HARNESS[start..].find(" })").unwrap();
    let read: BTreeSet<String> = HARNESS[start..end]
        .split(',')
        .map(|f| f.trim().to_string())
        .collect();
    assert_eq!(fields, read);
    assert_eq!(
        serde_json::to_value(HostMessage::Cancel { id: 3 }).unwrap(),
        json!({"type": "cancel", "id": 3})
    );
}

#[test]
fn worker_messages_round_trip_and_are_read_strictly() {
    let samples = [
        json!({"type": "ready", "pid": 12, "node": "v20.0.0"}),
        json!({"type": "progress", "id": 1, "content": [{"type": "text", "text": "a"}]}),
        json!({"type": "log", "id": null, "level": "log", "text": "t"}),
        json!({"type": "log", "id": 2, "level": "stderr", "text": "t"}),
        json!({"type": "result", "id": 1, "truncated": false, "value": {"content": []}}),
        json!({"type": "result", "id": 1, "truncated": true, "originalLength": 9, "value": "abc"}),
        json!({"type": "error", "id": 1, "kind": "throw", "message": "m", "stack": "s"}),
    ];
    for sample in samples {
        let message: WorkerMessage = serde_json::from_value(sample.clone()).unwrap();
        let back = serde_json::to_value(&message).unwrap();
        assert_eq!(back, sample);
        assert_eq!(back["type"], message.kind().as_str());
    }
    // A serialisation failure carries no stack.
    let m: WorkerMessage =
        serde_json::from_str(r#"{"type":"error","id":1,"kind":"serialize","message":"m"}"#)
            .unwrap();
    assert!(matches!(m, WorkerMessage::Error(ErrorMessage { ref stack, .. }) if stack.is_empty()));
    for bad in [
        r#"{"type":"gossip","id":1}"#,
        r#"{"type":"progress","id":1,"content":[],"extra":1}"#,
        r#"{"type":"error","id":1,"kind":"oops","message":"m"}"#,
        r#"{"id":1,"type":"progress","content":[]}"#,
        r#"{"type":"result","id":1,"value":1}"#,
        r#"[]"#,
    ] {
        assert!(serde_json::from_str::<WorkerMessage>(bad).is_err(), "{bad}");
    }
}

/// A tool module for the conversation: every way a call ends.
const TOOL: &str = r#"
export async function execute(toolCallId, params, signal, onUpdate) {
  switch (params.mode) {
    case 'ok':
      console.log('hello from', toolCallId);
      process.stderr.write('to stderr\n');
      onUpdate({ content: [{ type: 'text', text: 'half way' }] });
      return { content: [{ type: 'text', text: 'done' }] };
    case 'throw':
      throw new Error('it broke');
    case 'huge':
      return 'x'.repeat(70000);
    case 'bigint':
      return { n: 1n };
    case 'wait':
      onUpdate('waiting');
      return await new Promise((resolve) => signal.addEventListener('abort', () => resolve('aborted')));
  }
}
"#;

/// Slow to load, so a cancel arrives before `execute` starts.
const SLOW: &str = r#"
await new Promise((resolve) => setTimeout(resolve, 300));
export async function execute() { return 'late'; }
"#;

#[tokio::test]
async fn a_conversation_with_the_real_harness_uses_only_typed_messages() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let cache = root.join("cache");
    let harness = super::super::install_harness(&cache).unwrap();
    let caches =
        crate::cache::Caches::new(&cache, harness.parent().unwrap().to_path_buf()).unwrap();
    let launcher = Launcher {
        sandbox: None,
        caches,
    };
    let tool = root.join("tool.mjs");
    std::fs::write(&tool, TOOL).unwrap();
    let slow = root.join("slow.mjs");
    std::fs::write(&slow, SLOW).unwrap();
    std::fs::write(root.join("exports.mjs"), "export const nothing = 1;\n").unwrap();
    let space = UserSpace {
        user: "protocol".into(),
        home: root.join("home"),
    };
    std::fs::create_dir_all(&space.home).unwrap();
    let socket = root.join("s.sock");
    let listener = tokio::net::UnixListener::bind(&socket).unwrap();
    let transpiled = launcher.transpiled_dir(&space.user).unwrap();
    let node =
        std::env::var_os("TOOLHOST_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let mut started = launcher
        .start(ToolProcess {
            program: &node,
            args: vec![
                LaunchArg::Path(harness.clone()),
                LaunchArg::Path(transpiled),
                LaunchArg::Path(socket.clone()),
            ],
            cwd: &space.home,
            space: &space,
            env: &ToolEnv::default(),
            extra_env: Vec::new(),
            stdin: false,
            network: false,
            per_call: false,
            extra: Vec::new(),
            read_only: Vec::new(),
        })
        .await
        .unwrap();
    let (stream, _) = tokio::time::timeout(Duration::from_secs(20), listener.accept())
        .await
        .unwrap()
        .unwrap();
    let (mut reader, mut writer) = stream.into_split();

    let (exports, missing) = (root.join("exports.mjs"), root.join("missing.mjs"));
    let calls: Vec<(&std::path::Path, Value)> = vec![
        (&tool, json!({"mode": "ok"})),
        (&tool, json!({"mode": "throw"})),
        (&tool, json!({"mode": "huge"})),
        (&tool, json!({"mode": "bigint"})),
        (&tool, json!({"mode": "wait"})),
        (&slow, json!({})),
        (&exports, json!({})),
        (&missing, json!({})),
        (&tool, json!({})),
    ];
    let mut frames = Vec::new();
    // The last call asks a tool folder's worker for a plugin operation: a plugin error.
    let plugin_op = crate::plugin::PluginOp::Load;
    for (n, (entry, params)) in calls.iter().enumerate() {
        let message = HostMessage::Call(CallMessage {
            id: n as u64 + 1,
            entry,
            version: "1",
            tool_call_id: "call_x",
            params,
            max_text: 1000,
            plugin: (n + 1 == calls.len()).then(|| crate::plugin::PluginMessage {
                op: crate::plugin::PluginCallOp::Op(&plugin_op),
                settings: &Value::Null,
            }),
        });
        frames.push(frame::encode(&message).unwrap());
    }
    use tokio::io::AsyncWriteExt;
    for f in &frames {
        writer.write_all(f).await.unwrap();
    }
    // Stop the slow call before it started; the waiting one once it waits.
    let cancel = |id| frame::encode(&HostMessage::Cancel { id }).unwrap();
    writer.write_all(&cancel(6)).await.unwrap();

    let mut kinds = BTreeSet::new();
    let mut error_kinds = BTreeSet::new();
    let mut outcomes = std::collections::BTreeMap::new();
    while outcomes.len() < calls.len() {
        let message: WorkerMessage =
            tokio::time::timeout(Duration::from_secs(20), frame::read(&mut reader, 1 << 24))
                .await
                .expect("the harness answers every call")
                .unwrap_or_else(|e| panic!("a frame the typed protocol rejects: {e:?}"))
                .expect("the harness stays connected");
        kinds.insert(message.kind().as_str());
        match &message {
            WorkerMessage::Progress(p) if p.id == 5 => {
                writer.write_all(&cancel(5)).await.unwrap();
            }
            WorkerMessage::Result(r) => {
                outcomes.insert(r.id, message.clone());
            }
            WorkerMessage::Error(e) => {
                error_kinds.insert(format!("{:?}", e.kind));
                outcomes.insert(e.id, message.clone());
            }
            _ => {}
        }
    }
    let _ = started.child.start_kill();

    assert_eq!(kinds, WorkerKind::ALL.map(WorkerKind::as_str).into());
    let all: BTreeSet<String> = WorkerErrorKind::ALL
        .iter()
        .map(|k| format!("{k:?}"))
        .collect();
    assert_eq!(error_kinds, all);
    match &outcomes[&3] {
        WorkerMessage::Result(r) => {
            assert!(r.truncated);
            assert_eq!(r.original_length, Some(70002));
            assert_eq!(r.value.as_str().unwrap().len(), 1000);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        outcomes[&5],
        WorkerMessage::Result(ResultMessage {
            id: 5,
            truncated: false,
            original_length: None,
            value: json!("aborted"),
        })
    );
}
