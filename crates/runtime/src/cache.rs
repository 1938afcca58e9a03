//! Toolhost's cache directory, and who may see what of it.
//!
//! ```text
//! <cache>/harness-<digest>/   the Node.js harness: Toolhost's own code, every sandbox sees it
//! <cache>/ts/                 transpiled code, root-owned 0700 on a root host
//! <cache>/ts/<key>/           one user's transpiled code (key: a hash of the user name),
//!                             readable by that user's sandbox uid only
//! ```
//!
//! A user's sandboxes mount the harness and that user's own directory, nothing else: a
//! tool's transpiled source (and whatever it hard-codes) never reaches another user.

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Where a runtime keeps the harness and each user's transpiled code.
#[derive(Debug, Clone)]
pub(crate) struct Caches {
    /// The whole cache directory (no home may overlap it).
    pub root: PathBuf,
    /// The harness's directory (`harness.mjs` and `hooks.mjs`).
    pub harness: PathBuf,
    transpiled: PathBuf,
}

impl Caches {
    /// Takes `<cache>/ts` over: only its owner may enter it. Entries of the old shared
    /// layout (`<cache>/ts/<sha256>.js`, readable by every user's sandbox) are removed.
    pub(crate) fn new(cache: &Path, harness: PathBuf) -> io::Result<Caches> {
        let transpiled = cache.join("ts");
        std::fs::create_dir_all(&transpiled)?;
        std::fs::set_permissions(&transpiled, std::fs::Permissions::from_mode(0o700))?;
        for entry in std::fs::read_dir(&transpiled)? {
            let entry = entry?;
            if entry.file_type()?.is_file() && entry.file_name().to_string_lossy().ends_with(".js")
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(Caches {
            root: cache.to_path_buf(),
            harness,
            transpiled,
        })
    }

    /// `user`'s directory of transpiled code (it may not exist yet).
    pub(crate) fn transpiled(&self, user: &str) -> PathBuf {
        self.transpiled.join(user_key(user))
    }

    /// `user`'s directory, created if missing, readable by `group` (the gid of the user's
    /// sandboxes on a root host) and nobody else but its owner. Costs one `stat` when it is
    /// already so.
    pub(crate) fn ensure_transpiled(&self, user: &str, group: Option<u32>) -> io::Result<PathBuf> {
        let dir = self.transpiled(user);
        let mode = if group.is_some() { 0o750 } else { 0o700 };
        let meta = match std::fs::symlink_metadata(&dir) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match std::fs::create_dir(&dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    // `ts` itself went away (a temp cleaner): make it again, as `new` did.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        std::fs::create_dir_all(&self.transpiled)?;
                        std::fs::set_permissions(
                            &self.transpiled,
                            std::fs::Permissions::from_mode(0o700),
                        )?;
                        std::fs::create_dir_all(&dir)?;
                    }
                    Err(e) => return Err(e),
                }
                std::fs::symlink_metadata(&dir)?
            }
            Err(e) => return Err(e),
        };
        if !meta.is_dir() {
            return Err(io::Error::other("not a directory"));
        }
        if let Some(gid) = group
            && meta.gid() != gid
        {
            std::os::unix::fs::lchown(&dir, None, Some(gid))?;
        }
        if meta.mode() & 0o7777 != mode {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode))?;
        }
        Ok(dir)
    }
}

/// The name of a user's directory: user names may hold `@`, dots and anything else a
/// token's user was given, so the name is a hash of it.
fn user_key(user: &str) -> String {
    // Hashed twice, as the name has always been made: the directories keep their names.
    let digest = Sha256::digest(Sha256::digest(format!("toolhost user\0{user}").as_bytes()));
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_user_has_a_private_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let old = tmp.path().join("ts/0123.js");
        std::fs::create_dir_all(old.parent().unwrap()).unwrap();
        std::fs::write(&old, "shared by everyone").unwrap();
        let caches = Caches::new(tmp.path(), tmp.path().join("harness-x")).unwrap();
        assert!(!old.exists(), "the old shared layout is cleared");
        let ts = std::fs::metadata(tmp.path().join("ts")).unwrap();
        assert_eq!(ts.mode() & 0o777, 0o700);

        let a = caches.ensure_transpiled("a@x.org", None).unwrap();
        let b = caches.ensure_transpiled("../b", None).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent(), b.parent(), "a name cannot leave the cache");
        assert_eq!(caches.transpiled("a@x.org"), a);
        assert_eq!(std::fs::metadata(&a).unwrap().mode() & 0o777, 0o700);
        if rustix::process::getuid().is_root() {
            let shared = caches.ensure_transpiled("a@x.org", Some(4242)).unwrap();
            let meta = std::fs::metadata(&shared).unwrap();
            assert_eq!(
                (meta.uid(), meta.gid(), meta.mode() & 0o777),
                (0, 4242, 0o750)
            );
        }
    }
}
