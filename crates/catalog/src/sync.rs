//! Version-based sync of seed tools into a target root, as the seed's `sync-tools` does,
//! but atomic: a tool folder in the target is always wholly the old or wholly the new one.
//!
//! Each copy is staged in a hidden folder beside the target, flushed to disk, and swapped
//! into place with `renameat2(RENAME_EXCHANGE)`. Where a file system cannot exchange, the
//! old folder is renamed aside first: an error before the new one is renamed in puts it
//! back, and a crash between the two renames leaves the tool absent until the next sync,
//! which puts the old folder back before anything else. Hidden folders are never tools, so
//! discovery ignores the staging area and the folder set aside.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use toolhost_spec::{Diagnostic, LoadOptions, TOOL_MD, load_folder, peek_version};

const STAGING_PREFIX: &str = ".toolhost-sync.";
const ASIDE_PREFIX: &str = ".toolhost-old.";

/// What sync did with one seed folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncAction {
    /// The seed was newer (or the target missing): the target now holds the seed's copy.
    Copied,
    /// Same version on both sides: nothing to do.
    UpToDate,
    /// The target's version is higher: its edits are kept.
    KeptNewer,
    /// The seed folder is not a valid tool: nothing was copied.
    Invalid,
    /// Copying failed (I/O error): the target was left as it was.
    Failed,
}

/// What sync did, or would do, with one seed folder.
#[derive(Debug, Clone, Serialize)]
pub struct SyncItem {
    /// The tool's name, or the folder name when the seed is invalid.
    pub name: String,
    /// The seed folder's name, which is also the target folder's.
    pub folder: String,
    /// What was done.
    pub action: SyncAction,
    /// `None` when the seed folder is not a valid tool.
    pub seed_version: Option<u64>,
    /// `None` when the target has no such folder.
    pub target_version: Option<u64>,
    /// Why the action was taken when it needs saying: invalid seeds, failures, and equal
    /// versions with different content (the author forgot to bump the version).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The seed's findings, printed for invalid seeds; not part of the JSON report.
    #[serde(skip)]
    pub diagnostics: Vec<Diagnostic>,
}

/// Called before each file is copied (with the seed's path), and on the path without
/// exchange between the two renames (with the path of the old folder set aside); returning
/// an error aborts that tool's copy. Exists so tests can inject a failure at any point.
pub type FaultHook = Arc<FaultFn>;
/// The function behind a [`FaultHook`].
pub type FaultFn = dyn Fn(&Path) -> io::Result<()> + Send + Sync;

/// How [`sync`] runs.
#[derive(Clone, Default)]
pub struct SyncOptions {
    /// Decide and report, but change nothing.
    pub dry_run: bool,
    #[doc(hidden)]
    pub fault: Option<FaultHook>,
    /// Take the path for file systems without `RENAME_EXCHANGE`, so tests reach it on any.
    #[doc(hidden)]
    pub no_exchange: bool,
}

/// Why [`sync`] could not run at all; a failure of one tool's copy is a
/// [`SyncAction::Failed`] item instead, so the other tools still sync.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The seed directory is missing or not a directory.
    #[error("seed directory {0} does not exist or is not a directory")]
    MissingSeed(PathBuf),
    /// The target directory did not exist and could not be created.
    #[error("cannot create target directory {path}: {source}")]
    CreateTarget {
        /// The target directory.
        path: PathBuf,
        /// Why creating it failed.
        source: io::Error,
    },
    /// A directory sync must list could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The directory.
        path: PathBuf,
        /// Why reading failed.
        source: io::Error,
    },
}

/// Syncs every tool folder of `seed` into `target` (created if missing).
pub fn sync(seed: &Path, target: &Path, opts: &SyncOptions) -> Result<Vec<SyncItem>, SyncError> {
    if !seed.is_dir() {
        return Err(SyncError::MissingSeed(seed.to_path_buf()));
    }
    if !opts.dry_run {
        fs::create_dir_all(target).map_err(|source| SyncError::CreateTarget {
            path: target.to_path_buf(),
            source,
        })?;
        recover(target).map_err(|source| SyncError::Read {
            path: target.to_path_buf(),
            source,
        })?;
    }
    let folders = crate::folder::list_tool_dirs(seed).map_err(|source| SyncError::Read {
        path: seed.to_path_buf(),
        source,
    })?;
    Ok(folders
        .into_iter()
        .map(|(folder, dir)| sync_one(&folder, &dir, &target.join(&folder), opts))
        .collect())
}

fn sync_one(folder: &str, seed_dir: &Path, target_dir: &Path, opts: &SyncOptions) -> SyncItem {
    let report = load_folder(seed_dir, LoadOptions::default());
    let target_exists = target_dir.is_dir();
    let target_version = target_exists.then(|| {
        fs::read(target_dir.join(TOOL_MD))
            .ok()
            .and_then(|b| peek_version(&b))
            .unwrap_or(0)
    });
    let mut item = SyncItem {
        name: folder.to_string(),
        folder: folder.to_string(),
        action: SyncAction::Invalid,
        seed_version: None,
        target_version,
        notes: Vec::new(),
        diagnostics: Vec::new(),
    };
    let Some((manifest, _)) = report.tool() else {
        item.notes
            .push("seed folder is not a valid tool; run `toolhost check` on it".into());
        item.diagnostics = report.diagnostics;
        return item;
    };
    item.name = manifest.name.clone();
    item.seed_version = Some(manifest.version);
    item.action = match target_version {
        Some(t) if manifest.version == t => SyncAction::UpToDate,
        Some(t) if manifest.version < t => SyncAction::KeptNewer,
        _ => SyncAction::Copied,
    };
    if item.action == SyncAction::UpToDate
        && folder_digest(seed_dir).ok() != folder_digest(target_dir).ok()
    {
        item.notes.push(format!(
            "content differs from the target at the same version {}: bump `version` in the seed's TOOL.md to ship the change",
            manifest.version
        ));
    }
    if item.action == SyncAction::Copied
        && !opts.dry_run
        && let Err(e) = replace_atomically(seed_dir, target_dir, opts)
    {
        item.action = SyncAction::Failed;
        item.notes
            .push(format!("copy failed, target left as it was: {e}"));
    }
    item
}

static STAGING_COUNTER: AtomicU64 = AtomicU64::new(0);

fn replace_atomically(seed_dir: &Path, target_dir: &Path, opts: &SyncOptions) -> io::Result<()> {
    let fault = opts.fault.as_deref();
    let parent = target_dir
        .parent()
        .ok_or_else(|| io::Error::other("target has no parent"))?;
    let name = file_name(target_dir)?;
    let n = STAGING_COUNTER.fetch_add(1, Ordering::Relaxed);
    let staging = parent.join(format!("{STAGING_PREFIX}{name}.{}.{n}", std::process::id()));
    let result = copy_tree(seed_dir, &staging, fault)
        .and_then(|()| swap_in(&staging, target_dir, parent, name, opts));
    // On success `staging` holds the old version (or nothing); on failure, a partial copy.
    let _ = remove_any(&staging);
    result
}

fn swap_in(
    staging: &Path,
    target: &Path,
    parent: &Path,
    name: &str,
    opts: &SyncOptions,
) -> io::Result<()> {
    if !target.exists() {
        fs::rename(staging, target)?;
        return sync_dir(parent);
    }
    let exchanged = if opts.no_exchange {
        Err(rustix::io::Errno::INVAL)
    } else {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            staging,
            rustix::fs::CWD,
            target,
            rustix::fs::RenameFlags::EXCHANGE,
        )
    };
    match exchanged {
        Ok(()) => sync_dir(parent),
        Err(e)
            if e == rustix::io::Errno::INVAL
                || e == rustix::io::Errno::NOSYS
                || e == rustix::io::Errno::OPNOTSUPP =>
        {
            // No exchange on this file system: rename aside, then into place. Between the
            // two the tool is absent: an error there puts the old folder back (the target
            // stays as it was); a crash leaves it aside, and `recover` restores it.
            let aside = parent.join(format!("{ASIDE_PREFIX}{name}"));
            remove_any(&aside)?;
            fs::rename(target, &aside)?;
            let landed = match opts.fault.as_deref() {
                Some(fault) => fault(&aside),
                None => Ok(()),
            }
            .and_then(|()| fs::rename(staging, target));
            if let Err(e) = landed {
                return match fs::rename(&aside, target) {
                    Ok(()) => Err(e),
                    Err(back) => Err(io::Error::new(
                        e.kind(),
                        format!(
                            "{e}; the old folder could not be put back ({back}): it waits in {} for the next sync",
                            aside.display()
                        ),
                    )),
                };
            }
            sync_dir(parent)?;
            remove_any(&aside)
        }
        Err(e) => Err(e.into()),
    }
}

/// Clears what an interrupted sync left in `target`: staging folders are dropped, and an
/// old folder set aside (the non-exchange path) goes back if its replacement never landed.
fn recover(target: &Path) -> io::Result<()> {
    for entry in fs::read_dir(target)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with(STAGING_PREFIX) {
            remove_any(&entry.path())?;
        } else if let Some(tool) = name.strip_prefix(ASIDE_PREFIX) {
            let home = target.join(tool);
            if home.exists() {
                remove_any(&entry.path())?;
            } else {
                fs::rename(entry.path(), home)?;
            }
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path, fault: Option<&FaultFn>) -> io::Result<()> {
    fs::create_dir(to)?;
    let mut entries: Vec<_> = fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let ty = entry.file_type()?;
        if let Some(fault) = fault {
            fault(&src)?;
        }
        if ty.is_dir() {
            copy_tree(&src, &dst, fault)?;
        } else if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src)?, &dst)?;
        } else if ty.is_file() {
            fs::copy(&src, &dst)?;
            fs::File::open(&dst)?.sync_all()?;
        } else {
            let kind = if ty.is_fifo() {
                "a named pipe"
            } else if ty.is_socket() {
                "a socket"
            } else {
                "a device"
            };
            return Err(io::Error::other(format!(
                "{} is {kind}, which a tool folder cannot contain",
                src.display()
            )));
        }
    }
    fs::set_permissions(to, fs::metadata(from)?.permissions())?;
    sync_dir(to)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn file_name(p: &Path) -> io::Result<&str> {
    p.file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::other(format!("bad folder name {}", p.display())))
}

/// Digest of a folder's files, names, modes and symlink targets, for "same version, other content".
pub fn folder_digest(dir: &Path) -> io::Result<crate::ContentHash> {
    fn walk(dir: &Path, rel: &Path, h: &mut blake3::Hasher) -> io::Result<()> {
        let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let rel = rel.join(entry.file_name());
            let meta = fs::symlink_metadata(entry.path())?;
            h.update(rel.as_os_str().as_encoded_bytes());
            h.update(&[0]);
            h.update(&(meta.permissions().mode() & 0o777).to_le_bytes());
            if meta.is_dir() {
                h.update(b"d");
                walk(&entry.path(), &rel, h)?;
            } else if meta.is_symlink() {
                h.update(b"l");
                h.update(fs::read_link(entry.path())?.as_os_str().as_encoded_bytes());
            } else {
                h.update(b"f");
                let mut f = fs::File::open(entry.path())?;
                h.update(&meta.len().to_le_bytes());
                io::copy(&mut f, h)?;
            }
        }
        Ok(())
    }
    let mut h = blake3::Hasher::new();
    walk(dir, Path::new(""), &mut h)?;
    Ok(crate::ContentHash::from_hasher(&h))
}
