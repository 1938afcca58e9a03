//! The call log: one row per tool call on every surface, written off the call path by a
//! batching writer behind a bounded queue. A full queue (the database is gone, or slower
//! than the calls) never stalls a call: the row is counted as lost and a warning says how
//! many; nothing is dropped silently. Old rows go after the configured retention.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use sqlx::Row;
use tokio::sync::mpsc;

use crate::{Page, Store, StoreError, now_ms};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The tool returned a result.
    Success,
    /// It ended in an error result.
    Error,
    /// The caller cancelled it, or went away.
    Cancelled,
    /// Its deadline passed.
    Timeout,
    /// It was refused before it ran (not granted, not allowed).
    Denied,
}

impl Outcome {
    /// Its name in the store and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Error => "error",
            Outcome::Cancelled => "cancelled",
            Outcome::Timeout => "timeout",
            Outcome::Denied => "denied",
        }
    }

    /// The outcome named `text`.
    pub fn parse(text: &str) -> Option<Outcome> {
        Some(match text {
            "success" => Outcome::Success,
            "error" => Outcome::Error,
            "cancelled" => Outcome::Cancelled,
            "timeout" => Outcome::Timeout,
            "denied" => Outcome::Denied,
            _ => return None,
        })
    }
}

/// One call as the log keeps it. `arguments` are already redacted (`sensitive` values
/// replaced) and capped by whoever records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    /// Its id (time-ordered).
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub started_at: i64,
    /// How long it took.
    pub duration_ms: i64,
    /// Who called (a user name).
    pub principal: String,
    /// The token it came with, if any.
    pub token_id: Option<String>,
    /// The agent it was called as, if any.
    pub agent_id: Option<String>,
    /// `mcp-stdio`, `mcp-http`, `api`, `console`, `cli`.
    pub transport: String,
    /// The tool, as called.
    pub tool: String,
    /// The tool set it came from, if known.
    pub tool_set: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// The error's message, for an error.
    pub error: Option<String>,
    /// Bytes of the result.
    pub result_bytes: i64,
    /// The arguments, redacted and capped (JSON).
    pub arguments: String,
    /// The result (JSON: content blocks, `isError`, `structuredContent`), redacted and
    /// capped by whoever records it; `None` when the call had none.
    pub result: Option<String>,
}

/// Which calls to list.
#[derive(Debug, Clone, Default)]
pub struct CallFilter {
    /// Only this tool.
    pub tool: Option<String>,
    /// Only calls as this agent.
    pub agent: Option<String>,
    /// Only this user's calls.
    pub principal: Option<String>,
    /// Only calls that ended so.
    pub outcome: Option<Outcome>,
    /// Started at or after (ms).
    pub since: Option<i64>,
    /// Started before (ms).
    pub until: Option<i64>,
}

const CALL_COLUMNS: &str = "id, started_at, duration_ms, principal, token_id, agent_id, \
     transport, tool, tool_set, outcome, error, result_bytes, arguments, result";

fn call_row(row: &sqlx::any::AnyRow) -> Result<CallRow, sqlx::Error> {
    Ok(CallRow {
        id: row.try_get("id")?,
        started_at: row.try_get("started_at")?,
        duration_ms: row.try_get("duration_ms")?,
        principal: row.try_get("principal")?,
        token_id: row.try_get("token_id")?,
        agent_id: row.try_get("agent_id")?,
        transport: row.try_get("transport")?,
        tool: row.try_get("tool")?,
        tool_set: row.try_get("tool_set")?,
        outcome: Outcome::parse(&row.try_get::<String, _>("outcome")?).unwrap_or(Outcome::Error),
        error: row.try_get("error")?,
        result_bytes: row.try_get("result_bytes")?,
        arguments: row.try_get("arguments")?,
        result: row.try_get("result")?,
    })
}

impl Store {
    /// Writes rows now (the writer's batch; tests).
    pub async fn insert_calls(&self, rows: &[CallRow]) -> Result<(), StoreError> {
        // Fourteen parameters a row; a few hundred rows a statement stays under every
        // engine's parameter limit.
        for chunk in rows.chunks(200) {
            let mut sql = String::from(
                "INSERT INTO tool_calls (id, started_at, duration_ms, principal, token_id, agent_id, \
                 transport, tool, tool_set, outcome, error, result_bytes, arguments, result) VALUES ",
            );
            for i in 0..chunk.len() {
                let b = i * 14;
                if i > 0 {
                    sql.push_str(", ");
                }
                sql.push('(');
                let params: Vec<String> = (1..=14).map(|n| format!("${}", b + n)).collect();
                sql.push_str(&params.join(", "));
                sql.push(')');
            }
            sql.push_str(" ON CONFLICT (id) DO NOTHING");
            // Built from placeholders only: every value is bound.
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
            for r in chunk {
                q = q
                    .bind(&r.id)
                    .bind(r.started_at)
                    .bind(r.duration_ms)
                    .bind(&r.principal)
                    .bind(&r.token_id)
                    .bind(&r.agent_id)
                    .bind(&r.transport)
                    .bind(&r.tool)
                    .bind(&r.tool_set)
                    .bind(r.outcome.as_str())
                    .bind(&r.error)
                    .bind(r.result_bytes)
                    .bind(&r.arguments)
                    .bind(&r.result);
            }
            q.execute(&self.pool).await?;
        }
        Ok(())
    }

    /// Calls, newest first (by start, then id), `limit` (1 to 500) after the cursor
    /// `before` (the id of the last call of the previous page; one no longer in the log
    /// ends the list).
    ///
    /// The statement holds only the conditions asked for, so that each engine's planner
    /// sees plain equalities and ranges and walks one index newest first, stopping after a
    /// page: `(column, started_at, id)` for a filter (`(tool, outcome, …)` for both),
    /// `(started_at, id)` otherwise, where `since` and `until` bound the range. On SQLite,
    /// which plans without statistics, the first filter of tool, agent, user and outcome
    /// (roughly the most selective first) picks the index and the others only filter
    /// (`+column` keeps a column off an index there); PostgreSQL chooses by its statistics.
    pub async fn calls(
        &self,
        filter: &CallFilter,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Page<CallRow>, StoreError> {
        let limit = limit.clamp(1, 500);
        let mut sql = format!("SELECT {CALL_COLUMNS} FROM tool_calls WHERE 1 = 1");
        let mut texts: Vec<&str> = Vec::new();
        let mut leading: Option<&str> = None;
        for (column, value) in [
            ("tool", filter.tool.as_deref()),
            ("agent_id", filter.agent.as_deref()),
            ("principal", filter.principal.as_deref()),
            ("outcome", filter.outcome.map(Outcome::as_str)),
        ] {
            let Some(value) = value else { continue };
            texts.push(value);
            let indexed = match leading {
                None => true,
                // `(tool, outcome, started_at, id)` serves both.
                Some(first) => first == "tool" && column == "outcome",
            };
            leading.get_or_insert(column);
            let hint = if !indexed && self.engine() == crate::Engine::Sqlite {
                "+"
            } else {
                ""
            };
            sql.push_str(&format!(" AND {hint}{column} = ${}", texts.len()));
        }
        if let Some(before) = before {
            texts.push(before);
            let n = texts.len();
            sql.push_str(&format!(
                " AND (started_at, id) < ((SELECT started_at FROM tool_calls WHERE id = ${n}), ${n})"
            ));
        }
        let mut numbers: Vec<i64> = Vec::new();
        for (condition, value) in [(">=", filter.since), ("<", filter.until)] {
            let Some(value) = value else { continue };
            numbers.push(value);
            sql.push_str(&format!(
                " AND started_at {condition} ${}",
                texts.len() + numbers.len()
            ));
        }
        sql.push_str(&format!(
            " ORDER BY started_at DESC, id DESC LIMIT ${}",
            texts.len() + numbers.len() + 1
        ));
        // Built from fixed column names and placeholders only: every value is bound.
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for text in texts {
            query = query.bind(text);
        }
        for number in numbers {
            query = query.bind(number);
        }
        let rows = query.bind(limit as i64 + 1).fetch_all(&self.pool).await?;
        let items = rows.iter().map(call_row).collect::<Result<Vec<_>, _>>()?;
        Ok(Page::cut(items, limit, |c| c.id.clone()))
    }

    /// How many calls started at or after `since` (ms) ended in each outcome (only
    /// `principal`'s when given), for summaries such as the console's overview.
    pub async fn call_counts(
        &self,
        since: i64,
        principal: Option<&str>,
    ) -> Result<Vec<(Outcome, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT outcome, COUNT(*) AS n FROM tool_calls \
             WHERE started_at >= $1 AND ($2 = '' OR principal = $2) GROUP BY outcome",
        )
        .bind(since)
        .bind(principal.unwrap_or(""))
        .fetch_all(&self.pool)
        .await?;
        let mut counts = Vec::with_capacity(rows.len());
        for row in &rows {
            if let Some(outcome) = Outcome::parse(&row.try_get::<String, _>("outcome")?) {
                counts.push((outcome, row.try_get::<i64, _>("n")?));
            }
        }
        Ok(counts)
    }

    /// The call `id`, once its row is written.
    pub async fn call(&self, id: &str) -> Result<Option<CallRow>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {CALL_COLUMNS} FROM tool_calls WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(call_row).transpose()?)
    }

    /// Deletes calls that started before `cutoff` (ms); how many went.
    pub async fn prune_calls(&self, cutoff: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM tool_calls WHERE started_at < $1")
            .bind(cutoff)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }
}

/// The call log's writer side: [`CallQueue::push`] never waits.
#[derive(Clone, Debug)]
pub struct CallQueue {
    tx: mpsc::Sender<CallRow>,
    counts: Arc<Counts>,
}

/// What the queue has done, for metrics and tests.
#[derive(Debug, Default)]
pub struct Counts {
    /// Rows queued.
    pub accepted: AtomicU64,
    /// Rows written.
    pub written: AtomicU64,
    /// Rows lost because the queue was full.
    pub lost: AtomicU64,
}

/// How the writer runs.
#[derive(Debug, Clone)]
pub struct QueueOptions {
    /// Rows the queue holds while the database is slow or gone.
    pub capacity: usize,
    /// The most rows one write takes.
    pub batch: usize,
    /// How long a row may wait for its batch to fill.
    pub linger: Duration,
    /// Calls older than this are deleted (checked hourly); `None` keeps them.
    pub retention: Option<Duration>,
}

impl Default for QueueOptions {
    fn default() -> QueueOptions {
        QueueOptions {
            capacity: 50_000,
            batch: 500,
            linger: Duration::from_millis(50),
            retention: Some(Duration::from_secs(90 * 24 * 3600)),
        }
    }
}

impl CallQueue {
    /// Starts the writer for `store` (inside a Tokio runtime). It ends once every clone
    /// of the queue is dropped and what it held is written.
    pub fn start(store: Store, options: QueueOptions) -> CallQueue {
        let (tx, rx) = mpsc::channel(options.capacity.max(1));
        let counts = Arc::new(Counts::default());
        tokio::spawn(write(store, rx, options, Arc::clone(&counts)));
        CallQueue { tx, counts }
    }

    /// Queues a row; never waits. A full queue counts the row as lost and warns.
    pub fn push(&self, row: CallRow) {
        if self.tx.try_send(row).is_ok() {
            self.counts.accepted.fetch_add(1, Ordering::Relaxed);
        } else {
            let lost = self.counts.lost.fetch_add(1, Ordering::Relaxed) + 1;
            if lost.is_power_of_two() {
                tracing::warn!(
                    "the call log's queue is full (the store is down or too slow): {lost} \
                     call rows lost so far"
                );
            }
        }
    }

    /// Rows written and lost so far.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Waits until every queued row is written, for at most `wait` (at shutdown, before
    /// the store closes); whether it got there.
    pub async fn flush(&self, wait: Duration) -> bool {
        let until = tokio::time::Instant::now() + wait;
        loop {
            let accepted = self.counts.accepted.load(Ordering::Relaxed);
            if self.counts.written.load(Ordering::Relaxed) >= accepted {
                return true;
            }
            if tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Rows waiting to be written.
    pub fn pending(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }
}

async fn write(
    store: Store,
    mut rx: mpsc::Receiver<CallRow>,
    options: QueueOptions,
    counts: Arc<Counts>,
) {
    let mut batch: Vec<CallRow> = Vec::with_capacity(options.batch);
    let mut last_prune: Option<Instant> = None;
    loop {
        if batch.is_empty() {
            match rx.recv().await {
                Some(row) => batch.push(row),
                None => return,
            }
        }
        let deadline = tokio::time::Instant::now() + options.linger;
        let mut closed = false;
        while batch.len() < options.batch {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(row)) => batch.push(row),
                Ok(None) => {
                    closed = true;
                    break;
                }
                Err(_) => break,
            }
        }
        // The database may be gone: keep the batch and retry, backing off; the queue
        // behind it holds what arrives meanwhile.
        let mut wait = Duration::from_millis(100);
        loop {
            match store.insert_calls(&batch).await {
                Ok(()) => {
                    counts
                        .written
                        .fetch_add(batch.len() as u64, Ordering::Relaxed);
                    batch.clear();
                    break;
                }
                Err(e) => {
                    tracing::warn!(
                        "writing {} call rows failed ({e}); retrying in {} ms",
                        batch.len(),
                        wait.as_millis()
                    );
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(10));
                }
            }
        }
        if let Some(keep) = options.retention
            && last_prune.is_none_or(|t| t.elapsed() >= Duration::from_secs(3600))
        {
            last_prune = Some(Instant::now());
            let cutoff = now_ms() - i64::try_from(keep.as_millis()).unwrap_or(i64::MAX);
            if let Err(e) = store.prune_calls(cutoff).await {
                tracing::warn!("pruning old call rows failed: {e}");
            }
        }
        if closed && batch.is_empty() && rx.is_empty() {
            return;
        }
    }
}
