//! Secrets at rest: AES-256-GCM with a fresh nonce per value, the key from the environment
//! (`TOOLHOST_SECRET_KEY`, 32 bytes in base64) or from a key file created with mode 0600
//! beside the database. The store hands secrets back only to the host, never to the API.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use crate::StoreError;

/// The environment variable that holds the key, when not in a file.
pub const KEY_VARIABLE: &str = "TOOLHOST_SECRET_KEY";

/// Seals and opens secrets with one key.
#[derive(Clone)]
pub struct Cipher(Aes256Gcm);

impl std::fmt::Debug for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cipher(..)")
    }
}

impl Cipher {
    /// The key in base64 (`TOOLHOST_SECRET_KEY`'s format).
    pub fn from_base64(key: &str) -> Result<Cipher, StoreError> {
        let bytes = B64
            .decode(key.trim())
            .map_err(|e| StoreError::Secret(format!("the key is not base64: {e}")))?;
        if bytes.len() != 32 {
            return Err(StoreError::Secret(format!(
                "the key holds {} bytes; AES-256 needs 32",
                bytes.len()
            )));
        }
        Ok(Cipher(Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&bytes))))
    }

    /// The key in `path`, created (32 random bytes, mode 0600) when missing. A key file
    /// others may read is refused: it would open every secret. The key is written whole to
    /// a temporary file and linked into place, so a process killed meanwhile leaves no key
    /// file rather than an empty one; an empty one (left by an older Toolhost) never
    /// sealed anything and is replaced.
    pub fn from_file(path: &Path) -> Result<Cipher, StoreError> {
        let io = |e: std::io::Error| StoreError::Secret(format!("{}: {e}", path.display()));
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
            std::fs::remove_file(path).map_err(io)?;
        }
        if std::fs::symlink_metadata(path).is_err() {
            let mut name = path.as_os_str().to_owned();
            name.push(format!(".{}.tmp", crate::new_id()));
            let tmp = std::path::PathBuf::from(name);
            let written = (|| {
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&tmp)?;
                let key = Aes256Gcm::generate_key(OsRng);
                file.write_all(B64.encode(key).as_bytes())?;
                file.sync_all()?;
                // Fails if another process put its key there first: then that one is used.
                match std::fs::hard_link(&tmp, path) {
                    Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
                    _ => Ok(()),
                }
            })();
            let _ = std::fs::remove_file(&tmp);
            written.map_err(io)?;
        }
        let meta = std::fs::symlink_metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(StoreError::Secret(format!(
                "{} is not a regular file",
                path.display()
            )));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(StoreError::Secret(format!(
                "{} may be read by others (mode {:o}); make it 0600",
                path.display(),
                meta.permissions().mode() & 0o777
            )));
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        Cipher::from_base64(&text)
            .map_err(|e| StoreError::Secret(format!("{}: {e}", path.display())))
    }

    /// `TOOLHOST_SECRET_KEY` when set, else the key file `path`.
    pub fn from_env_or_file(path: &Path) -> Result<Cipher, StoreError> {
        match std::env::var(KEY_VARIABLE) {
            Ok(key) if !key.trim().is_empty() => Cipher::from_base64(&key)
                .map_err(|e| StoreError::Secret(format!("${KEY_VARIABLE}: {e}"))),
            _ => Cipher::from_file(path),
        }
    }

    /// `(nonce, ciphertext)`, both base64.
    pub(crate) fn seal(&self, plain: &str) -> Result<(String, String), StoreError> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let sealed = self
            .0
            .encrypt(&nonce, plain.as_bytes())
            .map_err(|_| StoreError::Secret("sealing failed".into()))?;
        Ok((B64.encode(nonce), B64.encode(sealed)))
    }

    pub(crate) fn open(&self, nonce: &str, sealed: &str) -> Result<String, StoreError> {
        let broken = || {
            StoreError::Secret(
                "a stored secret does not open with this key: the key changed, or the row \
                 was altered"
                    .into(),
            )
        };
        let nonce = B64.decode(nonce).map_err(|_| broken())?;
        if nonce.len() != 12 {
            return Err(broken());
        }
        let sealed = B64.decode(sealed).map_err(|_| broken())?;
        let plain = self
            .0
            .decrypt(Nonce::from_slice(&nonce), sealed.as_ref())
            .map_err(|_| broken())?;
        String::from_utf8(plain).map_err(|_| broken())
    }
}

/// `n` random bytes from the operating system.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    use aes_gcm::aead::rand_core::RngCore;
    let mut bytes = [0u8; N];
    OsRng.fill_bytes(&mut bytes);
    bytes
}
