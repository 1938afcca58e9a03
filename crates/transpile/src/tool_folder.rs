//! A tool folder's code as the host sees it: never through a symbolic link that leaves the
//! folder, never into a linked directory, never deeper or wider than a bound. A hostile
//! folder (links to host files, link loops, a million entries, a FIFO named `x.ts`) costs
//! the host little and shows it nothing outside the folder.
//!
//! Everything is opened relative to one descriptor of the folder with `openat2` and
//! `RESOLVE_BENEATH`, so a link inside the folder still works while one leading out fails
//! (`EXDEV`) whatever its spelling (absolute, `../..`, through another link). Directories
//! are entered with `RESOLVE_NO_SYMLINKS`: the walk never follows a directory link, so a
//! loop (`l1 -> .`) is one entry, not a path explosion.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::TranspileError;

/// Folders deeper than this below a tool folder are an error.
pub const MAX_DEPTH: usize = 32;
/// Entries (files, folders, links) a tool folder may hold outside `node_modules` and
/// hidden folders.
pub const MAX_ENTRIES: usize = 50_000;
/// The largest source file the host reads.
pub const MAX_SOURCE_BYTES: u64 = 32 << 20;

/// How far a walk goes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub depth: usize,
    pub entries: usize,
}

impl Bounds {
    pub(crate) const TOOL: Bounds = Bounds {
        depth: MAX_DEPTH,
        entries: MAX_ENTRIES,
    };
}

/// Files whose change changes what `import` loads.
const MODULE_EXTENSIONS: &[&str] = &["ts", "mts", "cts", "tsx", "js", "mjs", "cjs", "json"];

/// What a file's version is made of. Links are resolved beneath the folder; whatever does
/// not resolve to a regular file (a link out, a loop, a directory link) is `Other`, so the
/// change from one to the other still shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// A regular file: its identity, size and modification time.
    File {
        /// Device of the file system.
        dev: u64,
        /// Inode number.
        ino: u64,
        /// Size in bytes.
        size: u64,
        /// Modification time, seconds.
        mtime: i64,
        /// Modification time, nanoseconds within the second.
        mtime_nsec: i64,
    },
    /// The file type, or the error resolving it (negated).
    Other(i64),
}

impl Stamp {
    /// Feeds the stamp to `h`: a folder's version is the hash of its files' stamps.
    pub fn hash_into(&self, h: &mut blake3::Hasher) {
        match *self {
            Stamp::File {
                dev,
                ino,
                size,
                mtime,
                mtime_nsec,
            } => {
                h.update(&[1]);
                for n in [dev, ino, size] {
                    h.update(&n.to_le_bytes());
                }
                h.update(&mtime.to_le_bytes());
                h.update(&mtime_nsec.to_le_bytes());
            }
            Stamp::Other(what) => {
                h.update(&[2]);
                h.update(&what.to_le_bytes());
            }
        }
    }
}

/// An open tool folder.
#[derive(Debug)]
pub struct ToolFolder {
    /// The folder as given (for error messages).
    path: PathBuf,
    fd: OwnedFd,
}

/// How a source file could not be read.
pub(crate) enum Unread {
    /// A link that leads out of the folder.
    Outside,
    /// The reading user may not read it.
    Denied,
    /// A FIFO, socket, device or directory.
    NotAFile,
    TooLarge,
    Failed(std::io::Error),
}

impl ToolFolder {
    /// Opens `path`. The folder itself may be a link (the catalog allows linked tool
    /// folders); what lies below it is read without leaving it.
    pub fn open(path: &Path) -> Result<ToolFolder, TranspileError> {
        let fd = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| TranspileError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        Ok(ToolFolder {
            path: path.to_path_buf(),
            fd,
        })
    }

    /// The folder as given to [`ToolFolder::open`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The module files below the folder (by extension, regular files and links), sorted,
    /// without `node_modules` and hidden folders, each with its stamp. Stops with an error
    /// past [`MAX_DEPTH`] or [`MAX_ENTRIES`], and as soon as `stop` is set.
    pub fn modules(&self, stop: &AtomicBool) -> Result<Vec<(PathBuf, Stamp)>, TranspileError> {
        self.modules_within(Bounds::TOOL, stop)
    }

    pub(crate) fn modules_within(
        &self,
        bounds: Bounds,
        stop: &AtomicBool,
    ) -> Result<Vec<(PathBuf, Stamp)>, TranspileError> {
        let mut files = Vec::new();
        let mut pending: Vec<(PathBuf, usize)> = vec![(PathBuf::new(), 0)];
        let mut entries = 0usize;
        while let Some((rel, depth)) = pending.pop() {
            if stop.load(Ordering::Relaxed) {
                return Err(self.io(&rel, std::io::ErrorKind::Interrupted.into()));
            }
            let dir = self.open_dir(&rel)?;
            let list = rustix::fs::Dir::read_from(&dir).map_err(|e| self.io(&rel, e.into()))?;
            for entry in list {
                let entry = entry.map_err(|e| self.io(&rel, e.into()))?;
                let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
                if name == "." || name == ".." {
                    continue;
                }
                entries += 1;
                if entries > bounds.entries {
                    return Err(TranspileError::TooManyEntries {
                        path: self.path.clone(),
                        limit: bounds.entries,
                    });
                }
                let mut kind = entry.file_type();
                if kind == FileType::Unknown {
                    // Some file systems do not say in the listing.
                    kind = rustix::fs::statat(&dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        .map(|st| FileType::from_raw_mode(st.st_mode))
                        .unwrap_or(FileType::Unknown);
                }
                let child = rel.join(name);
                match kind {
                    FileType::Directory => {
                        let hidden = name.as_bytes().starts_with(b".");
                        if hidden || name == "node_modules" {
                            continue;
                        }
                        if depth + 1 > bounds.depth {
                            return Err(TranspileError::TooDeep {
                                path: self.path.join(&child),
                                limit: bounds.depth,
                            });
                        }
                        pending.push((child, depth + 1));
                    }
                    FileType::RegularFile | FileType::Symlink if is_module(&child) => {
                        let stamp = self.stamp(&child);
                        files.push((child, stamp));
                    }
                    _ => {}
                }
            }
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(files)
    }

    /// The stamp of `rel` now, resolving links beneath the folder.
    pub fn stamp(&self, rel: &Path) -> Stamp {
        let opened = rustix::fs::openat2(
            &self.fd,
            rel,
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        );
        match opened.and_then(rustix::fs::fstat) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => Stamp::File {
                dev: st.st_dev,
                ino: st.st_ino,
                size: u64::try_from(st.st_size).unwrap_or(0),
                mtime: st.st_mtime,
                mtime_nsec: i64::try_from(st.st_mtime_nsec).unwrap_or(0),
            },
            Ok(st) => Stamp::Other(i64::from(st.st_mode & 0o170_000)),
            Err(e) => Stamp::Other(-i64::from(e.raw_os_error())),
        }
    }

    /// The bytes of `rel`, a regular file in the folder (links resolved beneath it), at most
    /// [`MAX_SOURCE_BYTES`].
    pub(crate) fn read(&self, rel: &Path) -> Result<Vec<u8>, Unread> {
        // Non-blocking: opening a FIFO must not wait for a writer.
        let fd = rustix::fs::openat2(
            &self.fd,
            rel,
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| match e {
            Errno::XDEV => Unread::Outside,
            Errno::ACCESS | Errno::PERM => Unread::Denied,
            e => Unread::Failed(e.into()),
        })?;
        let st = rustix::fs::fstat(&fd).map_err(|e| Unread::Failed(e.into()))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(Unread::NotAFile);
        }
        if u64::try_from(st.st_size).unwrap_or(u64::MAX) > MAX_SOURCE_BYTES {
            return Err(Unread::TooLarge);
        }
        let mut bytes = Vec::with_capacity(usize::try_from(st.st_size).unwrap_or(0));
        std::fs::File::from(fd)
            .take(MAX_SOURCE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| match e.raw_os_error() {
                Some(code) if code == Errno::ACCESS.raw_os_error() => Unread::Denied,
                _ => Unread::Failed(e),
            })?;
        if bytes.len() as u64 > MAX_SOURCE_BYTES {
            return Err(Unread::TooLarge);
        }
        Ok(bytes)
    }

    fn open_dir(&self, rel: &Path) -> Result<OwnedFd, TranspileError> {
        let at: &Path = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        rustix::fs::openat2(
            &self.fd,
            at,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| match e {
            Errno::ACCESS | Errno::PERM => TranspileError::Unreadable {
                path: self.path.join(rel),
            },
            Errno::NOSYS => TranspileError::Io {
                path: self.path.join(rel),
                source: std::io::Error::other(
                    "this kernel lacks openat2 (Linux 5.6 or later), which Toolhost needs to \
                     read tool code safely",
                ),
            },
            e => self.io(rel, e.into()),
        })
    }

    fn io(&self, rel: &Path, source: std::io::Error) -> TranspileError {
        TranspileError::Io {
            path: self.path.join(rel),
            source,
        }
    }
}

fn is_module(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| MODULE_EXTENSIONS.contains(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(folder: &ToolFolder) -> Vec<String> {
        folder
            .modules(&AtomicBool::new(false))
            .unwrap()
            .into_iter()
            .map(|(p, _)| p.display().to_string())
            .collect()
    }

    #[test]
    fn links_resolve_only_beneath_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("secret.js");
        std::fs::write(&outside, "TOKEN = 1").unwrap();
        let tool = tmp.path().join("tool");
        std::fs::create_dir_all(tool.join("lib")).unwrap();
        std::fs::write(tool.join("lib/a.ts"), "export const a = 1;").unwrap();
        std::os::unix::fs::symlink("lib/a.ts", tool.join("inside.ts")).unwrap();
        std::os::unix::fs::symlink(&outside, tool.join("absolute.js")).unwrap();
        std::os::unix::fs::symlink("../secret.js", tool.join("relative.js")).unwrap();
        std::os::unix::fs::symlink("inside.ts", tool.join("chained.ts")).unwrap();
        std::os::unix::fs::symlink("relative.js", tool.join("chained_out.js")).unwrap();
        let folder = ToolFolder::open(&tool).unwrap();
        assert_eq!(
            folder.read(Path::new("inside.ts")).ok().unwrap(),
            b"export const a = 1;"
        );
        assert_eq!(
            folder.read(Path::new("chained.ts")).ok().unwrap(),
            b"export const a = 1;"
        );
        for out in ["absolute.js", "relative.js", "chained_out.js"] {
            assert!(
                matches!(folder.read(Path::new(out)), Err(Unread::Outside)),
                "{out} was read"
            );
            assert!(matches!(folder.stamp(Path::new(out)), Stamp::Other(_)));
        }
        assert!(matches!(
            folder.stamp(Path::new("inside.ts")),
            Stamp::File { .. }
        ));
    }

    #[test]
    fn directory_links_are_never_entered() {
        let tmp = tempfile::tempdir().unwrap();
        let tool = tmp.path().join("tool");
        std::fs::create_dir_all(tool.join("lib")).unwrap();
        std::fs::write(tool.join("index.ts"), "").unwrap();
        std::fs::write(tool.join("lib/x.ts"), "").unwrap();
        for l in ["l1", "l2", "l3", "l4"] {
            std::os::unix::fs::symlink(".", tool.join(l)).unwrap();
        }
        std::os::unix::fs::symlink("lib", tool.join("lib2")).unwrap();
        let folder = ToolFolder::open(&tool).unwrap();
        assert_eq!(names(&folder), ["index.ts", "lib/x.ts"]);
    }

    #[test]
    fn depth_and_width_are_bounded() {
        let small = Bounds {
            depth: 3,
            entries: 20,
        };
        let walk = |dir: &Path| {
            ToolFolder::open(dir)
                .unwrap()
                .modules_within(small, &AtomicBool::new(false))
        };
        let tmp = tempfile::tempdir().unwrap();
        let tool = tmp.path().join("tool");
        std::fs::create_dir_all(tool.join("d/d/d")).unwrap();
        std::fs::write(tool.join("d/d/d/x.ts"), "").unwrap();
        assert_eq!(walk(&tool).unwrap().len(), 1);
        std::fs::create_dir_all(tool.join("d/d/d/d")).unwrap();
        let err = walk(&tool).unwrap_err();
        assert!(matches!(err, TranspileError::TooDeep { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("tool/d/d/d/d: more than 3 folders"),
            "{err}"
        );

        let wide = tmp.path().join("wide");
        std::fs::create_dir_all(&wide).unwrap();
        for i in 0..20 {
            std::fs::File::create(wide.join(format!("f{i}"))).unwrap();
        }
        assert!(walk(&wide).unwrap().is_empty());
        std::fs::File::create(wide.join("one-more")).unwrap();
        let err = walk(&wide).unwrap_err();
        assert!(
            matches!(err, TranspileError::TooManyEntries { .. }),
            "{err}"
        );
        // node_modules and hidden folders do not count.
        let tool2 = tmp.path().join("tool2");
        std::fs::create_dir_all(tool2.join("node_modules")).unwrap();
        std::fs::create_dir_all(tool2.join(".git")).unwrap();
        std::fs::rename(&wide, tool2.join("node_modules/wide")).unwrap();
        std::fs::rename(tool.join("d"), tool2.join(".git/d")).unwrap();
        assert!(walk(&tool2).unwrap().is_empty());
    }

    #[test]
    fn fifos_are_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("x.ts");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let folder = ToolFolder::open(tmp.path()).unwrap();
        assert!(matches!(
            folder.read(Path::new("x.ts")),
            Err(Unread::NotAFile)
        ));
    }
}
