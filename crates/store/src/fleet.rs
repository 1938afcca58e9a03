//! A fleet's shared catalog: bundles by content hash and the published epochs that list
//! them (see `migrations/0005_fleet.sql`). Gateways read it; `toolhost catalog publish`
//! writes it; runners never touch the store (a gateway hands them bundles over NATS).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use sqlx::Row;

use crate::{Store, StoreError, now_ms};

/// One root of a published epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedRoot {
    /// Its folder's name on the gateways.
    pub name: String,
    /// Its `toolset.toml`, when it has one.
    pub toolset: Option<String>,
    /// Its tool folders: the folder's name and its bundle's.
    pub folders: Vec<(String, String)>,
}

/// A published catalog: its epoch and roots, lowest precedence first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// Grows by one with each publish.
    pub epoch: i64,
    /// The roots, in the catalog's order (later wins).
    pub roots: Vec<PublishedRoot>,
}

impl Store {
    /// Keeps `packed` (a gzipped bundle) under `hash`, unless it is already kept.
    pub async fn put_bundle(&self, hash: &str, packed: &[u8]) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO bundles (hash, size, packed, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (hash) DO NOTHING",
        )
        .bind(hash)
        .bind(i64::try_from(packed.len()).unwrap_or(i64::MAX))
        .bind(B64.encode(packed))
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The gzipped bundle named `hash`, if kept.
    pub async fn bundle(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = sqlx::query("SELECT packed FROM bundles WHERE hash = $1")
            .bind(hash)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let text: String = row.try_get("packed")?;
        B64.decode(text.as_bytes())
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("bundle {hash}: {e}")))
    }

    /// Publishes `roots` (their bundles already kept) as the next epoch; returns it.
    pub async fn publish_catalog(
        &self,
        publisher: &str,
        roots: &[PublishedRoot],
    ) -> Result<i64, StoreError> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query("SELECT COALESCE(MAX(epoch), 0) AS epoch FROM catalog_epochs")
            .fetch_one(&mut *tx)
            .await?;
        let epoch: i64 = row.try_get::<i64, _>("epoch")? + 1;
        sqlx::query(
            "INSERT INTO catalog_epochs (epoch, published_at, publisher) VALUES ($1, $2, $3)",
        )
        .bind(epoch)
        .bind(now_ms())
        .bind(publisher)
        .execute(&mut *tx)
        .await?;
        for (position, root) in roots.iter().enumerate() {
            let position = position as i64;
            sqlx::query(
                "INSERT INTO catalog_roots (epoch, position, name, toolset) VALUES ($1, $2, $3, $4)",
            )
            .bind(epoch)
            .bind(position)
            .bind(&root.name)
            .bind(root.toolset.as_deref())
            .execute(&mut *tx)
            .await?;
            for (folder, bundle) in &root.folders {
                sqlx::query(
                    "INSERT INTO catalog_folders (epoch, position, folder, bundle) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(epoch)
                .bind(position)
                .bind(folder)
                .bind(bundle)
                .execute(&mut *tx)
                .await?;
            }
        }
        // Only the last few epochs stay: a gateway catching up reads the newest.
        sqlx::query("DELETE FROM catalog_epochs WHERE epoch <= $1")
            .bind(epoch - 10)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(epoch)
    }

    /// The newest published epoch's number, or 0 before the first publish.
    pub async fn catalog_epoch(&self) -> Result<i64, StoreError> {
        let row = sqlx::query("SELECT COALESCE(MAX(epoch), 0) AS epoch FROM catalog_epochs")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("epoch")?)
    }

    /// The newest published catalog, if any was published.
    pub async fn published_catalog(&self) -> Result<Option<Published>, StoreError> {
        let epoch = self.catalog_epoch().await?;
        if epoch == 0 {
            return Ok(None);
        }
        let rows = sqlx::query(
            "SELECT position, name, toolset FROM catalog_roots WHERE epoch = $1 ORDER BY position",
        )
        .bind(epoch)
        .fetch_all(&self.pool)
        .await?;
        let mut roots = Vec::with_capacity(rows.len());
        for row in rows {
            roots.push(PublishedRoot {
                name: row.try_get("name")?,
                toolset: row.try_get("toolset")?,
                folders: Vec::new(),
            });
        }
        let rows = sqlx::query(
            "SELECT position, folder, bundle FROM catalog_folders WHERE epoch = $1 \
             ORDER BY position, folder",
        )
        .bind(epoch)
        .fetch_all(&self.pool)
        .await?;
        for row in rows {
            let position: i64 = row.try_get("position")?;
            let root = usize::try_from(position)
                .ok()
                .and_then(|p| roots.get_mut(p))
                .ok_or_else(|| {
                    StoreError::Corrupt(format!("epoch {epoch}: a folder of no root {position}"))
                })?;
            root.folders
                .push((row.try_get("folder")?, row.try_get("bundle")?));
        }
        Ok(Some(Published { epoch, roots }))
    }
}

impl Store {
    /// The user and `initialize` parameters of the MCP session kept under `key`.
    pub async fn mcp_session(&self, key: &str) -> Result<Option<(String, String)>, StoreError> {
        let row = sqlx::query("SELECT user_name, initialize FROM mcp_sessions WHERE id_hash = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some((
            row.try_get("user_name")?,
            row.try_get("initialize")?,
        )))
    }

    /// Keeps an MCP session of `user` under `key`; sessions older than a day go.
    pub async fn save_mcp_session(
        &self,
        key: &str,
        user: &str,
        initialize: &str,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        sqlx::query("DELETE FROM mcp_sessions WHERE last_seen < $1")
            .bind(now - 24 * 3600 * 1000)
            .execute(&self.pool)
            .await?;
        sqlx::query(
            "INSERT INTO mcp_sessions (id_hash, user_name, initialize, created_at, last_seen) \
             VALUES ($1, $2, $3, $4, $4) \
             ON CONFLICT (id_hash) DO UPDATE SET last_seen = $4",
        )
        .bind(key)
        .bind(user)
        .bind(initialize)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Forgets the MCP session kept under `key`.
    pub async fn delete_mcp_session(&self, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM mcp_sessions WHERE id_hash = $1")
            .bind(key)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
