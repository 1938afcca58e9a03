//! Opening a store: where it is, the connection pool, SQLite's settings, and migrations
//! under a lock, refusing a database written by a newer Toolhost.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::{MigrateError, Migrator};
use sqlx::{AnyConnection, AnyPool, Connection, Executor};

use crate::StoreError;

/// Every migration this binary knows, embedded.
static MIGRATIONS: Migrator = sqlx::migrate!("./migrations");

/// Where a store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file, created on first use.
    Sqlite(PathBuf),
    /// A PostgreSQL database, by its `postgres://` URL.
    Postgres(String),
}

/// Which engine a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Embedded SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Location {
    /// `postgres://…` or `postgresql://…`; `sqlite://PATH` or a plain file path.
    pub fn parse(text: &str) -> Result<Location, StoreError> {
        let text = text.trim();
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            url::Url::parse(text)
                .map_err(|e| StoreError::invalid("database URL", e.to_string()))?;
            return Ok(Location::Postgres(text.to_string()));
        }
        let path = text
            .strip_prefix("sqlite://")
            .or_else(|| text.strip_prefix("sqlite:"))
            .unwrap_or(text);
        if path.is_empty() {
            return Err(StoreError::invalid(
                "database URL",
                "empty: give a postgres:// URL or an SQLite file path",
            ));
        }
        if let Some((scheme, _)) = path.split_once("://") {
            return Err(StoreError::invalid(
                "database URL",
                format!(
                    "`{scheme}://` is not supported: give a postgres:// URL or an SQLite file path"
                ),
            ));
        }
        Ok(Location::Sqlite(PathBuf::from(path)))
    }

    /// How errors and logs name it: a PostgreSQL URL without its password.
    pub fn shown(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(url) => match url::Url::parse(url) {
                Ok(mut u) => {
                    if u.password().is_some() {
                        let _ = u.set_password(Some("***"));
                    }
                    u.to_string()
                }
                Err(_) => "a PostgreSQL database".to_string(),
            },
        }
    }

    /// Its engine.
    pub fn engine(&self) -> Engine {
        match self {
            Location::Sqlite(_) => Engine::Sqlite,
            Location::Postgres(_) => Engine::Postgres,
        }
    }
}

/// Opens the pool and brings the schema up to date.
pub(crate) async fn open(location: &Location) -> Result<AnyPool, StoreError> {
    sqlx::any::install_default_drivers();
    let shown = location.shown();
    let open_error = |source| StoreError::Open {
        location: shown.clone(),
        source,
    };
    let (url, pool) = match location {
        Location::Sqlite(path) => {
            let url = sqlite_url(path)?;
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| open_error(sqlx::Error::Io(e)))?;
            }
            // One writer at a time is SQLite's rule; readers run beside it (WAL).
            let pool = AnyPoolOptions::new()
                .max_connections(8)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; \
                             PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL;",
                        )
                        .await
                        .map(drop)
                    })
                });
            (url, pool)
        }
        Location::Postgres(url) => (url.clone(), AnyPoolOptions::new().max_connections(16)),
    };
    let options: AnyConnectOptions = url.parse().map_err(open_error)?;
    // One connection first: a server that is not there fails at once, not after the
    // pool's retries.
    AnyConnection::connect_with(&options)
        .await
        .map_err(open_error)?
        .close()
        .await
        .map_err(open_error)?;
    let pool = pool
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .map_err(open_error)?;
    migrate(&pool, location).await?;
    Ok(pool)
}

fn sqlite_url(path: &Path) -> Result<String, StoreError> {
    let text = path.to_str().ok_or_else(|| {
        StoreError::invalid("database path", format!("{} is not UTF-8", path.display()))
    })?;
    if text.contains(['?', '#', '%']) {
        return Err(StoreError::invalid(
            "database path",
            format!("{text}: `?`, `#` and `%` cannot appear in an SQLite path"),
        ));
    }
    Ok(format!("sqlite://{text}?mode=rwc"))
}

/// Runs the migrations this binary knows, under a lock (PostgreSQL's advisory lock; for
/// SQLite a lock file beside the database, since two processes may start at once), each
/// in a transaction: a kill leaves the database before or after a migration, never inside.
async fn migrate(pool: &AnyPool, location: &Location) -> Result<(), StoreError> {
    let _lock = match location {
        Location::Sqlite(path) => {
            Some(FileLock::take(path).await.map_err(|e| StoreError::Open {
                location: location.shown(),
                source: sqlx::Error::Io(e),
            })?)
        }
        Location::Postgres(_) => None,
    };
    let known = MIGRATIONS.iter().map(|m| m.version).max().unwrap_or(0);
    match MIGRATIONS.run(pool).await {
        Ok(()) => Ok(()),
        Err(MigrateError::VersionMissing(version)) if version > known => Err(StoreError::TooNew {
            location: location.shown(),
            version,
        }),
        Err(source) => Err(StoreError::Migrate {
            location: location.shown(),
            source,
        }),
    }
}

/// An exclusive `flock` on `DB.lock`, released when dropped (or when the process dies).
struct FileLock(#[allow(dead_code)] std::fs::File);

impl FileLock {
    async fn take(db: &Path) -> std::io::Result<FileLock> {
        let mut name = db.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        tokio::task::spawn_blocking(move || {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)?;
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
            Ok(FileLock(file))
        })
        .await
        .map_err(std::io::Error::other)?
    }
}
