//! A tool folder as one immutable value: a bundle, named by the BLAKE3 digest of its
//! bytes, so a runner runs exactly the version of a tool its gateway resolved.
//!
//! A bundle is a tar of the folder's regular files and directories, sorted by path, with
//! every timestamp, owner and mode normalised (0644, or 0755 for a file its owner may
//! execute): the same folder always makes the same bytes, hence the same name. It travels
//! gzipped; the name is of the tar itself, so a runner checks what it unpacked.
//! Links are never followed nor kept: a tool folder is read as the catalog reads it.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

/// Most entries (files and folders) a bundle holds.
pub const MAX_ENTRIES: usize = 50_000;
/// Most bytes of files a bundle holds, unpacked.
pub const MAX_BYTES: u64 = 64 << 20;
/// Deepest nesting of folders a bundle holds.
const MAX_DEPTH: usize = 32;

/// Why a folder could not be bundled, or a bundle unpacked.
#[derive(Debug, Error)]
pub enum BundleError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The folder or bundle is beyond a bound.
    #[error("{0}")]
    TooBig(String),
    /// The bundle's bytes are not what its name says.
    #[error("the bundle is not {expected} (its content digests to {actual})")]
    Mismatch {
        /// The name asked for.
        expected: String,
        /// What the bytes digest to.
        actual: String,
    },
    /// The bundle holds something a bundle never holds (a link, a path out of it).
    #[error("the bundle is malformed: {0}")]
    Malformed(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A bundle made from a folder.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// Its name: the BLAKE3 digest of the tar, in hex.
    pub hash: String,
    /// The gzipped tar.
    pub packed: Vec<u8>,
}

/// The files and folders of `dir`, relative, sorted, with whether each file is executable.
fn walk(dir: &Path) -> Result<Vec<(PathBuf, Option<bool>)>, BundleError> {
    let mut found = Vec::new();
    let mut pending = vec![(PathBuf::new(), 0usize)];
    let mut bytes = 0u64;
    while let Some((rel, depth)) = pending.pop() {
        let here = dir.join(&rel);
        for entry in std::fs::read_dir(&here).map_err(io(&here))? {
            let entry = entry.map_err(io(&here))?;
            let path = rel.join(entry.file_name());
            let meta = entry.metadata().map_err(io(&here))?;
            if found.len() >= MAX_ENTRIES {
                return Err(BundleError::TooBig(format!(
                    "{} holds more than {MAX_ENTRIES} files and folders",
                    dir.display()
                )));
            }
            if meta.is_dir() {
                if depth + 1 > MAX_DEPTH {
                    return Err(BundleError::TooBig(format!(
                        "{} nests folders more than {MAX_DEPTH} deep",
                        dir.display()
                    )));
                }
                found.push((path.clone(), None));
                pending.push((path, depth + 1));
            } else if meta.is_file() {
                bytes += meta.len();
                if bytes > MAX_BYTES {
                    return Err(BundleError::TooBig(format!(
                        "{} holds more than {} MiB of files",
                        dir.display(),
                        MAX_BYTES >> 20
                    )));
                }
                found.push((path, Some(meta.permissions().mode() & 0o100 != 0)));
            }
            // Links (and sockets, fifos) are left out: a bundle is plain files.
        }
    }
    found.sort();
    Ok(found)
}

/// Bundles the tool folder `dir`.
pub fn make(dir: &Path) -> Result<Bundle, BundleError> {
    let entries = walk(dir)?;
    let mut builder = tar::Builder::new(Vec::new());
    builder.mode(tar::HeaderMode::Deterministic);
    for (rel, file) in &entries {
        let mut header = tar::Header::new_gnu();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        let path = dir.join(rel);
        match file {
            None => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                builder
                    .append_data(&mut header, rel, std::io::empty())
                    .map_err(io(&path))?;
            }
            Some(executable) => {
                let data = std::fs::read(&path).map_err(io(&path))?;
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(if *executable { 0o755 } else { 0o644 });
                header.set_size(data.len() as u64);
                builder
                    .append_data(&mut header, rel, data.as_slice())
                    .map_err(io(&path))?;
            }
        }
    }
    let tar = builder.into_inner().map_err(io(dir))?;
    let hash = blake3::hash(&tar).to_hex().to_string();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).map_err(io(dir))?;
    let packed = gz.finish().map_err(io(dir))?;
    Ok(Bundle { hash, packed })
}

/// Whether `name` is a bundle's name (64 lower-case hex digits).
pub fn is_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Unpacks the gzipped bundle `packed`, which must be `hash`, into `dest/hash` (made
/// whole or not at all: it is unpacked beside and renamed into place). Returns the folder.
pub fn unpack(packed: &[u8], hash: &str, dest: &Path) -> Result<PathBuf, BundleError> {
    if !is_name(hash) {
        return Err(BundleError::Malformed(format!(
            "{hash:?} is not a bundle name"
        )));
    }
    let target = dest.join(hash);
    if target.is_dir() {
        return Ok(target);
    }
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(packed)
        .take(MAX_BYTES + (MAX_ENTRIES as u64) * 1024 + 1)
        .read_to_end(&mut tar)
        .map_err(|e| BundleError::Malformed(format!("not gzip: {e}")))?;
    let actual = blake3::hash(&tar).to_hex().to_string();
    if actual != hash {
        return Err(BundleError::Mismatch {
            expected: hash.to_string(),
            actual,
        });
    }
    std::fs::create_dir_all(dest).map_err(io(dest))?;
    let staging = tempdir_in(dest)?;
    let result = extract(&tar, &staging);
    let result = result.and_then(|()| match std::fs::rename(&staging, &target) {
        Ok(()) => Ok(()),
        // Another call unpacked the same bundle first: same bytes, keep theirs.
        Err(_) if target.is_dir() => Ok(()),
        Err(e) => Err(io(&target)(e)),
    });
    if staging.exists() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result.map(|()| target)
}

fn tempdir_in(dest: &Path) -> Result<PathBuf, BundleError> {
    for n in 0..100u32 {
        let path = dest.join(format!(".unpack-{}-{n}", std::process::id()));
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&path)(e)),
        }
    }
    Err(BundleError::Malformed(format!(
        "no free staging folder in {}",
        dest.display()
    )))
}

fn extract(tar: &[u8], into: &Path) -> Result<(), BundleError> {
    let mut archive = tar::Archive::new(tar);
    let entries = archive
        .entries()
        .map_err(|e| BundleError::Malformed(e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| BundleError::Malformed(e.to_string()))?;
        let rel = entry
            .path()
            .map_err(|e| BundleError::Malformed(e.to_string()))?
            .into_owned();
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(BundleError::Malformed(format!(
                "the path {} leaves the bundle",
                rel.display()
            )));
        }
        let path = into.join(&rel);
        match entry.header().entry_type() {
            tar::EntryType::Directory => {
                std::fs::create_dir_all(&path).map_err(io(&path))?;
            }
            tar::EntryType::Regular => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io(parent))?;
                }
                let mode = entry.header().mode().unwrap_or(0o644) & 0o755;
                let mut data = Vec::new();
                entry.read_to_end(&mut data).map_err(io(&path))?;
                std::fs::write(&path, &data).map_err(io(&path))?;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                    .map_err(io(&path))?;
            }
            other => {
                return Err(BundleError::Malformed(format!(
                    "{} is a {other:?}, not a file or folder",
                    rel.display()
                )));
            }
        }
    }
    // Tools read their code as their own users; the bundle is for reading only.
    std::fs::set_permissions(into, std::fs::Permissions::from_mode(0o755)).map_err(io(into))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("TOOL.md"), "---\nname: x\n---\n").unwrap();
        std::fs::create_dir(dir.path().join("lib")).unwrap();
        std::fs::write(dir.path().join("lib/a.ts"), "export const a = 1;\n").unwrap();
        std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            dir.path().join("run.sh"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        dir
    }

    #[test]
    fn the_same_folder_makes_the_same_bundle_and_an_edit_another() {
        let dir = folder();
        let a = make(dir.path()).unwrap();
        // New timestamps and a new mode bit that is not the owner's execute bit.
        std::fs::write(dir.path().join("lib/a.ts"), "export const a = 1;\n").unwrap();
        std::fs::set_permissions(
            dir.path().join("lib/a.ts"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        assert_eq!(make(dir.path()).unwrap().hash, a.hash);
        std::fs::write(dir.path().join("lib/a.ts"), "export const a = 2;\n").unwrap();
        assert_ne!(make(dir.path()).unwrap().hash, a.hash);
    }

    #[test]
    fn a_bundle_unpacks_to_the_folders_files_without_its_links() {
        let dir = folder();
        let bundle = make(dir.path()).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let out = unpack(&bundle.packed, &bundle.hash, dest.path()).unwrap();
        assert_eq!(out, dest.path().join(&bundle.hash));
        assert_eq!(
            std::fs::read_to_string(out.join("lib/a.ts")).unwrap(),
            "export const a = 1;\n"
        );
        let mode = std::fs::metadata(out.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert!(out.join("link").symlink_metadata().is_err());
        // Unpacking again finds it there.
        assert_eq!(
            unpack(&bundle.packed, &bundle.hash, dest.path()).unwrap(),
            out
        );
        assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_bundle_under_another_name_is_refused() {
        let dir = folder();
        let bundle = make(dir.path()).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let other = "0".repeat(64);
        let err = unpack(&bundle.packed, &other, dest.path()).unwrap_err();
        assert!(matches!(err, BundleError::Mismatch { .. }), "{err}");
        assert!(!dest.path().join(&other).exists());
        let err = unpack(&bundle.packed, "../x", dest.path()).unwrap_err();
        assert!(err.to_string().contains("not a bundle name"), "{err}");
    }

    #[test]
    fn a_bundle_with_a_path_out_of_it_is_refused() {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(1);
        header.set_entry_type(tar::EntryType::Regular);
        // `append_data` refuses `..`; write the name into the header by hand.
        let name = b"../escape";
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_cksum();
        builder.append(&header, &b"x"[..]).unwrap();
        let tar = builder.into_inner().unwrap();
        let hash = blake3::hash(&tar).to_hex().to_string();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        let packed = gz.finish().unwrap();
        let dest = tempfile::tempdir().unwrap();
        let err = unpack(&packed, &hash, dest.path()).unwrap_err();
        assert!(err.to_string().contains("leaves the bundle"), "{err}");
        assert!(!dest.path().join("../escape").exists());
        assert!(!dest.path().join(&hash).exists());
    }
}
