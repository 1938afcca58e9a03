//! `--database`: which store a command uses, and opening it.

use std::path::PathBuf;

use anyhow::{Context, Result};
use std::time::Duration;
use toolhost_host::{ConfigFile, data_home};

use toolhost_host::Host;
use toolhost_store::{
    Cipher, KEY_VARIABLE, Location, NewToken, Persisted, QueueOptions, Role, Scope, Store,
};

/// The environment variable naming the store.
pub const DATABASE_VARIABLE: &str = "TOOLHOST_DATABASE_URL";

#[derive(clap::Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// The store: a postgres:// URL or an SQLite file, created on first use (default:
    /// $TOOLHOST_DATABASE_URL, else [store] url, else the embedded SQLite file
    /// toolhost.db in Toolhost's data folder).
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
    /// No store: toolhost.toml alone, nothing kept across restarts (and `serve` without
    /// [[serve.tokens]] is open to anyone on loopback).
    #[arg(long, conflicts_with = "database")]
    pub no_store: bool,
}

/// The embedded store's file: `toolhost.db` in Toolhost's data folder.
pub fn embedded() -> PathBuf {
    data_home().join("toolhost.db")
}

impl StoreArgs {
    /// Where the store is: the one named, else the embedded SQLite file; `None` with
    /// `--no-store`.
    pub fn location(&self, config: &ConfigFile) -> Result<Option<Location>> {
        if self.no_store {
            return Ok(None);
        }
        Ok(Some(
            self.named(config)?
                .unwrap_or_else(|| Location::Sqlite(embedded())),
        ))
    }

    /// The store named by `--database`, `$TOOLHOST_DATABASE_URL` or `[store] url`, if any
    /// (and not `--no-store`).
    pub fn named(&self, config: &ConfigFile) -> Result<Option<Location>> {
        if self.no_store {
            return Ok(None);
        }
        let named = self
            .database
            .clone()
            .or_else(|| {
                std::env::var(DATABASE_VARIABLE)
                    .ok()
                    .filter(|v| !v.trim().is_empty())
            })
            .or_else(|| config.store.url.clone());
        named
            .map(|text| Location::parse(&text).map_err(anyhow::Error::from))
            .transpose()
    }

    /// `self` without the embedded default: only a store that is named.
    pub fn named_only(&self, config: &ConfigFile) -> Result<StoreArgs> {
        let named = self.named(config)?;
        Ok(StoreArgs {
            database: named
                .as_ref()
                .map(|_| self.database.clone())
                .unwrap_or(None),
            no_store: named.is_none(),
        })
    }

    /// Opens the store (creating an SQLite file and its folder), with its key; `None` with
    /// `--no-store`.
    pub async fn open(&self, config: &ConfigFile) -> Result<Option<Store>> {
        let Some(location) = self.location(config)? else {
            return Ok(None);
        };
        if let Location::Sqlite(db) = &location
            && let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let key = key_file(config, &location);
        if let Some(dir) = key.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let cipher = Cipher::from_env_or_file(&key).with_context(|| {
            format!(
                "the store's key (${KEY_VARIABLE}, or the key file {})",
                key.display()
            )
        })?;
        Ok(Some(Store::open(location, Some(cipher)).await?))
    }
}

/// `[store] key_file`; else beside an SQLite file; else in Toolhost's data folder.
fn key_file(config: &ConfigFile, location: &Location) -> PathBuf {
    if let Some(path) = &config.store.key_file {
        return path.clone();
    }
    match location {
        Location::Sqlite(db) => {
            let mut name = db.as_os_str().to_owned();
            name.push(".key");
            PathBuf::from(name)
        }
        Location::Postgres(_) => data_home().join("store.key"),
    }
}

/// On a store without users (a fresh install): the `admin` user and a token with every
/// scope, whose secret is printed once, here.
pub async fn first_start(store: &Store, url: Option<&str>, sign_in: Option<&str>) -> Result<()> {
    if !store.is_empty().await? {
        return Ok(());
    }
    store.put_user("toolhost", "admin", Role::Admin).await?;
    let (_, secret) = store
        .create_token(
            "toolhost",
            NewToken {
                name: "first admin".into(),
                user: "admin".into(),
                scopes: Scope::ALL.to_vec(),
                agent: None,
                expires_at: None,
            },
        )
        .await?;
    eprintln!("first start: the store is new; the admin's token (shown once, keep it):");
    eprintln!("  {secret}");
    if let Some(url) = url {
        eprintln!("  use it as `Authorization: Bearer …` at {url}");
    }
    if let Some(sign_in) = sign_in {
        eprintln!("  or sign in to the web console with it at {sign_in}");
    }
    Ok(())
}

/// For a command that records calls only in a store that is named (`call`, `mcp`): that
/// store, its call-log writer started; `None` when none is named.
pub async fn named_persisted(
    database: Option<String>,
    config: &ConfigFile,
) -> Result<Option<Persisted>> {
    let args = StoreArgs {
        database,
        no_store: false,
    }
    .named_only(config)?;
    Ok(args
        .open(config)
        .await?
        .map(|store| Persisted::start(store, QueueOptions::default())))
}

/// Writes what the call log still holds (waiting at most a few seconds) and closes the
/// store.
pub async fn close_persisted(persisted: Option<Persisted>) {
    let Some(persisted) = persisted else {
        return;
    };
    if !persisted.queue().flush(Duration::from_secs(5)).await {
        crate::warn("the call log could not write its last rows before exiting");
    }
    persisted.store().close().await;
}

/// The store's MCP servers, served beside toolhost.toml's. One that no longer passes the
/// checks (a newer Toolhost is stricter, say) costs only itself.
pub async fn serve_stored_servers(host: &Host, store: &Store) -> Result<()> {
    for server in store.mcp_servers().await? {
        if let Err(e) = host.put_mcp_server(&server.name, server.config).await {
            crate::warn(&format!("stored MCP server left out: {e}"));
        }
    }
    Ok(())
}
