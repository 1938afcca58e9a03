//! The one rule for user names, and how a user's own tools folder is looked at.
//!
//! A user name becomes a folder: `DATA_PATH/USER` (or `…/toolhost/users/USER`) is the
//! user's home, which their tools may write. So a name must never point anywhere else
//! (`..`, `a/../b`, empty, hidden) nor name a folder of the data directory that means
//! something else (`tools`, the global tool root), in any spelling a file system may
//! treat as the same name.

use std::path::Path;

use crate::CatalogError;

/// Folders of a data directory that are not homes: `DATA_PATH/tools` holds the global
/// tools, and `users` holds the homes when no data directory is given (a data directory
/// pointed at Toolhost's own one would otherwise make it a home).
pub(crate) const RESERVED_USERS: &[&str] = &["tools", "users"];

/// Checks `user` against the user-name rule. Every way a user enters (`--user`, tokens in
/// `toolhost.toml`, `token new`, the runtime before it builds a sandbox) applies it.
pub fn validate_user(user: &str) -> Result<(), CatalogError> {
    let ok = !user.is_empty()
        && user.len() <= 254
        && !user.starts_with('.')
        && !user.contains(['/', '\\', '\0'])
        && !user.chars().any(char::is_control);
    if !ok {
        return Err(CatalogError::InvalidUser(user.to_string()));
    }
    let folded = fold(user);
    if let Some(reserved) = RESERVED_USERS.iter().find(|r| **r == folded) {
        return Err(CatalogError::ReservedUser {
            user: user.to_string(),
            reserved,
        });
    }
    Ok(())
}

/// The name as a case-insensitive file system may see it: case folded (upper then lower
/// case also folds `ſ` to `s` and the Kelvin sign to `k`), and without the trailing dots
/// and spaces that SMB and NTFS drop.
fn fold(name: &str) -> String {
    name.trim_end_matches(['.', ' '])
        .to_uppercase()
        .to_lowercase()
}

/// Whether `path` is a directory itself, not a symbolic link to one. A user's tools
/// folder lies in a home that user's tools can write: a link there could point at another
/// user's tools, so the host never follows it.
pub fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_cannot_escape_the_data_dir() {
        // F5: these made homes outside DATA_PATH/USER.
        for bad in [
            "",
            ".",
            "..",
            "a@x/../b@x",
            ".hidden",
            "a/b",
            "a\\b",
            "a\0b",
            "x\ny",
        ] {
            assert!(
                matches!(validate_user(bad), Err(CatalogError::InvalidUser(_))),
                "{bad:?} accepted"
            );
        }
        assert!(validate_user("ada@example.com").is_ok());
        assert!(validate_user("default").is_ok());
    }

    #[test]
    fn no_user_is_a_folder_of_the_data_dir_in_any_spelling() {
        // F4: the user `tools` had the global tool root as its home.
        for bad in [
            "tools", "TOOLS", "Tools", "tools.", "tools ", "tools. .", "toolſ", "users", "USERS",
        ] {
            assert!(
                matches!(validate_user(bad), Err(CatalogError::ReservedUser { .. })),
                "{bad:?} accepted"
            );
        }
        let e = validate_user("Tools").unwrap_err().to_string();
        assert!(
            e.contains("\"Tools\"") && e.contains("DATA_PATH/tools"),
            "{e}"
        );
        for ok in ["tools@example.com", "toolsmith", "my-tools", "users@x"] {
            assert!(validate_user(ok).is_ok(), "{ok:?} refused");
        }
    }

    #[test]
    fn a_link_is_not_a_real_dir() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        assert!(is_real_dir(&real));
        assert!(!is_real_dir(&dir.path().join("link")));
        assert!(!is_real_dir(&dir.path().join("missing")));
    }
}
