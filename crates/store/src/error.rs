//! What the store reports: each variant says what is wrong and with what, so the API can
//! turn it into the right status (404, 409, 422, 503) and an operator can act on it.

/// A store operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached or opened.
    #[error("cannot open the store at {location}: {source}")]
    Open {
        /// The database, as given (a PostgreSQL URL without its password).
        location: String,
        /// Why.
        #[source]
        source: sqlx::Error,
    },
    /// The database was migrated by a newer Toolhost.
    #[error(
        "the store at {location} was written by a newer Toolhost (its migration {version} is \
         unknown to this one): run that version or a newer one, or use another database"
    )]
    TooNew {
        /// The database.
        location: String,
        /// The first migration this binary does not know.
        version: i64,
    },
    /// Migrating the database failed (it is left as it was before the failed migration).
    #[error("migrating the store at {location}: {source}")]
    Migrate {
        /// The database.
        location: String,
        /// Why.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// No such object (or not one the caller may see).
    #[error("{kind} `{id}` does not exist")]
    NotFound {
        /// What kind of object (`agent`, `token`, …).
        kind: &'static str,
        /// Its id.
        id: String,
    },
    /// An object with that id exists already.
    #[error("{kind} `{id}` already exists")]
    Exists {
        /// What kind of object.
        kind: &'static str,
        /// Its id.
        id: String,
    },
    /// The object changed since the version the caller read.
    #[error(
        "{kind} `{id}` is at version {found}, not {expected}: someone changed it since it \
         was read; read it again and reapply the change"
    )]
    Conflict {
        /// What kind of object.
        kind: &'static str,
        /// Its id.
        id: String,
        /// The version the caller sent.
        expected: i64,
        /// The version stored.
        found: i64,
    },
    /// A value the store refuses.
    #[error("{field}: {problem}")]
    Invalid {
        /// The field, as the API names it (`grants[2].tool_set`).
        field: String,
        /// What is wrong.
        problem: String,
    },
    /// A secret could not be sealed or opened (a wrong or missing key).
    #[error("secrets: {0}")]
    Secret(String),
    /// A stored value this binary cannot read (altered by hand, say).
    #[error("unreadable stored data: {0}")]
    Corrupt(String),
    /// The database failed while serving.
    #[error("the store failed: {0}")]
    Database(#[from] sqlx::Error),
}

impl StoreError {
    pub(crate) fn invalid(field: impl Into<String>, problem: impl Into<String>) -> StoreError {
        StoreError::Invalid {
            field: field.into(),
            problem: problem.into(),
        }
    }

    pub(crate) fn not_found(kind: &'static str, id: &str) -> StoreError {
        StoreError::NotFound {
            kind,
            id: id.to_string(),
        }
    }
}
