//! Users with roles, and their API tokens: opaque (`th_<id>_<secret>`), shown once at
//! creation, stored as their SHA-256 only, with scopes, an optional agent binding, an
//! expiry and the time of last use.

use serde::{Deserialize, Serialize};
use sqlx::Row;

pub use toolhost_host::{Role, Scope};

use crate::audit::{AuditEvent, record_in};
use crate::{Store, StoreError, now_ms};

/// A user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// The user name (the user-name rule: it names the user's home).
    pub name: String,
    /// What the user may do.
    pub role: Role,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
}

/// A token as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Token {
    /// Its id, also the start of the token (`th_<id>_…`).
    pub id: String,
    /// What it is for.
    pub name: String,
    /// Whose it is.
    pub user: String,
    /// What it allows.
    pub scopes: Vec<Scope>,
    /// The agent it is bound to: on MCP its bearer is that agent.
    pub agent: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When it stops working, if ever.
    pub expires_at: Option<i64>,
    /// When it last authenticated a request.
    pub last_used_at: Option<i64>,
    /// When it was revoked.
    pub revoked_at: Option<i64>,
}

/// What a new token is.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// What it is for.
    pub name: String,
    /// Whose it is (created as a viewer when unknown, only by an admin).
    pub user: String,
    /// What it allows (default: `tools:read` and `tools:call`).
    #[serde(default = "default_scopes")]
    pub scopes: Vec<Scope>,
    /// An agent to bind it to.
    #[serde(default)]
    pub agent: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[serde(default)]
    pub expires_at: Option<i64>,
}

fn default_scopes() -> Vec<Scope> {
    vec![Scope::ToolsRead, Scope::ToolsCall]
}

/// Who a token authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bearer {
    /// The token's id.
    pub token: String,
    /// Its user.
    pub user: String,
    /// The user's role.
    pub role: Role,
    /// The token's scopes.
    pub scopes: Vec<Scope>,
    /// The agent it is bound to.
    pub agent: Option<String>,
}

impl Store {
    /// Creates or changes user `name`'s role.
    pub async fn put_user(&self, actor: &str, name: &str, role: Role) -> Result<User, StoreError> {
        toolhost_catalog::validate_user(name)
            .map_err(|e| StoreError::invalid("name", e.to_string()))?;
        let before = self.user(name).await?;
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO users (name, role, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET role = $2",
        )
        .bind(name)
        .bind(role.as_str())
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let user = User {
            name: name.to_string(),
            role,
            created_at: before.as_ref().map_or(now, |u| u.created_at),
        };
        record_in(
            &mut tx,
            AuditEvent::change(
                actor,
                "user.put",
                "user",
                name,
                before.as_ref(),
                Some(&user),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(user)
    }

    /// One user.
    pub async fn user(&self, name: &str) -> Result<Option<User>, StoreError> {
        let row = sqlx::query("SELECT name, role, created_at FROM users WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| user_from_row(&r)).transpose()
    }

    /// Every user, by name.
    pub async fn users(&self) -> Result<Vec<User>, StoreError> {
        let rows = sqlx::query("SELECT name, role, created_at FROM users ORDER BY name")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(user_from_row).collect()
    }

    /// Whether no user exists yet (a fresh install).
    pub async fn is_empty(&self) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM users")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get::<i64, _>("n")? == 0)
    }

    /// Creates a token; the returned string is the only time its secret is seen. An agent
    /// it is bound to may be the configuration file's: the caller checks it exists.
    pub async fn create_token(
        &self,
        actor: &str,
        new: NewToken,
    ) -> Result<(Token, String), StoreError> {
        if new.name.trim().is_empty() || new.name.len() > 100 {
            return Err(StoreError::invalid("name", "must hold 1 to 100 bytes"));
        }
        if new.scopes.is_empty() {
            return Err(StoreError::invalid("scopes", "name at least one scope"));
        }
        if self.user(&new.user).await?.is_none() {
            return Err(StoreError::not_found("user", &new.user));
        }
        // An agent may be the configuration file's: whoever binds checks it exists.
        if let Some(agent) = &new.agent
            && !crate::is_ref(agent)
        {
            return Err(StoreError::invalid(
                "agent",
                format!("{agent:?} is not an agent id"),
            ));
        }
        let id = hex(&crate::secrets::random_bytes::<6>());
        let secret = base64url(&crate::secrets::random_bytes::<32>());
        let plain = format!("th_{id}_{secret}");
        let mut scopes = new.scopes.clone();
        scopes.sort();
        scopes.dedup();
        let token = Token {
            id: id.clone(),
            name: new.name,
            user: new.user,
            scopes,
            agent: new.agent,
            created_at: now_ms(),
            expires_at: new.expires_at,
            last_used_at: None,
            revoked_at: None,
        };
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO api_tokens (id, name, hash, user_name, scopes, agent_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&token.id)
        .bind(&token.name)
        .bind(toolhost_host::hash_token(&plain))
        .bind(&token.user)
        .bind(scopes_text(&token.scopes))
        .bind(&token.agent)
        .bind(token.created_at)
        .bind(token.expires_at)
        .execute(&mut *tx)
        .await?;
        record_in(
            &mut tx,
            AuditEvent::change(actor, "token.create", "token", &id, None, Some(&token)),
        )
        .await?;
        tx.commit().await?;
        Ok((token, plain))
    }

    /// Every token, or `user`'s, newest first.
    pub async fn tokens(&self, user: Option<&str>) -> Result<Vec<Token>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, user_name, scopes, agent_id, created_at, expires_at, last_used_at, revoked_at \
             FROM api_tokens WHERE ($1 = '' OR user_name = $1) ORDER BY created_at DESC, id",
        )
        .bind(user.unwrap_or(""))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(token_from_row).collect()
    }

    /// Revokes token `id` (it stops working at once; the row stays for the audit).
    pub async fn revoke_token(&self, actor: &str, id: &str) -> Result<Token, StoreError> {
        let row = sqlx::query(
            "SELECT id, name, user_name, scopes, agent_id, created_at, expires_at, last_used_at, revoked_at \
             FROM api_tokens WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::not_found("token", id))?;
        let before = token_from_row(&row)?;
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let after = Token {
            revoked_at: before.revoked_at.or(Some(now)),
            ..before.clone()
        };
        record_in(
            &mut tx,
            AuditEvent::change(
                actor,
                "token.revoke",
                "token",
                id,
                Some(&before),
                Some(&after),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(after)
    }

    /// The bearer of `token` (the whole `th_…` string), if it is live: known, not revoked,
    /// not expired. Records its use.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Bearer>, StoreError> {
        if !token.starts_with("th_") || token.len() > 200 {
            return Ok(None);
        }
        let row = sqlx::query(
            "SELECT t.id, t.scopes, t.agent_id, t.expires_at, t.revoked_at, t.last_used_at, u.name, u.role \
             FROM api_tokens t JOIN users u ON u.name = t.user_name WHERE t.hash = $1",
        )
        .bind(toolhost_host::hash_token(token))
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let now = now_ms();
        let revoked: Option<i64> = row.try_get("revoked_at")?;
        let expires: Option<i64> = row.try_get("expires_at")?;
        if revoked.is_some() || expires.is_some_and(|e| e <= now) {
            return Ok(None);
        }
        let id: String = row.try_get("id")?;
        // Last use to the minute: a write per request would make every call a write.
        let last: Option<i64> = row.try_get("last_used_at")?;
        if last.is_none_or(|l| now - l >= 60_000) {
            sqlx::query("UPDATE api_tokens SET last_used_at = $1 WHERE id = $2")
                .bind(now)
                .bind(&id)
                .execute(&self.pool)
                .await?;
        }
        Ok(Some(Bearer {
            token: id,
            user: row.try_get("name")?,
            role: Role::parse(&row.try_get::<String, _>("role")?).unwrap_or(Role::Viewer),
            scopes: parse_scopes(&row.try_get::<String, _>("scopes")?),
            agent: row.try_get("agent_id")?,
        }))
    }
}

fn user_from_row(row: &sqlx::any::AnyRow) -> Result<User, StoreError> {
    Ok(User {
        name: row.try_get("name")?,
        role: Role::parse(&row.try_get::<String, _>("role")?).unwrap_or(Role::Viewer),
        created_at: row.try_get("created_at")?,
    })
}

fn token_from_row(row: &sqlx::any::AnyRow) -> Result<Token, StoreError> {
    Ok(Token {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        user: row.try_get("user_name")?,
        scopes: parse_scopes(&row.try_get::<String, _>("scopes")?),
        agent: row.try_get("agent_id")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        last_used_at: row.try_get("last_used_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

fn scopes_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn parse_scopes(text: &str) -> Vec<Scope> {
    text.split_whitespace().filter_map(Scope::parse).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn base64url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
