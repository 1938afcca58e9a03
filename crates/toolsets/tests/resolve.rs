//! Turn resolution: forgiving at runtime, one rule per test.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use tokio::sync::{Barrier, oneshot};
use toolhost_toolsets::{
    CorePlugins, Grant, IconSource, Layer, ToolMap, ToolSet, Tools, ToolsetsConfig, TurnContext,
    TurnRequest, WRENCH,
};

fn factory_set(id: &str, f: impl toolhost_toolsets::ToolFactory) -> ToolSet {
    ToolSet::new(id, id, "Tests", "factory", Tools::factory(f))
}

async fn resolve(sets: Vec<ToolSet>, grants: Vec<Grant>) -> toolhost_toolsets::Turn {
    resolve_with(ToolsetsConfig::default(), sets, grants).await
}

async fn resolve_with(
    mut config: ToolsetsConfig,
    sets: Vec<ToolSet>,
    grants: Vec<Grant>,
) -> toolhost_toolsets::Turn {
    agent(&mut config, "a", grants);
    let r = boot_with(CorePlugins::new(), config, sets);
    r.resolve("a", &TurnRequest::default()).await.unwrap()
}

fn names(turn: &toolhost_toolsets::Turn) -> Vec<&str> {
    turn.tools.iter().map(|t| t.name.as_str()).collect()
}

#[tokio::test]
async fn static_sets_resolve_in_name_order() {
    let turn = resolve(
        vec![
            set(
                "one",
                ToolMap::new()
                    .with(echo("zeta", "Z."))
                    .with(echo("alpha", "A.")),
            ),
            set("two", ToolMap::new().with(echo("mid", "M."))),
        ],
        vec![Grant::tool_set("two"), Grant::tool_set("one")],
    )
    .await;
    assert_eq!(names(&turn), ["alpha", "mid", "zeta"]);
    assert!(turn.warnings.is_empty() && turn.collisions.is_empty());
    assert_eq!(turn.tool("mid").unwrap().claim.set, "two");
}

#[tokio::test]
async fn unknown_agent_is_an_error_and_unknown_ids_only_a_warning() {
    let r = boot_with(CorePlugins::new(), ToolsetsConfig::default(), vec![]);
    assert!(r.resolve("ghost", &TurnRequest::default()).await.is_err());
    let turn = resolve(
        vec![set("one", ToolMap::new().with(echo("a", "A.")))],
        vec![
            Grant::tool_set("missing"),
            Grant::tool_set("one"),
            Grant::mcp_server("nope"),
        ],
    )
    .await;
    assert_eq!(names(&turn), ["a"]);
    assert_eq!(turn.warnings.len(), 2);
    assert!(turn.warnings[0].source.contains("tool set `missing`"));
    assert!(turn.warnings[1].source.contains("MCP server `nope`"));
}

#[tokio::test]
async fn factories_get_the_context() {
    let scoped = factory_set("scoped", |ctx: TurnContext| async move {
        let ws = ctx.workspace_id.clone().unwrap_or_default();
        let desc = format!(
            "Board of {ws} for {} by {}",
            ctx.user_id.unwrap_or_default(),
            ctx.agent_id
        );
        Ok(ToolMap::new().with(echo("board", &desc).with_instance(&ws)))
    });
    let mut config = ToolsetsConfig::default();
    agent(&mut config, "helper", vec![Grant::tool_set("scoped")]);
    let r = boot_with(CorePlugins::new(), config, vec![scoped]);
    let req = TurnRequest {
        workspace_id: Some("ws-1".into()),
        user_id: Some("u-9".into()),
        ..TurnRequest::default()
    };
    let turn = r.resolve("helper", &req).await.unwrap();
    assert_eq!(
        turn.tools[0].description(),
        "Board of ws-1 for u-9 by helper"
    );
}

#[tokio::test]
async fn factories_run_concurrently() {
    // Each factory waits for all three: only concurrent resolution lets any finish
    // before the (generous) deadline.
    let barrier = Arc::new(Barrier::new(3));
    let sets = (0..3)
        .map(|i| {
            let b = Arc::clone(&barrier);
            factory_set(&format!("f{i}"), move |_ctx: TurnContext| {
                let b = Arc::clone(&b);
                async move {
                    b.wait().await;
                    Ok(ToolMap::new().with(echo(&format!("t{i}"), "T.")))
                }
            })
        })
        .collect();
    let mut config = ToolsetsConfig::default();
    config.turns.resolve_timeout = Duration::from_secs(10);
    let turn = resolve_with(
        config,
        sets,
        vec![
            Grant::tool_set("f0"),
            Grant::tool_set("f1"),
            Grant::tool_set("f2"),
        ],
    )
    .await;
    assert_eq!(names(&turn), ["t0", "t1", "t2"], "{:?}", turn.warnings);
}

#[tokio::test(start_paused = true)]
async fn a_failing_slow_or_panicking_factory_costs_only_its_tools() {
    let mut slow = factory_set("slow", |_ctx: TurnContext| async move {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(ToolMap::new().with(echo("never", "N.")))
    });
    slow.resolve_timeout = Some(Duration::from_millis(50));
    let failing = factory_set("failing", |_ctx: TurnContext| async move {
        Err("backend down".into())
    });
    let panicking = factory_set("panicking", |_ctx: TurnContext| async move {
        if true {
            panic!("boom");
        }
        Ok(ToolMap::new())
    });
    let turn = resolve(
        vec![
            slow,
            failing,
            panicking,
            set("fine", ToolMap::new().with(echo("ok", "O."))),
        ],
        vec![
            Grant::tool_set("slow"),
            Grant::tool_set("failing"),
            Grant::tool_set("panicking"),
            Grant::tool_set("fine"),
        ],
    )
    .await;
    assert_eq!(names(&turn), ["ok"]);
    let messages: Vec<&str> = turn.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        messages[0].contains("did not finish within 0.05 s"),
        "{messages:?}"
    );
    assert!(messages[1].contains("failed: backend down"), "{messages:?}");
    assert!(messages[2].contains("panicked"), "{messages:?}");
}

#[tokio::test(start_paused = true)]
async fn the_default_factory_deadline_is_configurable() {
    let slow = factory_set("slow", |_ctx: TurnContext| async move {
        tokio::time::sleep(Duration::from_secs(19)).await;
        Ok(ToolMap::new().with(echo("late", "L.")))
    });
    let turn = resolve(vec![slow.clone()], vec![Grant::tool_set("slow")]).await;
    assert_eq!(names(&turn), ["late"], "20 s by default");
    let mut config = ToolsetsConfig::default();
    config.turns.resolve_timeout = Duration::from_secs(5);
    let turn = resolve_with(config, vec![slow], vec![Grant::tool_set("slow")]).await;
    assert!(turn.tools.is_empty());
}

#[tokio::test]
async fn the_same_tool_under_the_same_key_is_one_tool() {
    let shared = || echo("get_time", "Current time.");
    let turn = resolve(
        vec![
            set("a", ToolMap::new().with(shared())),
            set("b", ToolMap::new().with(shared())),
        ],
        vec![Grant::tool_set("a"), Grant::tool_set("b")],
    )
    .await;
    assert_eq!(names(&turn), ["get_time"]);
    assert!(turn.collisions.is_empty());
    assert_eq!(turn.tools[0].claim.set, "a");
    assert_eq!(turn.tools[0].also_in, ["b"]);
}

#[tokio::test]
async fn a_same_named_but_different_tool_is_a_collision_and_the_later_grant_wins() {
    // Same type, same name, different description: not the same tool.
    let turn = resolve(
        vec![
            set("a", ToolMap::new().with(echo("search", "Search the wiki."))),
            set("b", ToolMap::new().with(echo("search", "Search the web."))),
        ],
        vec![Grant::tool_set("a"), Grant::tool_set("b")],
    )
    .await;
    assert_eq!(names(&turn), ["search"]);
    assert_eq!(turn.tools[0].description(), "Search the web.");
    assert_eq!(turn.collisions.len(), 1);
    let c = &turn.collisions[0];
    assert_eq!((c.winner.set.as_str(), c.shadowed.set.as_str()), ("b", "a"));
    assert_eq!(c.shadowed.owner.to_string(), "plugin `extra`");
    // Grant order decides, not registration order.
    let turn = resolve(
        vec![
            set("a", ToolMap::new().with(echo("search", "Search the wiki."))),
            set("b", ToolMap::new().with(echo("search", "Search the web."))),
        ],
        vec![Grant::tool_set("b"), Grant::tool_set("a")],
    )
    .await;
    assert_eq!(turn.tools[0].description(), "Search the wiki.");
}

#[tokio::test]
async fn layers_beat_grant_order() {
    let sets = || {
        vec![
            set(
                "session",
                ToolMap::new().with(echo("find", "Session find.")),
            ),
            set("search", ToolMap::new().with(echo("find", "Search find."))),
            set("sub", ToolMap::new().with(echo("find", "Sub-agent find."))),
        ]
    };
    let turn = resolve(
        sets(),
        vec![
            Grant::tool_set("search").in_layer(Layer::Search),
            Grant::tool_set("session"),
        ],
    )
    .await;
    assert_eq!(turn.tools[0].description(), "Search find.");
    assert_eq!(turn.collisions[0].shadowed.layer, Layer::Session);
    let turn = resolve(
        sets(),
        vec![
            Grant::tool_set("sub").in_layer(Layer::SubAgent),
            Grant::tool_set("search").in_layer(Layer::Search),
            Grant::tool_set("session"),
        ],
    )
    .await;
    assert_eq!(turn.tools[0].description(), "Sub-agent find.");
    assert_eq!(turn.collisions.len(), 2, "every collision, in every layer");
}

#[tokio::test]
async fn invalid_names_are_left_out_never_truncated() {
    let long = "x".repeat(65);
    let l = long.clone();
    let f = factory_set("dyn", move |_ctx: TurnContext| {
        let l = l.clone();
        async move {
            Ok(ToolMap::new()
                .with(echo(&l, "Long."))
                .with(echo("bad.name", "Dot."))
                .with(echo("good", "G.")))
        }
    });
    let turn = resolve(vec![f], vec![Grant::tool_set("dyn")]).await;
    assert_eq!(names(&turn), ["good"]);
    assert_eq!(turn.warnings.len(), 2);
    assert!(turn.warnings[0].message.contains(&long));
    assert!(turn.tools.iter().all(|t| !t.name.starts_with("xxxx")));
}

#[tokio::test]
async fn allow_and_deny_pick_single_tools() {
    let s = || {
        set(
            "s",
            ToolMap::new()
                .with(echo("a", "A."))
                .with(echo("b", "B."))
                .with(echo("c", "C.")),
        )
    };
    let mut g = Grant::tool_set("s");
    g.allow = Some(vec!["a".into(), "b".into()]);
    g.deny = vec!["b".into()];
    let turn = resolve(vec![s()], vec![g]).await;
    assert_eq!(names(&turn), ["a"]);
    let reasons: Vec<_> = turn
        .excluded
        .iter()
        .map(|e| (e.name.as_str(), e.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("b", "on the grant's deny list"),
            ("c", "not on the grant's allow list")
        ]
    );
}

#[tokio::test]
async fn icons_follow_override_then_tool_to_set_then_set_then_wrench() {
    let sets = vec![
        set(
            "clock",
            ToolMap::new()
                .with(echo("now", "Now."))
                .with(echo("alarm", "Alarm.").with_icon("alarm-clock")),
        )
        .with_icon("clock"),
        // `now` is also here, but it maps to `clock` (registered first) wherever it comes from.
        set(
            "misc",
            ToolMap::new()
                .with(echo("now", "Now."))
                .with(echo("other", "O.")),
        ),
    ];
    let turn = resolve(
        sets,
        vec![Grant::tool_set("misc"), Grant::tool_set("clock")],
    )
    .await;
    let icon = |n: &str| {
        let t = turn.tool(n).unwrap();
        (t.icon.clone(), t.icon_source.clone())
    };
    assert_eq!(icon("alarm"), ("alarm-clock".into(), IconSource::Override));
    assert_eq!(
        icon("now"),
        (
            "clock".into(),
            IconSource::ToolSet {
                set: "clock".into()
            }
        )
    );
    assert_eq!(icon("other"), (WRENCH.into(), IconSource::Wrench));
    assert_eq!(turn.tool("now").unwrap().claim.set, "misc");
}

#[tokio::test(start_paused = true)]
async fn closers_run_concurrently_at_turn_end_under_one_deadline() {
    let barrier = Arc::new(Barrier::new(2));
    let mk = |id: &str, outcome: &'static str| {
        let b = Arc::clone(&barrier);
        factory_set(id, move |ctx: TurnContext| {
            let b = Arc::clone(&b);
            async move {
                ctx.register_closer(async move {
                    match outcome {
                        "wait" => {
                            b.wait().await;
                            Ok(())
                        }
                        "hang" => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            Ok(())
                        }
                        _ => Err("could not release the lock".into()),
                    }
                });
                Ok(ToolMap::new())
            }
        })
    };
    let sets = vec![
        mk("w1", "wait"),
        mk("w2", "wait"),
        mk("err", "err"),
        mk("hang", "hang"),
    ];
    let mut config = ToolsetsConfig::default();
    config.turns.close_timeout = Duration::from_secs(2);
    let turn = resolve_with(
        config,
        sets,
        ["w1", "w2", "err", "hang"]
            .into_iter()
            .map(Grant::tool_set)
            .collect(),
    )
    .await;
    let started = tokio::time::Instant::now();
    let report = turn.end().await;
    assert_eq!(report.ran, 4);
    assert_eq!(
        report.failed,
        [("err".to_string(), "could not release the lock".to_string())]
    );
    assert_eq!(report.timed_out, ["hang"]);
    assert_eq!(started.elapsed(), Duration::from_secs(2));
}

#[tokio::test]
async fn a_closer_registered_after_the_turn_ended_runs_at_once() {
    let (ctx_tx, ctx_rx) = oneshot::channel::<TurnContext>();
    let ctx_tx = Arc::new(std::sync::Mutex::new(Some(ctx_tx)));
    let f = factory_set("late", move |ctx: TurnContext| {
        let tx = ctx_tx.lock().unwrap().take();
        async move {
            if let Some(tx) = tx {
                let _ = tx.send(ctx);
            }
            Ok(ToolMap::new())
        }
    });
    let turn = resolve(vec![f], vec![Grant::tool_set("late")]).await;
    let ctx = ctx_rx.await.unwrap();
    turn.end().await;
    let (ran_tx, ran_rx) = oneshot::channel();
    ctx.register_closer(async move {
        let _ = ran_tx.send(());
        Ok(())
    });
    tokio::time::timeout(Duration::from_secs(10), ran_rx)
        .await
        .expect("the late closer ran")
        .unwrap();
}

#[tokio::test]
async fn dropping_a_turn_runs_its_closers() {
    let (tx, rx) = oneshot::channel();
    let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
    let f = factory_set("c", move |ctx: TurnContext| {
        let tx = tx.lock().unwrap().take();
        async move {
            ctx.register_closer(async move {
                if let Some(tx) = tx {
                    let _ = tx.send(());
                }
                Ok(())
            });
            Ok(ToolMap::new())
        }
    });
    drop(resolve(vec![f], vec![Grant::tool_set("c")]).await);
    tokio::time::timeout(Duration::from_secs(10), rx)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn resolved_tools_are_called_through_the_runtime() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = toolhost_runtime::Runtime::new(
        toolhost_runtime::RuntimeConfig {
            cache_dir: Some(cache.path().to_path_buf()),
            ..Default::default()
        },
        toolhost_runtime::ToolEnv::default(),
    )
    .unwrap();
    let slow = toolhost_toolsets::typed_tool(
        "slow",
        "Sleeps.",
        toolhost_toolsets::Annotations {
            timeout: Some(Duration::from_millis(200)),
            ..Default::default()
        },
        |_a: EchoArgs, _ctx| async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(json!({}))
        },
    );
    let turn = resolve(
        vec![set(
            "s",
            ToolMap::new().with(echo("echo", "Echo.")).with(slow),
        )],
        vec![Grant::tool_set("s")],
    )
    .await;
    let user = toolhost_runtime::UserSpace {
        user: "tester".into(),
        home: cache.path().join("home"),
    };
    let r = turn
        .tool("echo")
        .unwrap()
        .call(&runtime, json!({"text": "hi"}), user.clone())
        .result()
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.structured_content, Some(json!({"echo": "hi"})));
    let r = turn
        .tool("echo")
        .unwrap()
        .call(&runtime, json!({}), user.clone())
        .result()
        .await;
    assert!(r.is_error && r.joined_text().contains("text"), "{r:?}");
    let r = turn
        .tool("slow")
        .unwrap()
        .call(&runtime, json!({"text": "x"}), user)
        .result()
        .await;
    assert!(r.is_error && r.joined_text().contains("timed out"), "{r:?}");
}

#[tokio::test(start_paused = true)]
async fn an_operator_can_set_one_sets_deadline() {
    let slow = factory_set("slow", |_ctx: TurnContext| async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        Ok(ToolMap::new().with(echo("late", "L.")))
    });
    let mut config = ToolsetsConfig::default();
    config.tool_sets.insert(
        "slow".into(),
        toolhost_toolsets::SetSettings {
            resolve_timeout: Some(Duration::from_secs(1)),
            icon: None,
        },
    );
    let turn = resolve_with(config, vec![slow], vec![Grant::tool_set("slow")]).await;
    assert!(turn.tools.is_empty());
    assert!(
        turn.warnings[0].message.contains("within 1 s"),
        "{:?}",
        turn.warnings
    );
}

/// Captures what the crate logs.
#[derive(Clone, Default)]
struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn collisions_and_warnings_are_logged_with_both_owners() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let turn = resolve(
        vec![
            set(
                "wiki",
                ToolMap::new().with(echo("search", "Search the wiki.")),
            ),
            set(
                "web",
                ToolMap::new().with(echo("search", "Search the web.")),
            ),
        ],
        vec![
            Grant::tool_set("wiki"),
            Grant::tool_set("web"),
            Grant::tool_set("gone"),
        ],
    )
    .await;
    assert_eq!(turn.collisions.len(), 1);
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains("two different tools claim one name")
            && text.contains("tool=search")
            && text.contains("winner=web (plugin `extra`)")
            && text.contains("shadowed=wiki (plugin `extra`)"),
        "{text}"
    );
    assert!(
        text.contains("tool set `gone`") && text.contains("no such tool set"),
        "{text}"
    );
}

#[tokio::test]
async fn a_shared_turn_runs_its_closers_once() {
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let f = factory_set("c", move |ctx: TurnContext| {
        let c = Arc::clone(&c);
        async move {
            ctx.register_closer(async move {
                c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            });
            Ok(ToolMap::new())
        }
    });
    let turn = Arc::new(resolve(vec![f], vec![Grant::tool_set("c")]).await);
    let (a, b) = tokio::join!(turn.close(), turn.close());
    assert_eq!(a.ran + b.ran, 1);
    drop(turn);
    tokio::task::yield_now().await;
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
}
