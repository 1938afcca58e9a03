//! Whose home a call runs in, and where homes live.

use std::path::{Component, Path, PathBuf};

use toolhost_catalog::CatalogError;
use toolhost_runtime::UserSpace;

/// With a data directory, `DATA_PATH/USER` (the seed's layout); otherwise a per-user folder
/// under Toolhost's own data directory. No user is the user `default`. A name that breaks
/// the user-name rule (`..`, `a/../b`, `tools`…) is refused: it would name another folder.
pub fn user_space(data: Option<&Path>, user: Option<&str>) -> Result<UserSpace, CatalogError> {
    let user = user.unwrap_or("default");
    UserSpace::in_homes(&homes_dir(data), user)
}

/// The directory holding every user's home (absolute: sandboxes mount homes, and tools
/// run elsewhere than the current directory).
pub fn homes_dir(data: Option<&Path>) -> PathBuf {
    let dir = match data {
        Some(data) => data.to_path_buf(),
        None => data_home().join("users"),
    };
    absolute_path(&dir)
}

/// Toolhost's own data folder: `$XDG_DATA_HOME/toolhost`, else
/// `~/.local/share/toolhost`.
pub fn data_home() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("toolhost");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(h) => PathBuf::from(h).join(".local/share/toolhost"),
        None => std::env::temp_dir().join("toolhost-data"),
    }
}

/// `p` from the current directory, without `.` or `..` (a home must not hold them):
/// resolved on disk when `p` exists, by name otherwise.
pub fn absolute_path(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if !abs.components().any(|c| c == Component::ParentDir) {
        return abs;
    }
    if let Ok(real) = std::fs::canonicalize(&abs) {
        return real;
    }
    let mut plain = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                plain.pop();
            }
            Component::CurDir => {}
            c => plain.push(c),
        }
    }
    plain
}
