//! Whether two directories are, contain or lie inside one another, however they are
//! spelt: by their names, and by the identity (device and inode) of what is on disk, which
//! also sees through links, `..`, bind mounts and case-insensitive file systems
//! (`DATA/TOOLS` is `DATA/tools` there).

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Relation {
    Same,
    /// The first contains the second.
    Contains,
    /// The first lies inside the second.
    Inside,
}

impl Relation {
    /// "`a` {is, contains, lies inside} `b`".
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Relation::Same => "is",
            Relation::Contains => "contains",
            Relation::Inside => "lies inside",
        }
    }
}

/// How `a` relates to `b`, if they overlap at all.
pub(crate) fn relation(a: &Path, b: &Path) -> Option<Relation> {
    let (na, nb) = (normal(a), normal(b));
    if na == nb {
        return Some(Relation::Same);
    }
    if na.starts_with(&nb) {
        return Some(Relation::Inside);
    }
    if nb.starts_with(&na) {
        return Some(Relation::Contains);
    }
    let (ia, ib) = (identity(a), identity(b));
    if ia.is_some() && ia == ib {
        return Some(Relation::Same);
    }
    if let Some(ib) = ib
        && above(a).contains(&ib)
    {
        return Some(Relation::Inside);
    }
    if let Some(ia) = ia
        && above(b).contains(&ia)
    {
        return Some(Relation::Contains);
    }
    None
}

/// The path made absolute (from the current directory) with `.` and `..` resolved by name.
pub(crate) fn normal(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

type Identity = (u64, u64);

fn identity(p: &Path) -> Option<Identity> {
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// The identities of every directory strictly above `p` on disk (after links): from the
/// nearest one that exists, when `p` does not (yet).
fn above(p: &Path) -> Vec<Identity> {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (start, skip) = match std::fs::canonicalize(&abs) {
        Ok(real) => (real, 1),
        Err(_) => match abs
            .ancestors()
            .skip(1)
            .find_map(|a| std::fs::canonicalize(a).ok())
        {
            Some(real) => (real, 0),
            None => return Vec::new(),
        },
    };
    start.ancestors().skip(skip).filter_map(identity).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_name() {
        let r = |a: &str, b: &str| relation(Path::new(a), Path::new(b));
        assert_eq!(r("/nope/d", "/nope/d/"), Some(Relation::Same));
        assert_eq!(r("/nope/d/x", "/nope/d"), Some(Relation::Inside));
        assert_eq!(r("/nope/d", "/nope/d/x/y"), Some(Relation::Contains));
        assert_eq!(r("/nope/d/../e", "/nope/e/f"), Some(Relation::Contains));
        assert_eq!(r("/nope/d", "/nope/dx"), None);
        assert_eq!(r("/nope/a", "/nope/b"), None);
    }

    #[test]
    fn by_identity_through_links() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        std::fs::create_dir_all(data.join("tools/sh")).unwrap();
        std::os::unix::fs::symlink(&data, tmp.path().join("alias")).unwrap();
        let alias = tmp.path().join("alias");
        assert_eq!(
            relation(&alias.join("tools"), &data.join("tools")),
            Some(Relation::Same)
        );
        assert_eq!(
            relation(&alias.join("tools/sh"), &data.join("tools")),
            Some(Relation::Inside)
        );
        // Not there yet, but its parent is: still inside.
        assert_eq!(
            relation(&alias.join("tools/new/deeper"), &data.join("tools")),
            Some(Relation::Inside)
        );
        assert_eq!(
            relation(&alias, &data.join("tools")),
            Some(Relation::Contains)
        );
        assert_eq!(relation(&data.join("other"), &alias.join("tools")), None);
    }
}
