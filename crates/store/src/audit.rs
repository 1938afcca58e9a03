//! The admin audit log: one row per change (who, what, when, before and after, outcome),
//! written in the same transaction as the change itself, so neither exists without the
//! other.

use serde::Serialize;
use sqlx::{Any, Row, Transaction};

use crate::{Page, Store, StoreError, now_ms};

/// One admin change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditEvent {
    /// Its id (time-ordered).
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub happened_at: i64,
    /// Who made it (a user name, or `config` for the configuration file).
    pub actor: String,
    /// What was done: `agent.create`, `token.revoke`, …
    pub action: String,
    /// The kind of object changed.
    pub target_kind: String,
    /// Its id.
    pub target_id: String,
    /// `success`, or why it failed.
    pub outcome: String,
    /// The object before (JSON, secrets left out).
    pub old_value: Option<String>,
    /// The object after.
    pub new_value: Option<String>,
}

impl AuditEvent {
    /// A successful change of `kind` `id` from `old` to `new`.
    pub fn change<T: Serialize>(
        actor: &str,
        action: &str,
        kind: &str,
        id: &str,
        old: Option<&T>,
        new: Option<&T>,
    ) -> AuditEvent {
        let json = |v: Option<&T>| v.and_then(|v| serde_json::to_string(v).ok());
        AuditEvent {
            id: crate::new_id(),
            happened_at: now_ms(),
            actor: actor.to_string(),
            action: action.to_string(),
            target_kind: kind.to_string(),
            target_id: id.to_string(),
            outcome: "success".to_string(),
            old_value: json(old),
            new_value: json(new),
        }
    }
}

pub(crate) async fn record_in(
    tx: &mut Transaction<'_, Any>,
    e: AuditEvent,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO audit_events (id, happened_at, actor, action, target_kind, target_id, outcome, old_value, new_value) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&e.id)
    .bind(e.happened_at)
    .bind(&e.actor)
    .bind(&e.action)
    .bind(&e.target_kind)
    .bind(&e.target_id)
    .bind(&e.outcome)
    .bind(&e.old_value)
    .bind(&e.new_value)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl Store {
    /// Records a change made outside a store transaction (a refused one, say).
    pub async fn record_audit(&self, event: AuditEvent) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        record_in(&mut tx, event).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The audit log, newest first, `limit` (1 to 500) before the cursor `before` (an
    /// event id).
    pub async fn audit(
        &self,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Page<AuditEvent>, StoreError> {
        let limit = limit.clamp(1, 500);
        // Ids are time-ordered, so one column pages. Without a cursor, no bound at all: a
        // sentinel such as `'~'` sorts before the ids, not after, under some collations.
        let query = match before {
            Some(before) => sqlx::query(
                "SELECT id, happened_at, actor, action, target_kind, target_id, outcome, old_value, new_value \
                 FROM audit_events WHERE id < $1 ORDER BY id DESC LIMIT $2",
            )
            .bind(before),
            None => sqlx::query(
                "SELECT id, happened_at, actor, action, target_kind, target_id, outcome, old_value, new_value \
                 FROM audit_events ORDER BY id DESC LIMIT $1",
            ),
        };
        let rows = query.bind(limit as i64 + 1).fetch_all(&self.pool).await?;
        let mut items = Vec::with_capacity(rows.len());
        for row in &rows {
            items.push(AuditEvent {
                id: row.try_get("id")?,
                happened_at: row.try_get("happened_at")?,
                actor: row.try_get("actor")?,
                action: row.try_get("action")?,
                target_kind: row.try_get("target_kind")?,
                target_id: row.try_get("target_id")?,
                outcome: row.try_get("outcome")?,
                old_value: row.try_get("old_value")?,
                new_value: row.try_get("new_value")?,
            });
        }
        Ok(Page::cut(items, limit, |e| e.id.clone()))
    }
}
