use std::path::PathBuf;

/// Errors that stop the catalog from being built at all. Problems inside a tool folder
/// are diagnostics, never errors: one broken tool must not hide the others.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Nothing names a root: no flag, no environment variable, no data directory.
    #[error("no tool roots: pass --tools-dir DIR, set PI_TOOLS_DIRS, or pass --data DATA_PATH")]
    NoRoots,
    /// A root named explicitly does not exist.
    #[error("tool root {0} does not exist")]
    MissingRoot(PathBuf),
    /// A root named explicitly is a file, not a folder.
    #[error("tool root {0} is not a directory")]
    NotADirectory(PathBuf),
    /// The data directory does not exist.
    #[error("data directory {0} does not exist")]
    MissingData(PathBuf),
    /// A user was named without a data directory to find their home in.
    #[error("--user needs --data: user tools live in DATA_PATH/EMAIL/tools")]
    UserWithoutData,
    /// A user name that cannot be a folder name.
    #[error(
        "invalid user {0:?}: a user name is a folder name, so it must not be empty, start \
         with `.` or hold `/`, `\\` or control characters; use the user's email address"
    )]
    InvalidUser(String),
    /// A user name that would collide with a folder of the data directory that is not a home.
    #[error(
        "user name {user:?} is reserved: DATA_PATH/{reserved} is not a home (it holds tools or \
         homes), in any case or with trailing dots; use the user's email address"
    )]
    ReservedUser {
        /// The name as given.
        user: String,
        /// The folder it would collide with.
        reserved: &'static str,
    },
    /// The file-system watcher could not be started or could not watch a root.
    #[error("cannot watch {path}: {source}")]
    Watch {
        /// What was to be watched (empty when the watcher itself failed to start).
        path: PathBuf,
        /// Why watching failed.
        source: notify::Error,
    },
}
