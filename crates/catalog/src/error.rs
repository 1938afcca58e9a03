use std::path::PathBuf;

/// Errors that stop the catalog from being built at all. Problems inside a tool folder
/// are diagnostics, never errors: one broken tool must not hide the others.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("no tool roots: pass --tools-dir DIR, set PI_TOOLS_DIRS, or pass --data DATA_PATH")]
    NoRoots,
    #[error("tool root {0} does not exist")]
    MissingRoot(PathBuf),
    #[error("tool root {0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("data directory {0} does not exist")]
    MissingData(PathBuf),
    #[error("--user needs --data: user tools live in DATA_PATH/EMAIL/tools")]
    UserWithoutData,
    #[error(
        "invalid user {0:?}: a user name is a folder name, so it must not be empty, start \
         with `.` or hold `/`, `\\` or control characters; use the user's email address"
    )]
    InvalidUser(String),
    #[error(
        "user name {user:?} is reserved: DATA_PATH/{reserved} is not a home (it holds tools or \
         homes), in any case or with trailing dots; use the user's email address"
    )]
    ReservedUser {
        user: String,
        reserved: &'static str,
    },
    #[error("cannot read tool root {path}: {source}")]
    ReadRoot {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot watch {path}: {source}")]
    Watch {
        path: PathBuf,
        source: notify::Error,
    },
}
