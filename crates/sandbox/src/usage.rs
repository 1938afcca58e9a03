//! How much of the disk a user's home takes: a walk that counts what is allocated
//! (`st_blocks`, so a sparse file costs what it really holds), never follows a link, never
//! leaves the home's file system, and stops at a bound on entries and depth.
//!
//! Tools write into the home while it is walked, so the walk goes by descriptors: each
//! folder is opened relative to its parent with `O_NOFOLLOW`, and a folder swapped for a
//! link meanwhile is skipped rather than followed.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// Where a walk stops.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// Entries (files, folders, links) counted before the walk gives up.
    pub entries: u64,
    /// Folders nested below the home before the walk gives up.
    pub depth: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Bytes allocated to the home and everything in it.
    pub bytes: u64,
    /// Entries counted, the home itself included.
    pub entries: u64,
    /// Why the walk ended early, if it did: what it did not see is then unknown.
    pub cut: Option<Cut>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cut {
    /// More entries than [`Bounds::entries`].
    Entries,
    /// This folder (relative to the home) lies deeper than [`Bounds::depth`].
    Depth(PathBuf),
    /// This folder (relative to the home) could not be opened: permission denied.
    Unreadable(PathBuf),
}

/// Measures `home`; entries that are `skip` (the user's own tool root: read-only in the
/// sandbox, so not the tools' to fill) count nothing. A home that does not exist is empty.
pub(crate) fn measure(home: &Path, skip: &[PathBuf], bounds: Bounds) -> std::io::Result<Usage> {
    let root = match rustix::fs::open(
        home,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(Usage::default()),
        Err(e) => return Err(e.into()),
    };
    let top = rustix::fs::fstat(&root)?;
    let skip: HashSet<(u64, u64)> = skip
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect();
    let mut usage = Usage {
        bytes: allocated(&top),
        entries: 1,
        cut: None,
    };
    // A file with several names inside the home counts once.
    let mut linked: HashSet<(u64, u64)> = HashSet::new();
    let mut stack = vec![Dir::new(root)?];
    // The folder being read, relative to the home (for what a cut names).
    let mut at = PathBuf::new();
    loop {
        // The folders open: the one being read and those above it.
        let depth = stack.len();
        let Some(dir) = stack.last_mut() else {
            break;
        };
        let entry = match dir.read() {
            None => {
                stack.pop();
                at.pop();
                continue;
            }
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(entry)) => entry,
        };
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        usage.entries += 1;
        if usage.entries > bounds.entries {
            usage.cut = Some(Cut::Entries);
            break;
        }
        let fd = dir.fd()?;
        let st = match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            // Removed since it was listed.
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(e.into()),
        };
        // Another file system mounted inside the home is not the home's.
        if st.st_dev != top.st_dev || skip.contains(&(st.st_dev, st.st_ino)) {
            continue;
        }
        let is_dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
        if !is_dir && st.st_nlink > 1 && !linked.insert((st.st_dev, st.st_ino)) {
            continue;
        }
        usage.bytes = usage.bytes.saturating_add(allocated(&st));
        if !is_dir {
            continue;
        }
        let below = at.join(OsStr::from_bytes(name.to_bytes()));
        if depth > bounds.depth {
            usage.cut = Some(Cut::Depth(below));
            break;
        }
        let child = match rustix::fs::openat(
            fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(child) => child,
            // Removed, or replaced by a file or a link, since it was looked at.
            Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => continue,
            Err(Errno::ACCESS | Errno::PERM) => {
                usage.cut = Some(Cut::Unreadable(below));
                break;
            }
            Err(e) => return Err(e.into()),
        };
        // Replaced by another folder since it was looked at: that one is walked, and
        // its own size was not counted.
        let opened = rustix::fs::fstat(&child)?;
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino) {
            if opened.st_dev != top.st_dev {
                continue;
            }
            usage.bytes = usage.bytes.saturating_add(allocated(&opened));
        }
        stack.push(Dir::new(child)?);
        at = below;
    }
    Ok(usage)
}

fn allocated(st: &Stat) -> u64 {
    u64::try_from(st.st_blocks).unwrap_or(0).saturating_mul(512)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDE: Bounds = Bounds {
        entries: 1000,
        depth: 16,
    };

    fn blocks(path: &Path) -> u64 {
        std::fs::symlink_metadata(path).unwrap().blocks() * 512
    }

    #[test]
    fn counts_what_is_allocated_once_and_never_follows_links_out() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(home.join("a/b")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("big"), vec![1u8; 1 << 20]).unwrap();
        std::fs::write(home.join("a/b/data"), vec![7u8; 100_000]).unwrap();
        std::fs::hard_link(home.join("a/b/data"), home.join("again")).unwrap();
        std::os::unix::fs::symlink(&outside, home.join("a/out")).unwrap();
        std::os::unix::fs::symlink(outside.join("big"), home.join("big")).unwrap();
        // A sparse file holds (almost) nothing.
        let sparse = std::fs::File::create(home.join("sparse")).unwrap();
        sparse.set_len(1 << 30).unwrap();
        let u = measure(&home, &[], WIDE).unwrap();
        let expected: u64 = ["", "a", "a/b", "a/b/data", "a/out", "big", "sparse"]
            .iter()
            .map(|p| blocks(&home.join(p)))
            .sum();
        assert_eq!(u.bytes, expected);
        assert_eq!(u.entries, 8);
        assert_eq!(u.cut, None);
        assert!(u.bytes < 1 << 20, "{u:?}");
    }

    #[test]
    fn skips_the_users_tool_root_and_reads_a_missing_home_as_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join("tools/t")).unwrap();
        std::fs::write(home.join("tools/t/index.ts"), vec![1u8; 200_000]).unwrap();
        let with = measure(&home, &[], WIDE).unwrap();
        let without = measure(&home, &[home.join("tools")], WIDE).unwrap();
        assert!(
            with.bytes >= without.bytes + 200_000,
            "{with:?} {without:?}"
        );
        assert_eq!(without.entries, 2);
        assert_eq!(
            measure(&tmp.path().join("none"), &[], WIDE).unwrap(),
            Usage::default()
        );
    }

    #[test]
    fn stops_at_its_bounds_and_says_where() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().to_path_buf();
        for i in 0..20 {
            std::fs::write(home.join(format!("f{i}")), "x").unwrap();
        }
        let few = Bounds {
            entries: 10,
            depth: 16,
        };
        assert_eq!(measure(&home, &[], few).unwrap().cut, Some(Cut::Entries));
        let deep = home.join("d/d/d/d");
        std::fs::create_dir_all(&deep).unwrap();
        let shallow = Bounds {
            entries: 1000,
            depth: 2,
        };
        assert_eq!(
            measure(&home, &[], shallow).unwrap().cut,
            Some(Cut::Depth("d/d/d".into()))
        );
        assert_eq!(measure(&home, &[], WIDE).unwrap().cut, None);
    }
}
