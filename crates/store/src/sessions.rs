//! The web console's sessions: a random secret in the browser's cookie, its SHA-256 and
//! the sealed token it was opened with here. The token is authenticated again on every
//! request, so revoking it (or its expiry) ends its sessions too.

use sqlx::Row;

use crate::{Store, StoreError, now_ms, secrets};

/// A live console session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleSession {
    /// The user who signed in.
    pub user: String,
    /// The token they signed in with (to authenticate each request with).
    pub token: String,
    /// When it ends (ms since the Unix epoch).
    pub expires_at: i64,
}

/// The prefix of a session's secret.
const PREFIX: &str = "ths_";

/// The name of the cookie that carries a session's secret.
pub const SESSION_COOKIE: &str = "toolhost_session";

/// The session secret among a request's `Cookie` header values, if any.
pub fn session_cookie<'a>(cookie_headers: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    cookie_headers
        .into_iter()
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == SESSION_COOKIE)
        .map(|(_, v)| v.trim())
}

impl Store {
    /// Opens a session for `user`, who signed in with `token`, for `ttl_ms`: the secret
    /// for the cookie (`ths_` and 64 hex digits), shown only here. Ended sessions are
    /// deleted on the way.
    pub async fn begin_session(
        &self,
        user: &str,
        token: &str,
        ttl_ms: i64,
    ) -> Result<String, StoreError> {
        let (nonce, sealed) = self.cipher()?.seal(token)?;
        let mut secret = String::from(PREFIX);
        for b in secrets::random_bytes::<32>() {
            secret.push_str(&format!("{b:02x}"));
        }
        let now = now_ms();
        sqlx::query("DELETE FROM console_sessions WHERE expires_at <= $1")
            .bind(now)
            .execute(&self.pool)
            .await?;
        sqlx::query(
            "INSERT INTO console_sessions (hash, user_name, nonce, ciphertext, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(toolhost_host::hash_token(&secret))
        .bind(user)
        .bind(nonce)
        .bind(sealed)
        .bind(now)
        .bind(now.saturating_add(ttl_ms))
        .execute(&self.pool)
        .await?;
        Ok(secret)
    }

    /// The live session whose secret is `secret`, if any.
    pub async fn session(&self, secret: &str) -> Result<Option<ConsoleSession>, StoreError> {
        if !secret.starts_with(PREFIX) || secret.len() > 100 {
            return Ok(None);
        }
        let row = sqlx::query(
            "SELECT user_name, nonce, ciphertext, expires_at FROM console_sessions \
             WHERE hash = $1 AND expires_at > $2",
        )
        .bind(toolhost_host::hash_token(secret))
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let nonce: String = row.try_get("nonce")?;
        let sealed: String = row.try_get("ciphertext")?;
        Ok(Some(ConsoleSession {
            user: row.try_get("user_name")?,
            token: self.cipher()?.open(&nonce, &sealed)?,
            expires_at: row.try_get("expires_at")?,
        }))
    }

    /// Ends the session whose secret is `secret`; whether there was one.
    pub async fn end_session(&self, secret: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM console_sessions WHERE hash = $1")
            .bind(toolhost_host::hash_token(secret))
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }
}
