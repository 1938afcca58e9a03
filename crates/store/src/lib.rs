//! Toolhost's persistent state: agents and their grants, users, API tokens, secrets
//! (sealed with AES-256-GCM), the call log and the admin audit log.
//!
//! One code path for two engines: SQLite embedded by default (a file in the data
//! directory, WAL, foreign keys on) and PostgreSQL from a `postgres://` URL, through
//! sqlx's `Any` driver and one migration set valid on both (ids TEXT, times BIGINT
//! milliseconds, JSON TEXT). Migrations run under a lock at open; a database written by a
//! newer Toolhost is refused.
#![warn(missing_docs, unreachable_pub)]

mod agents;
mod audit;
mod calls;
mod chat_model;
mod error;
mod fleet;
mod host_impl;
mod mcp_servers;
mod open;
mod remembered;
mod secrets;
mod sessions;
mod tokens;

use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{AnyPool, Row};

pub use agents::{Agent, AgentSpec, GrantSpec, Rule};
pub use audit::AuditEvent;
pub use calls::{CallFilter, CallQueue, CallRow, Counts, Outcome, QueueOptions};
pub use chat_model::ChatModel;
pub use error::StoreError;
pub use fleet::{Published, PublishedRoot};
pub use host_impl::{Persisted, StoredAgents, StoredTokens};
pub use mcp_servers::StoredMcpServer;
pub use open::{Engine, Location};
pub use remembered::Remember;
pub use secrets::{Cipher, KEY_VARIABLE};
pub use sessions::{ConsoleSession, SESSION_COOKIE, session_cookie};
pub use tokens::{Bearer, NewToken, Role, Scope, Token, User};

/// An open store. Cheap to clone: clones share the pool.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    location: Location,
    cipher: Option<Cipher>,
}

/// One page of a list, and the cursor of the next (none on the last).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// Pass it back to get the next page.
    pub next: Option<String>,
}

impl<T> Page<T> {
    /// A page of at most `limit` from `items` (fetched with `limit + 1` to tell whether
    /// more follow), its cursor taken from the last item kept.
    pub(crate) fn cut(mut items: Vec<T>, limit: usize, cursor: impl Fn(&T) -> String) -> Page<T> {
        let more = items.len() > limit;
        items.truncate(limit);
        let next = more.then(|| items.last().map(cursor)).flatten();
        Page { items, next }
    }
}

impl Store {
    /// Opens (creating an SQLite file if needed) and migrates the store at `location`.
    /// `cipher` seals secrets; without one, storing a secret is an error.
    pub async fn open(location: Location, cipher: Option<Cipher>) -> Result<Store, StoreError> {
        let pool = open::open(&location).await?;
        Ok(Store {
            pool,
            location,
            cipher,
        })
    }

    /// Where it is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Its engine.
    pub fn engine(&self) -> Engine {
        self.location.engine()
    }

    /// Closes its connections (waiting for those in use).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1 AS one").fetch_one(&self.pool).await?;
        Ok(())
    }

    /// Seals `value` as secret `name` of `owner` (an MCP server, a plugin).
    pub async fn put_secret(&self, owner: &str, name: &str, value: &str) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        self.put_secret_on(&mut conn, owner, name, value).await
    }

    /// [`Store::put_secret`] on a connection (or inside a transaction).
    pub(crate) async fn put_secret_on(
        &self,
        conn: &mut sqlx::AnyConnection,
        owner: &str,
        name: &str,
        value: &str,
    ) -> Result<(), StoreError> {
        let (nonce, sealed) = self.cipher()?.seal(value)?;
        sqlx::query(
            "INSERT INTO secrets (owner, name, nonce, ciphertext, updated_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (owner, name) DO UPDATE SET nonce = $3, ciphertext = $4, updated_at = $5",
        )
        .bind(owner)
        .bind(name)
        .bind(nonce)
        .bind(sealed)
        .bind(now_ms())
        .execute(&mut *conn)
        .await?;
        Ok(())
    }

    /// Secret `name` of `owner`, opened. For the host only: the API never returns one.
    pub async fn secret(&self, owner: &str, name: &str) -> Result<Option<String>, StoreError> {
        let row =
            sqlx::query("SELECT nonce, ciphertext FROM secrets WHERE owner = $1 AND name = $2")
                .bind(owner)
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
        match row {
            Some(row) => {
                let nonce: String = row.try_get("nonce")?;
                let sealed: String = row.try_get("ciphertext")?;
                Ok(Some(self.cipher()?.open(&nonce, &sealed)?))
            }
            None => Ok(None),
        }
    }

    /// The names of `owner`'s secrets (never their values).
    pub async fn secret_names(&self, owner: &str) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query("SELECT name FROM secrets WHERE owner = $1 ORDER BY name")
            .bind(owner)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| r.try_get::<String, _>("name").map_err(StoreError::from))
            .collect()
    }

    /// Deletes secret `name` of `owner`; whether it existed.
    pub async fn delete_secret(&self, owner: &str, name: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM secrets WHERE owner = $1 AND name = $2")
            .bind(owner)
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    pub(crate) fn cipher(&self) -> Result<&Cipher, StoreError> {
        self.cipher.as_ref().ok_or_else(|| {
            StoreError::Secret(format!(
                "no key to seal secrets with: set ${KEY_VARIABLE} or give the store a key file"
            ))
        })
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A new id that sorts by creation time: 12 hex digits of milliseconds and 4 of a counter
/// (so ids made by one process in one millisecond keep their order), then 12 random.
pub fn new_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = u64::try_from(now_ms()).unwrap_or(0) << 16;
    let stamp = LAST
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
            Some(if now > last { now } else { last + 1 })
        })
        .map_or(now, |last| if now > last { now } else { last + 1 });
    let mut id = format!("{stamp:016x}");
    for b in secrets::random_bytes::<6>() {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// An agent id, a tool-set id or a server name: `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$`.
pub(crate) fn is_ref(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// A Lucide icon name: kebab-case, like `book-open`.
pub(crate) fn is_icon_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}
