//! Whose home a call runs in.

use std::path::{Path, PathBuf};

use toolhost_runtime::UserSpace;

/// With a data directory, `DATA_PATH/USER` (the seed's layout); otherwise a per-user folder
/// under Toolhost's own data directory. No user is the user `default`.
pub fn user_space(data: Option<&Path>, user: Option<&str>) -> UserSpace {
    let user = user.unwrap_or("default").to_string();
    let home = match data {
        Some(data) => data.join(&user),
        None => data_home().join("users").join(&user),
    };
    UserSpace { user, home }
}

fn data_home() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("toolhost");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(h) => PathBuf::from(h).join(".local/share/toolhost"),
        None => std::env::temp_dir().join("toolhost-data"),
    }
}
