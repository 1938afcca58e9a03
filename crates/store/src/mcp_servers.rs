//! MCP servers managed through the API: their settings as JSON, and their secrets (the
//! bearer token, every header value and every `env` value) sealed in `secrets` under the
//! owner `mcp_server:NAME`, never in the settings row nor in the audit log.

use std::collections::BTreeMap;

use serde::Serialize;
use sqlx::{Any, Row, Transaction};
use toolhost_mcp_client::McpServerConfig;

use crate::audit::{AuditEvent, record_in};
use crate::{Store, StoreError, now_ms};

/// A stored MCP server, its secrets opened.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMcpServer {
    /// Its name: the tool set its tools are claimed under, and their prefix.
    pub name: String,
    /// How to reach it, secrets included.
    pub config: McpServerConfig,
    /// Bumped by every change (optimistic concurrency).
    pub version: i64,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Milliseconds since the Unix epoch.
    pub updated_at: i64,
}

/// A server as the audit log keeps it: no secret values.
#[derive(Serialize)]
struct Audited<'a> {
    name: &'a str,
    config: &'a McpServerConfig,
    version: i64,
}

fn owner(name: &str) -> String {
    format!("mcp_server:{name}")
}

/// `config` without its secrets (each value replaced by `""`), and the secrets by name.
fn split(config: &McpServerConfig) -> (McpServerConfig, Vec<(String, String)>) {
    let mut public = config.clone();
    let mut secrets = Vec::new();
    if let Some(token) = public.bearer_token.take() {
        secrets.push(("bearer_token".to_string(), token));
    }
    for (key, value) in &mut public.headers {
        secrets.push((format!("header:{key}"), std::mem::take(value)));
    }
    for (key, value) in &mut public.env {
        secrets.push((format!("env:{key}"), std::mem::take(value)));
    }
    (public, secrets)
}

/// `public` with its secrets put back.
fn join(mut public: McpServerConfig, secrets: BTreeMap<String, String>) -> McpServerConfig {
    public.bearer_token = secrets.get("bearer_token").cloned();
    for (key, value) in &mut public.headers {
        if let Some(v) = secrets.get(&format!("header:{key}")) {
            v.clone_into(value);
        }
    }
    for (key, value) in &mut public.env {
        if let Some(v) = secrets.get(&format!("env:{key}")) {
            v.clone_into(value);
        }
    }
    public
}

impl Store {
    /// Every stored MCP server, by name, secrets opened (for the host).
    pub async fn mcp_servers(&self) -> Result<Vec<StoredMcpServer>, StoreError> {
        let rows = sqlx::query("SELECT name FROM mcp_servers ORDER BY name")
            .fetch_all(&self.pool)
            .await?;
        let mut servers = Vec::with_capacity(rows.len());
        for row in &rows {
            let name: String = row.try_get("name")?;
            if let Some(server) = self.mcp_server(&name).await? {
                servers.push(server);
            }
        }
        Ok(servers)
    }

    /// MCP server `name`, secrets opened.
    pub async fn mcp_server(&self, name: &str) -> Result<Option<StoredMcpServer>, StoreError> {
        let row = sqlx::query(
            "SELECT name, config, version, created_at, updated_at FROM mcp_servers WHERE name = $1",
        )
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let text: String = row.try_get("config")?;
        let public: McpServerConfig = serde_json::from_str(&text).map_err(|e| {
            StoreError::Corrupt(format!("MCP server `{name}`'s stored settings: {e}"))
        })?;
        let mut secrets = BTreeMap::new();
        for secret in self.secret_names(&owner(name)).await? {
            if let Some(value) = self.secret(&owner(name), &secret).await? {
                secrets.insert(secret, value);
            }
        }
        Ok(Some(StoredMcpServer {
            name: row.try_get("name")?,
            config: join(public, secrets),
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        }))
    }

    /// Stores MCP server `name`; `actor` is who, for the audit log. The settings must
    /// have been checked (the host checks them as it checks `[mcp_servers]`).
    pub async fn create_mcp_server(
        &self,
        actor: &str,
        name: &str,
        config: McpServerConfig,
    ) -> Result<StoredMcpServer, StoreError> {
        let (public, secrets) = split(&config);
        let text = serde_json::to_string(&public)
            .map_err(|e| StoreError::invalid("config", e.to_string()))?;
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO mcp_servers (name, config, version, created_at, updated_at) \
             VALUES ($1, $2, 1, $3, $3) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(&text)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::Exists {
                kind: "MCP server",
                id: name.to_string(),
            });
        }
        self.write_secrets(&mut tx, name, &secrets).await?;
        let audited = Audited {
            name,
            config: &public,
            version: 1,
        };
        record_in(
            &mut tx,
            AuditEvent::change(
                actor,
                "mcp_server.create",
                "mcp_server",
                name,
                None,
                Some(&audited),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(StoredMcpServer {
            name: name.to_string(),
            config,
            version: 1,
            created_at: now,
            updated_at: now,
        })
    }

    /// Replaces MCP server `name` with `config` if it is still at `version`.
    pub async fn update_mcp_server(
        &self,
        actor: &str,
        name: &str,
        config: McpServerConfig,
        version: i64,
    ) -> Result<StoredMcpServer, StoreError> {
        let before = self
            .mcp_server(name)
            .await?
            .ok_or_else(|| StoreError::not_found("MCP server", name))?;
        let (public, secrets) = split(&config);
        let text = serde_json::to_string(&public)
            .map_err(|e| StoreError::invalid("config", e.to_string()))?;
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let updated = sqlx::query(
            "UPDATE mcp_servers SET config = $1, version = version + 1, updated_at = $2 \
             WHERE name = $3 AND version = $4",
        )
        .bind(&text)
        .bind(now)
        .bind(name)
        .bind(version)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(self
                .conflict_or_gone(&mut tx, "MCP server", name, version)
                .await);
        }
        self.write_secrets(&mut tx, name, &secrets).await?;
        let (before_public, _) = split(&before.config);
        record_in(
            &mut tx,
            AuditEvent::change(
                actor,
                "mcp_server.update",
                "mcp_server",
                name,
                Some(&Audited {
                    name,
                    config: &before_public,
                    version: before.version,
                }),
                Some(&Audited {
                    name,
                    config: &public,
                    version: version + 1,
                }),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(StoredMcpServer {
            name: name.to_string(),
            config,
            version: version + 1,
            created_at: before.created_at,
            updated_at: now,
        })
    }

    /// Deletes MCP server `name` and its secrets (if still at `version`, when given).
    pub async fn delete_mcp_server(
        &self,
        actor: &str,
        name: &str,
        version: Option<i64>,
    ) -> Result<(), StoreError> {
        let before = self
            .mcp_server(name)
            .await?
            .ok_or_else(|| StoreError::not_found("MCP server", name))?;
        let expected = version.unwrap_or(before.version);
        let mut tx = self.pool.begin().await?;
        let deleted = sqlx::query("DELETE FROM mcp_servers WHERE name = $1 AND version = $2")
            .bind(name)
            .bind(expected)
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(self
                .conflict_or_gone(&mut tx, "MCP server", name, expected)
                .await);
        }
        sqlx::query("DELETE FROM secrets WHERE owner = $1")
            .bind(owner(name))
            .execute(&mut *tx)
            .await?;
        let (before_public, _) = split(&before.config);
        record_in(
            &mut tx,
            AuditEvent::change(
                actor,
                "mcp_server.delete",
                "mcp_server",
                name,
                Some(&Audited {
                    name,
                    config: &before_public,
                    version: before.version,
                }),
                None,
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Replaces server `name`'s secrets with `secrets`, sealed.
    async fn write_secrets(
        &self,
        tx: &mut Transaction<'_, Any>,
        name: &str,
        secrets: &[(String, String)],
    ) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM secrets WHERE owner = $1")
            .bind(owner(name))
            .execute(&mut **tx)
            .await?;
        for (secret, value) in secrets {
            self.put_secret_on(tx, &owner(name), secret, value).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_leave_the_settings_and_come_back() {
        let mut config = McpServerConfig {
            url: Some("https://example.com/mcp".into()),
            bearer_token: Some("tok".into()),
            ..McpServerConfig::default()
        };
        config.headers.insert("X-Api-Key".into(), "k".into());
        config.env.insert("A".into(), "1".into());
        let (public, secrets) = split(&config);
        assert_eq!(public.bearer_token, None);
        assert_eq!(public.headers["X-Api-Key"], "");
        assert_eq!(public.env["A"], "");
        assert_eq!(secrets.len(), 3);
        assert_eq!(join(public, secrets.into_iter().collect()), config);
    }
}
