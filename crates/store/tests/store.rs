//! The store's whole behaviour, run against both engines: SQLite in a temporary file, and
//! the PostgreSQL that `scripts/test` starts on loopback (`TOOLHOST_TEST_DATABASE_URL`),
//! each test in a database of its own.
#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::time::Duration;

use sqlx::Connection;
use toolhost_store::{
    AgentSpec, CallFilter, CallQueue, CallRow, Cipher, GrantSpec, Location, NewToken, Outcome,
    QueueOptions, Role, Rule, Scope, Store, StoreError,
};
use toolhost_toolsets::{AgentConfig, Grant, Layer};

/// A fresh, empty database on each engine; the closure runs on both.
async fn on_both<F, Fut>(test: F)
where
    F: Fn(Location, tempfile::TempDir) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    test(Location::Sqlite(dir.path().join("toolhost.db")), dir).await;
    let dir = tempfile::tempdir().unwrap();
    test(Location::Postgres(fresh_postgres().await), dir).await;
}

/// A new database on the test PostgreSQL server.
async fn fresh_postgres() -> String {
    fresh_postgres_with("").await
}

/// A new database on the test PostgreSQL server, made with `options` (`CREATE DATABASE
/// name OPTIONS`).
async fn fresh_postgres_with(options: &str) -> String {
    let url = std::env::var("TOOLHOST_TEST_DATABASE_URL").unwrap_or_else(|_| {
        panic!(
            "TOOLHOST_TEST_DATABASE_URL is not set: run `bash scripts/test`, which installs \
             PostgreSQL and starts it on loopback for the tests"
        )
    });
    let name = format!("t_{}", toolhost_store::new_id());
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "CREATE DATABASE {name} {options}"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    admin.close().await.unwrap();
    let mut parsed = url::Url::parse(&url).unwrap();
    parsed.set_path(&name);
    parsed.to_string()
}

fn cipher(dir: &tempfile::TempDir) -> Cipher {
    Cipher::from_file(&dir.path().join("store.key")).unwrap()
}

fn spec(name: &str, grants: Vec<GrantSpec>) -> AgentSpec {
    AgentSpec {
        name: name.into(),
        description: "an agent".into(),
        icon: Some("bot".into()),
        grants,
        ..AgentSpec::default()
    }
}

fn tool_set(id: &str) -> GrantSpec {
    GrantSpec {
        tool_set: Some(id.into()),
        ..GrantSpec::default()
    }
}

#[tokio::test]
async fn agents_round_trip_with_typed_grants_and_per_tool_rules() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        let mut web = tool_set("web");
        web.rules.insert("fetch".into(), Rule::Deny);
        let mut server = GrantSpec {
            mcp_server: Some("docs".into()),
            layer: Layer::Search,
            default: Rule::Deny,
            ..GrantSpec::default()
        };
        server.rules.insert("docs__search".into(), Rule::Allow);
        let created = store
            .create_agent("admin", "helper", spec("Helper", vec![tool_set("time"), web, server]))
            .await
            .unwrap();
        assert_eq!(created.version, 1);
        let read = store.agent("helper").await.unwrap().unwrap();
        assert_eq!(read, created);
        // What the resolver gets: the deny beats the default, the deny-by-default server
        // lets through only its allowed tool, and a tool added later follows the default.
        let config = read.spec.to_config();
        assert_eq!(config.grants.len(), 3);
        assert!(config.grants[0].admits("now"));
        assert!(!config.grants[1].admits("fetch") && config.grants[1].admits("search"));
        assert!(config.grants[2].admits("docs__search"));
        assert!(!config.grants[2].admits("docs__added_later"));
        assert_eq!(config.grants[2].layer, Layer::Search);

        // The configuration file's agents come in as they are.
        let from_file: AgentConfig = toml::from_str(
            "grants = [{ tool_set = \"web\", allow = [\"search\"], deny = [\"fetch\", \"search\"] }]",
        )
        .unwrap();
        let imported = AgentSpec::from_config("filed", &from_file);
        assert_eq!(imported.grants[0].rules["search"], Rule::Deny, "an explicit deny wins");
        let grant: &Grant = &imported.to_config().grants[0];
        assert!(!grant.admits("search") && !grant.admits("other"));

        let page = store.agents(None, 10).await.unwrap();
        assert_eq!(page.items.len(), 1);
        assert!(page.next.is_none());
    })
    .await;
}

#[tokio::test]
async fn a_stale_version_is_a_conflict_and_neither_edit_is_lost() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        store
            .create_agent("admin", "a", spec("A", vec![tool_set("time")]))
            .await
            .unwrap();
        let first = store
            .update_agent("alice", "a", spec("A by alice", vec![]), 1)
            .await
            .unwrap();
        assert_eq!(first.version, 2);
        let second = store
            .update_agent("bob", "a", spec("A by bob", vec![]), 1)
            .await
            .err()
            .unwrap();
        assert!(
            matches!(
                second,
                StoreError::Conflict {
                    expected: 1,
                    found: 2,
                    ..
                }
            ),
            "{second}"
        );
        assert_eq!(
            store.agent("a").await.unwrap().unwrap().spec.name,
            "A by alice"
        );
        let e = store
            .create_agent("admin", "a", spec("again", vec![]))
            .await
            .err()
            .unwrap();
        assert!(matches!(e, StoreError::Exists { .. }), "{e}");
        let e = store
            .update_agent("admin", "nope", spec("x", vec![]), 1)
            .await
            .err()
            .unwrap();
        assert!(matches!(e, StoreError::NotFound { .. }), "{e}");
        let e = store
            .delete_agent("admin", "a", Some(1))
            .await
            .err()
            .unwrap();
        assert!(matches!(e, StoreError::Conflict { .. }), "{e}");
        store.delete_agent("admin", "a", Some(2)).await.unwrap();
        assert!(store.agent("a").await.unwrap().is_none());

        // Every change is in the audit log, newest first, with before and after.
        let audit = store.audit(None, 10).await.unwrap();
        let actions: Vec<(&str, &str)> = audit
            .items
            .iter()
            .map(|e| (e.actor.as_str(), e.action.as_str()))
            .collect();
        assert_eq!(
            actions,
            [
                ("admin", "agent.delete"),
                ("alice", "agent.update"),
                ("admin", "agent.create")
            ]
        );
        assert!(
            audit.items[1]
                .old_value
                .as_deref()
                .unwrap()
                .contains("\"name\":\"A\"")
        );
        assert!(
            audit.items[1]
                .new_value
                .as_deref()
                .unwrap()
                .contains("A by alice")
        );
    })
    .await;
}

#[tokio::test]
async fn bad_agents_are_refused_naming_the_field() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        let both = GrantSpec {
            tool_set: Some("a".into()),
            mcp_server: Some("b".into()),
            ..GrantSpec::default()
        };
        let cases = [
            ("ok", spec("", vec![]), "name"),
            ("ok", spec("x", vec![both]), "grants[0]"),
            (
                "ok",
                spec("x", vec![tool_set("a"), tool_set("a")]),
                "grants[1]",
            ),
            (
                "ok",
                spec("x", vec![tool_set("bad id")]),
                "grants[0].tool_set",
            ),
            ("bad id!", spec("x", vec![]), "id"),
        ];
        for (id, spec, field) in cases {
            match store.create_agent("admin", id, spec).await {
                Err(StoreError::Invalid { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        let mut bad_icon = spec("x", vec![]);
        bad_icon.icon = Some("Not An Icon".into());
        let e = store
            .create_agent("admin", "ok", bad_icon)
            .await
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "icon: \"Not An Icon\" is not a Lucide icon name (kebab-case, like `book-open`)"
        );
        assert!(store.agents(None, 10).await.unwrap().items.is_empty());
    })
    .await;
}

#[tokio::test]
async fn agents_page_by_cursor() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        for i in 0..7 {
            store
                .create_agent(
                    "admin",
                    &format!("agent-{i}"),
                    spec("x", vec![tool_set("time")]),
                )
                .await
                .unwrap();
        }
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let page = store.agents(cursor.as_deref(), 3).await.unwrap();
            seen.extend(page.items.iter().map(|a| a.id.clone()));
            assert!(page.items.iter().all(|a| a.spec.grants.len() == 1));
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        let expected: Vec<String> = (0..7).map(|i| format!("agent-{i}")).collect();
        assert_eq!(seen, expected);
    })
    .await;
}

#[tokio::test]
async fn a_page_of_agents_carries_each_agents_own_grants_and_rules() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        // Agents with no grant, one, several; rules on some; an id that sorts between
        // others' ("b" < "b-1" < "b0"), so that page bounds fall inside runs of rows.
        for (i, id) in ["a", "b", "b-1", "b0", "c", "d"].iter().enumerate() {
            let grants = (0..i % 4)
                .map(|g| {
                    let mut grant = if g == 1 {
                        GrantSpec {
                            mcp_server: Some(format!("server-{i}")),
                            default: Rule::Deny,
                            layer: Layer::Search,
                            ..GrantSpec::default()
                        }
                    } else {
                        tool_set(&format!("set-{i}-{g}"))
                    };
                    for r in 0..(i + g) % 3 {
                        grant.rules.insert(format!("tool_{i}_{g}_{r}"), Rule::Deny);
                    }
                    grant
                })
                .collect();
            store
                .create_agent("admin", id, spec(&format!("Agent {id}"), grants))
                .await
                .unwrap();
        }
        for limit in [1, 2, 4, 10] {
            let mut seen = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let page = store.agents(cursor.as_deref(), limit).await.unwrap();
                for agent in &page.items {
                    // The page's batched read gives what reading the agent alone gives.
                    assert_eq!(Some(agent), store.agent(&agent.id).await.unwrap().as_ref());
                    seen.push(agent.id.clone());
                }
                match page.next {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
            assert_eq!(seen, ["a", "b", "b-1", "b0", "c", "d"], "limit {limit}");
        }
        let d = store.agent("d").await.unwrap().unwrap();
        assert_eq!(d.spec.grants.len(), 1);
        let b0 = store.agent("b0").await.unwrap().unwrap();
        assert_eq!(b0.spec.grants.len(), 3);
        assert_eq!(b0.spec.grants[1].mcp_server.as_deref(), Some("server-3"));
        assert_eq!(b0.spec.grants[1].rules.len(), 1);
    })
    .await;
}

#[tokio::test]
async fn tokens_are_shown_once_stored_as_hashes_and_die_when_revoked_or_expired() {
    on_both(|at, dir| async move {
        let store = Store::open(at.clone(), Some(cipher(&dir))).await.unwrap();
        assert!(store.is_empty().await.unwrap());
        store
            .put_user("setup", "alice", Role::Operator)
            .await
            .unwrap();
        store
            .create_agent("setup", "helper", spec("Helper", vec![]))
            .await
            .unwrap();
        let (token, secret) = store
            .create_token(
                "setup",
                NewToken {
                    name: "laptop".into(),
                    user: "alice".into(),
                    scopes: vec![Scope::ToolsCall, Scope::ToolsRead, Scope::ToolsCall],
                    agent: Some("helper".into()),
                    expires_at: None,
                },
            )
            .await
            .unwrap();
        assert!(secret.starts_with(&format!("th_{}_", token.id)), "{secret}");
        assert_eq!(token.scopes, [Scope::ToolsRead, Scope::ToolsCall]);
        let bearer = store.authenticate(&secret).await.unwrap().unwrap();
        assert_eq!(
            (bearer.user.as_str(), bearer.role, bearer.agent.as_deref()),
            ("alice", Role::Operator, Some("helper"))
        );
        assert!(
            store
                .authenticate(&format!("{secret}x"))
                .await
                .unwrap()
                .is_none()
        );
        assert!(store.authenticate("not a token").await.unwrap().is_none());
        let listed = store.tokens(Some("alice")).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].last_used_at.is_some());

        // Only its hash is stored: the secret appears nowhere in the database file.
        if let Location::Sqlite(path) = &at {
            store.close().await;
            let store = Store::open(at.clone(), Some(cipher(&dir))).await.unwrap();
            let mut bytes = std::fs::read(path).unwrap();
            let mut wal = path.as_os_str().to_owned();
            wal.push("-wal");
            bytes.extend(std::fs::read(&wal).unwrap_or_default());
            // `th_<id>_<secret>`: the secret itself may hold `_`.
            let secret_part = secret.splitn(3, '_').nth(2).unwrap();
            assert!(secret_part.len() >= 40, "{secret}");
            assert!(
                !bytes
                    .windows(secret_part.len())
                    .any(|w| w == secret_part.as_bytes())
            );
            drop(store);
        }
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        store.revoke_token("alice", &token.id).await.unwrap();
        assert!(store.authenticate(&secret).await.unwrap().is_none());

        let (_, expired) = store
            .create_token(
                "setup",
                NewToken {
                    name: "old".into(),
                    user: "alice".into(),
                    scopes: vec![Scope::ToolsRead],
                    agent: None,
                    expires_at: Some(1),
                },
            )
            .await
            .unwrap();
        assert!(store.authenticate(&expired).await.unwrap().is_none());
        let e = store
            .create_token(
                "setup",
                NewToken {
                    name: "x".into(),
                    user: "nobody".into(),
                    scopes: vec![Scope::ToolsRead],
                    agent: None,
                    expires_at: None,
                },
            )
            .await
            .err()
            .unwrap();
        assert!(
            matches!(e, StoreError::NotFound { kind: "user", .. }),
            "{e}"
        );
        let e = store
            .put_user("setup", "../etc", Role::Admin)
            .await
            .err()
            .unwrap();
        assert!(matches!(e, StoreError::Invalid { .. }), "{e}");
    })
    .await;
}

#[tokio::test]
async fn secrets_are_sealed_and_need_their_key() {
    on_both(|at, dir| async move {
        let store = Store::open(at.clone(), Some(cipher(&dir))).await.unwrap();
        store
            .put_secret("mcp:docs", "bearer", "s3cret-value")
            .await
            .unwrap();
        assert_eq!(
            store.secret("mcp:docs", "bearer").await.unwrap().as_deref(),
            Some("s3cret-value")
        );
        assert_eq!(store.secret_names("mcp:docs").await.unwrap(), ["bearer"]);
        // Another key cannot open it, and says so.
        let other = Cipher::from_file(&dir.path().join("other.key")).unwrap();
        let store2 = Store::open(at.clone(), Some(other)).await.unwrap();
        let e = store2.secret("mcp:docs", "bearer").await.err().unwrap();
        assert!(e.to_string().contains("does not open with this key"), "{e}");
        // Without a key, nothing is sealed.
        let keyless = Store::open(at, None).await.unwrap();
        assert!(keyless.put_secret("x", "y", "z").await.is_err());
        assert!(store.delete_secret("mcp:docs", "bearer").await.unwrap());
        assert!(store.secret("mcp:docs", "bearer").await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn mcp_servers_keep_their_secrets_sealed_apart_and_refuse_stale_versions() {
    on_both(|at, dir| async move {
        let store = Store::open(at.clone(), Some(cipher(&dir))).await.unwrap();
        let mut config = toolhost_mcp_client::McpServerConfig {
            url: Some("https://mcp.example.com/mcp".into()),
            bearer_token: Some("tok-s3cret".into()),
            ..Default::default()
        };
        config
            .headers
            .insert("X-Api-Key".into(), "hdr-s3cret".into());
        let created = store
            .create_mcp_server("ada", "docs", config.clone())
            .await
            .unwrap();
        assert_eq!(created.version, 1);
        assert!(matches!(
            store.create_mcp_server("ada", "docs", config.clone()).await,
            Err(StoreError::Exists { .. })
        ));
        let read = store.mcp_server("docs").await.unwrap().unwrap();
        assert_eq!(read.config, config);
        // The settings row and the audit log hold no secret.
        let sql = "SELECT config FROM mcp_servers WHERE name = 'docs'";
        let row: (String,) = match &at {
            Location::Sqlite(path) => {
                let url = format!("sqlite://{}", path.display());
                let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
                sqlx::query_as(sql).fetch_one(&mut conn).await.unwrap()
            }
            Location::Postgres(url) => {
                let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
                sqlx::query_as(sql).fetch_one(&mut conn).await.unwrap()
            }
        };
        assert!(
            row.0.contains("mcp.example.com") && !row.0.contains("s3cret"),
            "{}",
            row.0
        );
        let mut edited = config.clone();
        edited.headers.clear();
        edited.description = Some("Docs".into());
        let updated = store
            .update_mcp_server("ada", "docs", edited.clone(), 1)
            .await
            .unwrap();
        assert_eq!(updated.version, 2);
        assert!(matches!(
            store
                .update_mcp_server("bob", "docs", config.clone(), 1)
                .await,
            Err(StoreError::Conflict { found: 2, .. })
        ));
        // A header removed takes its sealed value with it.
        assert_eq!(
            store.secret_names("mcp_server:docs").await.unwrap(),
            ["bearer_token"]
        );
        let audit = store.audit(None, 50).await.unwrap();
        let actions: Vec<&str> = audit.items.iter().map(|e| e.action.as_str()).collect();
        assert_eq!(actions, ["mcp_server.update", "mcp_server.create"]);
        for e in &audit.items {
            let text = format!("{:?}{:?}", e.old_value, e.new_value);
            assert!(!text.contains("s3cret"), "{text}");
        }
        store
            .delete_mcp_server("ada", "docs", Some(2))
            .await
            .unwrap();
        assert!(store.mcp_server("docs").await.unwrap().is_none());
        assert!(
            store
                .secret_names("mcp_server:docs")
                .await
                .unwrap()
                .is_empty()
        );
        assert!(store.mcp_servers().await.unwrap().is_empty());
    })
    .await;
}

fn call(i: usize, tool: &str, outcome: Outcome) -> CallRow {
    CallRow {
        id: toolhost_store::new_id(),
        started_at: 1_000_000 + i as i64,
        duration_ms: 3,
        principal: "alice".into(),
        token_id: None,
        agent_id: Some("helper".into()),
        transport: "mcp-http".into(),
        tool: tool.into(),
        tool_set: Some("time".into()),
        outcome,
        error: None,
        result_bytes: 10,
        arguments: "{}".into(),
        result: None,
    }
}

#[tokio::test]
async fn the_call_queue_waits_for_a_store_that_is_away_and_catches_up() {
    on_both(|at, dir| async move {
        let store = Store::open(at.clone(), Some(cipher(&dir))).await.unwrap();
        let queue = CallQueue::start(
            store.clone(),
            QueueOptions {
                capacity: 1000,
                batch: 50,
                linger: Duration::from_millis(5),
                retention: None,
            },
        );
        let written = |q: &CallQueue| {
            q.counts()
                .written
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        // Another connection takes the call log away: writes wait (SQLite) or block
        // (PostgreSQL) behind its lock.
        let release = tokio::sync::oneshot::channel::<()>();
        let (locked_tx, locked_rx) = tokio::sync::oneshot::channel::<()>();
        let holder = tokio::spawn({
            let at = at.clone();
            async move {
                match &at {
                    Location::Sqlite(path) => {
                        let url = format!("sqlite://{}", path.display());
                        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
                        sqlx::query("BEGIN EXCLUSIVE")
                            .execute(&mut conn)
                            .await
                            .unwrap();
                        let _ = locked_tx.send(());
                        let _ = release.1.await;
                        sqlx::query("COMMIT").execute(&mut conn).await.unwrap();
                    }
                    Location::Postgres(url) => {
                        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
                        sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
                        sqlx::query("LOCK TABLE tool_calls IN ACCESS EXCLUSIVE MODE")
                            .execute(&mut conn)
                            .await
                            .unwrap();
                        let _ = locked_tx.send(());
                        let _ = release.1.await;
                        sqlx::query("COMMIT").execute(&mut conn).await.unwrap();
                    }
                }
            }
        });
        locked_rx.await.unwrap();
        for i in 0..300 {
            queue.push(call(i, "now", Outcome::Success));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            written(&queue),
            0,
            "nothing can be written while the store is away"
        );
        let _ = release.0.send(());
        holder.await.unwrap();
        assert!(
            queue.flush(Duration::from_secs(20)).await,
            "the queue never caught up"
        );
        assert_eq!(written(&queue), 300);
        assert_eq!(
            queue
                .counts()
                .lost
                .load(std::sync::atomic::Ordering::Relaxed),
            0
        );
        let page = store
            .calls(&CallFilter::default(), None, 500)
            .await
            .unwrap();
        assert_eq!(page.items.len(), 300);
    })
    .await;
}

#[tokio::test]
async fn the_call_queue_writes_every_row_in_batches_and_lists_them_by_filter() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        let queue = CallQueue::start(
            store.clone(),
            QueueOptions {
                capacity: 5000,
                batch: 100,
                linger: Duration::from_millis(10),
                retention: None,
            },
        );
        for i in 0..1000 {
            let outcome = if i % 10 == 0 {
                Outcome::Error
            } else {
                Outcome::Success
            };
            queue.push(call(i, if i % 2 == 0 { "now" } else { "add" }, outcome));
        }
        for _ in 0..200 {
            if queue
                .counts()
                .written
                .load(std::sync::atomic::Ordering::Relaxed)
                == 1000
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(
            queue
                .counts()
                .written
                .load(std::sync::atomic::Ordering::Relaxed),
            1000
        );
        assert_eq!(
            queue
                .counts()
                .lost
                .load(std::sync::atomic::Ordering::Relaxed),
            0
        );

        let filter = CallFilter {
            tool: Some("now".into()),
            outcome: Some(Outcome::Error),
            ..CallFilter::default()
        };
        let mut total = 0;
        let mut cursor = None;
        loop {
            let page = store.calls(&filter, cursor.as_deref(), 20).await.unwrap();
            assert!(
                page.items
                    .iter()
                    .all(|c| c.tool == "now" && c.outcome == Outcome::Error)
            );
            total += page.items.len();
            match page.next {
                Some(n) => cursor = Some(n),
                None => break,
            }
        }
        assert_eq!(total, 100);
        assert_eq!(store.prune_calls(1_000_500).await.unwrap(), 500);
    })
    .await;
}

/// Calls whose order by start differs from their ids' (a long call is recorded, and gets
/// its id, after calls that started later), with ties in start time.
fn varied_calls() -> Vec<CallRow> {
    let outcomes = [
        Outcome::Success,
        Outcome::Error,
        Outcome::Denied,
        Outcome::Cancelled,
        Outcome::Timeout,
    ];
    (0..240)
        .map(|i| {
            let mut c = call(i, ["now", "add", "fetch"][i % 3], outcomes[(i / 3) % 5]);
            // Ids follow i; starts go backwards every fourth call, and pairs share one.
            c.started_at = 2_000_000 + (i as i64 / 2) * 10 - if i % 4 == 0 { 35 } else { 0 };
            c.principal = ["alice", "bob", "carol", "dan"][(i / 7) % 4].into();
            c.agent_id = (i % 5 != 0).then(|| format!("agent-{}", i % 4));
            c
        })
        .collect()
}

#[tokio::test]
async fn the_call_log_pages_any_filter_newest_first_without_gaps_or_repeats() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        let rows = varied_calls();
        store.insert_calls(&rows).await.unwrap();
        let f = |tool: Option<&str>,
                 agent: Option<&str>,
                 user: Option<&str>,
                 outcome: Option<Outcome>,
                 since: Option<i64>,
                 until: Option<i64>| CallFilter {
            tool: tool.map(str::to_string),
            agent: agent.map(str::to_string),
            principal: user.map(str::to_string),
            outcome,
            since,
            until,
        };
        let filters = [
            f(None, None, None, None, None, None),
            f(Some("add"), None, None, None, None, None),
            f(None, Some("agent-2"), None, None, None, None),
            f(None, None, Some("bob"), None, None, None),
            f(None, None, None, Some(Outcome::Timeout), None, None),
            f(Some("now"), None, None, Some(Outcome::Error), None, None),
            f(
                Some("now"),
                Some("agent-1"),
                Some("alice"),
                None,
                None,
                None,
            ),
            f(
                None,
                Some("agent-3"),
                None,
                Some(Outcome::Success),
                None,
                None,
            ),
            f(None, None, Some("carol"), Some(Outcome::Denied), None, None),
            f(
                Some("fetch"),
                None,
                Some("dan"),
                Some(Outcome::Cancelled),
                None,
                None,
            ),
            f(None, None, None, None, Some(2_000_400), None),
            f(None, None, None, None, None, Some(2_000_700)),
            f(
                Some("add"),
                None,
                None,
                None,
                Some(2_000_300),
                Some(2_000_900),
            ),
            f(None, None, Some("alice"), None, None, Some(2_000_555)),
            f(Some("nothing"), None, None, None, None, None),
        ];
        for filter in &filters {
            let mut expected: Vec<&CallRow> = rows
                .iter()
                .filter(|c| {
                    filter.tool.as_ref().is_none_or(|t| *t == c.tool)
                        && filter
                            .agent
                            .as_ref()
                            .is_none_or(|a| c.agent_id.as_ref() == Some(a))
                        && filter.principal.as_ref().is_none_or(|p| *p == c.principal)
                        && filter.outcome.is_none_or(|o| o == c.outcome)
                        && filter.since.is_none_or(|s| c.started_at >= s)
                        && filter.until.is_none_or(|u| c.started_at < u)
                })
                .collect();
            expected.sort_by(|a, b| (b.started_at, &b.id).cmp(&(a.started_at, &a.id)));
            let expected: Vec<&str> = expected.iter().map(|c| c.id.as_str()).collect();
            let mut seen: Vec<String> = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let page = store.calls(filter, cursor.as_deref(), 7).await.unwrap();
                assert!(page.items.len() <= 7);
                seen.extend(page.items.iter().map(|c| c.id.clone()));
                match page.next {
                    Some(next) => {
                        assert_eq!(page.items.len(), 7, "only a full page has a next");
                        cursor = Some(next);
                    }
                    None => break,
                }
            }
            assert_eq!(seen, expected, "{filter:?}");
        }
        // The rows come back whole.
        let newest = store.calls(&CallFilter::default(), None, 1).await.unwrap();
        let want = rows
            .iter()
            .max_by_key(|c| (c.started_at, c.id.clone()))
            .unwrap();
        assert_eq!(&newest.items[0], want);
        // A cursor naming no call ends the list; so does the last call's id.
        for gone in ["nope", "~", ""] {
            let page = store
                .calls(&CallFilter::default(), Some(gone), 10)
                .await
                .unwrap();
            assert!(page.items.is_empty() && page.next.is_none(), "{gone:?}");
        }
    })
    .await;
}

/// PostgreSQL under a linguistic collation (ICU's en-US, as a glibc en_US.UTF-8 cluster
/// also sorts): symbols sort before digits there, so no first page may hang on a
/// sentinel such as `id < '~'`.
#[tokio::test]
async fn first_pages_hold_rows_under_a_linguistic_collation() {
    let url =
        fresh_postgres_with("LOCALE_PROVIDER icu ICU_LOCALE 'en-US' TEMPLATE template0").await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(Location::Postgres(url), Some(cipher(&dir)))
        .await
        .unwrap();
    store
        .create_agent("admin", "a", spec("A", vec![tool_set("time")]))
        .await
        .unwrap();
    store.insert_calls(&varied_calls()[..10]).await.unwrap();
    let calls = store.calls(&CallFilter::default(), None, 50).await.unwrap();
    assert_eq!(calls.items.len(), 10);
    let audit = store.audit(None, 50).await.unwrap();
    assert_eq!(audit.items.len(), 1);
    assert_eq!(audit.items[0].action, "agent.create");
    let agents = store.agents(None, 50).await.unwrap();
    assert_eq!(agents.items.len(), 1);
}

#[tokio::test]
async fn a_full_queue_counts_what_it_loses_and_never_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(Location::Sqlite(dir.path().join("t.db")), None)
        .await
        .unwrap();
    store.close().await;
    // The pool is closed: every write fails, so the queue fills and stays full.
    let queue = CallQueue::start(
        store,
        QueueOptions {
            capacity: 10,
            batch: 5,
            linger: Duration::from_millis(1),
            retention: None,
        },
    );
    let started = std::time::Instant::now();
    for i in 0..100 {
        queue.push(call(i, "now", Outcome::Success));
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "push never waits"
    );
    let lost = queue
        .counts()
        .lost
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(lost >= 85, "{lost}");
    // Every row is counted lost, waits in the queue, or is in the writer's batch (≤ 5).
    let accounted = lost as usize + queue.pending();
    assert!((95..=100).contains(&accounted), "{accounted}");
}

#[tokio::test]
async fn a_database_from_a_newer_toolhost_is_refused_and_a_missing_server_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let store = Store::open(Location::Sqlite(path.clone()), None)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) \
         VALUES (99990101000000, 'from the future', '2099-01-01', TRUE, X'00', 0)",
    )
    .execute(
        &mut sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    store.close().await;
    let e = Store::open(Location::Sqlite(path), None)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(
            e,
            StoreError::TooNew {
                version: 99990101000000,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("newer Toolhost"), "{e}");

    let e = Store::open(
        Location::Postgres("postgres://u:pw@127.0.0.1:1/db".into()),
        None,
    )
    .await
    .err()
    .unwrap();
    let text = e.to_string();
    assert!(
        text.starts_with("cannot open the store at postgres://u:***@127.0.0.1:1/db"),
        "{text}"
    );
    assert!(!text.contains("pw"), "{text}");
    assert!(matches!(
        Location::parse("mysql://x"),
        Err(StoreError::Invalid { .. })
    ));
    assert_eq!(
        Location::parse("sqlite:///var/lib/toolhost/toolhost.db").unwrap(),
        Location::Sqlite("/var/lib/toolhost/toolhost.db".into())
    );
}

#[tokio::test]
async fn the_host_sees_stored_agents_and_tokens_beside_the_configuration_files() {
    use std::sync::Arc;
    use toolhost_host::store::{AgentStore, CallLog, CallOutcome, CallRecord, TokenStore};
    use toolhost_host::{ConfigFile, Tokens};
    use toolhost_store::{StoredAgents, StoredTokens};

    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        let config = Arc::new(
            ConfigFile::parse(
                &dir.path().join("toolhost.toml"),
                "[agents.filed]\ngrants = [{ tool_set = \"time\" }]\n\
                 [agents.both]\ngrants = [{ tool_set = \"web\" }]\n",
            )
            .unwrap(),
        );
        store
            .create_agent(
                "admin",
                "stored",
                spec("Stored", vec![tool_set("utilities")]),
            )
            .await
            .unwrap();
        store
            .create_agent(
                "admin",
                "both",
                spec("Shadowed", vec![tool_set("utilities")]),
            )
            .await
            .unwrap();
        let agents = StoredAgents::new(store.clone(), config);
        assert_eq!(
            agents.agent_ids().await.unwrap(),
            ["both", "filed", "stored"]
        );
        let both = agents.agent("both").await.unwrap().unwrap();
        assert_eq!(
            both.grants[0].source,
            toolhost_toolsets::GrantSource::ToolSet("web".into()),
            "the configuration file's agent wins its id"
        );
        assert!(agents.agent("stored").await.unwrap().is_some());
        assert!(agents.agent("nope").await.unwrap().is_none());

        store
            .put_user("admin", "alice", Role::Viewer)
            .await
            .unwrap();
        let (_, secret) = store
            .create_token(
                "admin",
                NewToken {
                    name: "bound".into(),
                    user: "alice".into(),
                    scopes: vec![Scope::ToolsRead],
                    agent: Some("stored".into()),
                    expires_at: None,
                },
            )
            .await
            .unwrap();
        let mut filed = Tokens::default();
        filed
            .insert(
                &toolhost_host::hash_token("from-the-file"),
                toolhost_host::Caller::new(
                    toolhost_host::user_space(Some(dir.path()), Some("bob")).unwrap(),
                ),
            )
            .unwrap();
        let tokens = StoredTokens::new(
            store.clone(),
            Arc::new(filed),
            Some(dir.path().to_path_buf()),
        );
        let alice = tokens
            .authenticate(&format!("Bearer {secret}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(alice.user(), "alice");
        assert_eq!(alice.agent.as_deref(), Some("stored"));
        assert!(alice.may(Scope::ToolsRead) && !alice.may(Scope::ToolsCall));
        assert_eq!(alice.space.home, dir.path().join("alice"));
        let bob = tokens
            .authenticate("Bearer from-the-file")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(bob.user(), "bob");
        assert!(
            tokens
                .authenticate("Bearer th_nope_nope")
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            tokens
                .authenticate("Basic from-the-file")
                .await
                .unwrap()
                .is_none()
        );

        // The call queue is the host's call log.
        let queue = CallQueue::start(store.clone(), QueueOptions::default());
        let log: &dyn CallLog = &queue;
        log.record(CallRecord {
            id: None,
            tool_set: None,
            user: "alice".into(),
            token: Some("t1".into()),
            agent: Some("stored".into()),
            tool: "now".into(),
            surface: "mcp-http",
            started: std::time::SystemTime::now(),
            duration: Duration::from_millis(4),
            outcome: CallOutcome::Abandoned,
            error: None,
            result_bytes: 12,
            arguments: CallRecord::arguments_for_log(
                &serde_json::json!({"zone": "UTC", "key": "s3cret"}),
                &["key".to_string()],
            ),
            result: Some(r#"{"content":[{"type":"text","text":"12:00"}],"isError":false}"#.into()),
        });
        let mut rows = Vec::new();
        for _ in 0..100 {
            rows = store
                .calls(&CallFilter::default(), None, 10)
                .await
                .unwrap()
                .items;
            if !rows.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].tool.as_str(), rows[0].outcome),
            ("now", Outcome::Cancelled)
        );
        assert_eq!(rows[0].agent_id.as_deref(), Some("stored"));
        assert_eq!(rows[0].token_id.as_deref(), Some("t1"));
        assert_eq!(rows[0].transport, "mcp-http");
        assert_eq!(rows[0].arguments, r#"{"zone":"UTC","key":"[REDACTED]"}"#);
        // The result is kept as given (the host redacted and capped it).
        assert!(rows[0].result.as_deref().unwrap().contains("12:00"));
        assert_eq!(
            store.call(&rows[0].id).await.unwrap().unwrap().result,
            rows[0].result
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_with_a_store_serves_stored_agents_and_accepts_stored_tokens() {
    use std::sync::Arc;
    use toolhost_catalog::{Root, RootOrigin};
    use toolhost_host::{ConfigFile, Host, HostError, HostOptions, ToolSource};
    use toolhost_store::Persisted;

    on_both(|at, dir| async move {
        let root = dir.path().join("greetings");
        let tool = root.join("say_hello");
        std::fs::create_dir_all(&tool).unwrap();
        std::fs::write(
            tool.join("TOOL.md"),
            "---\nname: say_hello\ndescription: Says hello.\n---\n\nHello.\n",
        )
        .unwrap();
        std::fs::write(
            tool.join("index.ts"),
            "export async function execute() { return 'hi'; }\n",
        )
        .unwrap();
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        store
            .create_agent(
                "admin",
                "stored",
                spec("Stored", vec![tool_set("greetings")]),
            )
            .await
            .unwrap();
        store
            .put_user("admin", "alice", Role::Operator)
            .await
            .unwrap();
        let (_, secret) = store
            .create_token(
                "admin",
                NewToken {
                    name: "t".into(),
                    user: "alice".into(),
                    scopes: vec![Scope::ToolsRead, Scope::ToolsCall],
                    agent: Some("stored".into()),
                    expires_at: None,
                },
            )
            .await
            .unwrap();
        let config = format!(
            "[sandbox]\nenabled = false\n[runtime]\ncache_dir = {:?}\n",
            dir.path().join("cache").display().to_string()
        );
        let host = Host::boot(HostOptions {
            config: ConfigFile::parse(&dir.path().join("toolhost.toml"), &config).unwrap(),
            roots: vec![Root {
                path: root.clone(),
                origin: RootOrigin::Flag,
            }],
            data: Some(dir.path().join("data")),
            user: None,
            tool_sets: true,
            watch: false,
            store: Some(Arc::new(Persisted::start(
                store.clone(),
                QueueOptions::default(),
            ))),
            fleet: None,
        })
        .await
        .unwrap();
        assert_eq!(host.agents().agent_ids().await.unwrap(), ["stored"]);
        let caller = host
            .tokens()
            .authenticate(&format!("Bearer {secret}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(caller.agent.as_deref(), Some("stored"));
        let source = host.agent_source("stored").await.unwrap();
        let names: Vec<String> = source
            .tools(&caller)
            .await
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["say_hello"]);

        // An edit reaches the agent's next turn; a deleted agent is unknown.
        let agent = store.agent("stored").await.unwrap().unwrap();
        store
            .update_agent("admin", "stored", spec("Stored", vec![]), agent.version)
            .await
            .unwrap();
        assert!(source.tools(&caller).await.is_empty());
        store.delete_agent("admin", "stored", None).await.unwrap();
        assert!(matches!(
            host.agent_source("stored").await.err().unwrap(),
            HostError::UnknownAgent(_)
        ));
        host.shutdown().await;
    })
    .await;
}

#[test]
fn a_key_file_is_made_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.key");
    // An empty file, as a start killed while writing it once left: replaced.
    std::fs::write(&path, "").unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    Cipher::from_file(&path).unwrap();
    let key = std::fs::read_to_string(&path).unwrap();
    assert_eq!(key.trim().len(), 44, "{key:?}");
    // Made once: the next open reads the same key, and no temporary file is left.
    Cipher::from_file(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), key);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[tokio::test]
async fn console_sessions_keep_the_token_sealed_and_end_when_signed_out_or_expired() {
    on_both(|at, dir| async move {
        let store = Store::open(at.clone(), Some(cipher(&dir))).await.unwrap();
        let token = "th_abc_0123456789";
        let secret = store.begin_session("ada", token, 60_000).await.unwrap();
        assert!(secret.starts_with("ths_") && secret.len() == 68, "{secret}");
        let session = store.session(&secret).await.unwrap().unwrap();
        assert_eq!(
            (session.user.as_str(), session.token.as_str()),
            ("ada", token)
        );
        // Neither the secret nor the token is stored in clear.
        let mut conn = match &at {
            Location::Sqlite(path) => {
                sqlx::AnyConnection::connect(&format!("sqlite://{}", path.display()))
                    .await
                    .unwrap()
            }
            Location::Postgres(url) => sqlx::AnyConnection::connect(url).await.unwrap(),
        };
        sqlx::any::install_default_drivers();
        let row: (String, String, String) =
            sqlx::query_as("SELECT hash, nonce, ciphertext FROM console_sessions")
                .fetch_one(&mut conn)
                .await
                .unwrap();
        let stored = format!("{row:?}");
        assert!(
            !stored.contains(&secret[4..]) && !stored.contains("0123456789"),
            "{stored}"
        );
        // Unknown, malformed, another key's, signed out.
        assert!(store.session("ths_nope").await.unwrap().is_none());
        assert!(store.session(token).await.unwrap().is_none());
        let other = Cipher::from_file(&dir.path().join("other.key")).unwrap();
        let store2 = Store::open(at.clone(), Some(other)).await.unwrap();
        assert!(store2.session(&secret).await.is_err());
        assert!(store.end_session(&secret).await.unwrap());
        assert!(store.session(&secret).await.unwrap().is_none());
        assert!(!store.end_session(&secret).await.unwrap());
        // An expired one is gone, and deleted by the next sign-in.
        let old = store.begin_session("ada", token, -1).await.unwrap();
        assert!(store.session(&old).await.unwrap().is_none());
        store.begin_session("bob", token, 60_000).await.unwrap();
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM console_sessions")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 1);
        // Without a key there are no sessions.
        let keyless = Store::open(at, None).await.unwrap();
        assert!(keyless.begin_session("ada", token, 1000).await.is_err());
    })
    .await;
}

#[tokio::test]
async fn call_counts_by_outcome_since_a_time_and_per_user() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        let mut rows = vec![
            call(0, "echo", Outcome::Success),
            call(1, "echo", Outcome::Success),
            call(2, "slow", Outcome::Error),
            call(3, "slow", Outcome::Timeout),
            call(10, "echo", Outcome::Success),
        ];
        rows[4].principal = "bob".into();
        store.insert_calls(&rows).await.unwrap();
        let mut all = store.call_counts(1_000_001, None).await.unwrap();
        all.sort_by_key(|(o, _)| o.as_str());
        assert_eq!(
            all,
            [
                (Outcome::Error, 1),
                (Outcome::Success, 2),
                (Outcome::Timeout, 1)
            ]
        );
        let bobs = store.call_counts(0, Some("bob")).await.unwrap();
        assert_eq!(bobs, [(Outcome::Success, 1)]);
        assert!(store.call_counts(2_000_000, None).await.unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn the_chat_model_keeps_its_key_sealed_out_of_the_audit_log() {
    on_both(|at, dir| async move {
        let store = Store::open(at, Some(cipher(&dir))).await.unwrap();
        assert_eq!(store.chat_model().await.unwrap(), None);
        store
            .put_chat_model("alice", "http://127.0.0.1:9/v1", "m1", Some("sk-secret-1"))
            .await
            .unwrap();
        // No key given: the stored one stays.
        let m = store
            .put_chat_model("alice", "http://127.0.0.1:9/v1", "m2", None)
            .await
            .unwrap();
        assert_eq!(m.api_key.as_deref(), Some("sk-secret-1"));
        let read = store.chat_model().await.unwrap().unwrap();
        assert_eq!(
            (read.model.as_str(), read.api_key),
            ("m2", Some("sk-secret-1".into()))
        );
        // An empty key removes it.
        store
            .put_chat_model("alice", "http://127.0.0.1:9/v1", "m2", Some(""))
            .await
            .unwrap();
        assert_eq!(store.chat_model().await.unwrap().unwrap().api_key, None);
        let audit = store.audit(None, 50).await.unwrap();
        let text = format!("{:?}", audit.items);
        assert!(text.contains("chat_model.update"), "{text}");
        assert!(
            !text.contains("sk-secret-1"),
            "the key is in the audit log: {text}"
        );
    })
    .await;
}
