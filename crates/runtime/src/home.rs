//! A user's home: checked before any tool runs in it, and prepared before a sandbox
//! mounts it read-write (and, on a root host, hands it to the user's uid).
//!
//! A home is writable by its user's tools, so it must never be, contain or lie inside
//! something shared: a tool root (other than the user's own `HOME/tools`, which is
//! mounted read-only), the cache, the email database's directory. And the user's own
//! tools folder must be a real folder the host made, never one a tool made or a link.

use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::RuntimeError;
use crate::config::{ToolEnv, UserSpace};
use crate::overlap::relation;

/// The checks that need no file system, done for every call: the user-name rule, an
/// absolute home without `.` or `..`, and inside the directory of homes when there is one.
pub(crate) fn check(space: &UserSpace, env: &ToolEnv) -> Result<(), RuntimeError> {
    let refuse = |why: String| Err(RuntimeError::Home(format!("user {:?}: {why}", space.user)));
    if let Err(e) = toolhost_catalog::validate_user(&space.user) {
        return Err(RuntimeError::Home(e.to_string()));
    }
    let home = &space.home;
    let plain = home.is_absolute()
        && !home
            .components()
            .any(|c| matches!(c, Component::CurDir | Component::ParentDir));
    if !plain {
        return refuse(format!(
            "the home {} must be an absolute path without `.` or `..`",
            home.display()
        ));
    }
    if let Some(homes) = &env.homes
        && !(home.starts_with(homes) && home != homes)
    {
        return refuse(format!(
            "the home {} is not inside the directory of homes {}",
            home.display(),
            homes.display()
        ));
    }
    Ok(())
}

/// Makes the home and its tools folder ready for a sandbox, refusing a home that overlaps
/// anything shared. Runs before the home is handed to the user's uid or mounted. The
/// tools folder it creates is the host's (root's on a root host), not the user's uid's.
pub(crate) fn prepare(space: &UserSpace, env: &ToolEnv, cache: &Path) -> Result<(), RuntimeError> {
    check(space, env)?;
    let home = &space.home;
    std::fs::create_dir_all(home).map_err(|e| RuntimeError::io(home, e))?;
    let meta = std::fs::symlink_metadata(home).map_err(|e| RuntimeError::io(home, e))?;
    if !meta.is_dir() {
        return Err(RuntimeError::Home(format!(
            "user {:?}: the home {} is a link or a file, not a folder; the host would follow \
             it, so no tool runs there until it is replaced by a folder",
            space.user,
            home.display()
        )));
    }
    let own_tools = home.join("tools");
    let mut shared: Vec<(&str, PathBuf)> = env
        .tools_dirs
        .iter()
        .filter(|d| **d != own_tools)
        .map(|d| ("the tool root", d.clone()))
        .collect();
    shared.push(("the cache directory", cache.to_path_buf()));
    if let Some(dir) = env.email_db().and_then(Path::parent) {
        shared.push(("the directory of OFFICER_EMAIL_DB", dir.to_path_buf()));
    }
    for (what, dir) in &shared {
        if let Some(r) = relation(home, dir) {
            return Err(RuntimeError::Home(format!(
                "user {:?}: the home {} {} {what} {}, which every user's tools share; \
                 refusing to let this user's tools write there",
                space.user,
                home.display(),
                r.verb(),
                dir.display()
            )));
        }
    }
    own_tools_folder(&own_tools)
}

/// Makes `HOME/tools` a real folder: created when missing; a link or a file there is
/// never followed but moved aside (`tools.not-a-folder.SECONDS`, so nothing is lost) and
/// replaced by a folder. A sandbox mounts it read-only, so its tools can neither create
/// it (and so override global tools) nor plant a link to another user's tools.
fn own_tools_folder(tools: &Path) -> Result<(), RuntimeError> {
    // Another start for the same user may be doing the same: a few rounds settle it.
    for _ in 0..4 {
        match std::fs::symlink_metadata(tools) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => move_aside(tools)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::create_dir(tools) {
                    Ok(()) => {
                        // Readable by the user's uid whatever the host's umask.
                        std::fs::set_permissions(tools, std::fs::Permissions::from_mode(0o755))
                            .map_err(|e| RuntimeError::io(tools, e))?;
                        return Ok(());
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(RuntimeError::io(tools, e)),
                }
            }
            Err(e) => return Err(RuntimeError::io(tools, e)),
        }
    }
    Err(RuntimeError::Home(format!(
        "{} keeps changing; not starting a sandbox over it",
        tools.display()
    )))
}

fn move_aside(tools: &Path) -> Result<(), RuntimeError> {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let dir = tools.parent().unwrap_or(Path::new("/"));
    let dir_fd = rustix::fs::open(
        dir,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| RuntimeError::io(dir, e.into()))?;
    for n in 0..100 {
        let name = match n {
            0 => format!("tools.not-a-folder.{seconds}"),
            n => format!("tools.not-a-folder.{seconds}.{n}"),
        };
        // NOREPLACE: whatever already has that name is kept too.
        match rustix::fs::renameat_with(
            &dir_fd,
            "tools",
            &dir_fd,
            name.as_str(),
            rustix::fs::RenameFlags::NOREPLACE,
        ) {
            Ok(()) => {
                tracing::warn!(
                    path = %tools.display(),
                    moved_to = %dir.join(&name).display(),
                    "a user's tools folder was a link or a file, not a folder: moved it aside \
                     (never followed) and made a folder in its place"
                );
                return Ok(());
            }
            Err(rustix::io::Errno::EXIST) => continue,
            // Someone else moved it meanwhile.
            Err(rustix::io::Errno::NOENT) => return Ok(()),
            Err(e) => return Err(RuntimeError::io(tools, e.into())),
        }
    }
    Err(RuntimeError::Home(format!(
        "cannot move {} aside: too many earlier ones",
        tools.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(user: &str, home: &Path) -> UserSpace {
        UserSpace {
            user: user.into(),
            home: home.to_path_buf(),
        }
    }

    #[test]
    fn names_and_paths_that_leave_the_homes_are_refused_before_anything_is_touched() {
        let env = ToolEnv {
            homes: Some("/data".into()),
            ..ToolEnv::default()
        };
        for (user, home) in [
            ("..", "/data/.."),
            ("a@x/../b@x", "/data/a@x/../b@x"),
            ("", "/data"),
            (".", "/data/."),
            ("tools", "/data/tools"),
            ("a@x", "data/a@x"),
            ("a@x", "/elsewhere/a@x"),
            ("a@x", "/data"),
        ] {
            assert!(
                matches!(
                    check(&space(user, Path::new(home)), &env),
                    Err(RuntimeError::Home(_))
                ),
                "{user:?} at {home} accepted"
            );
        }
        assert!(check(&space("a@x", Path::new("/data/a@x")), &env).is_ok());
    }

    #[test]
    fn a_home_overlapping_a_tool_root_or_the_cache_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let cache = tmp.path().join("cache");
        std::fs::create_dir_all(data.join("tools")).unwrap();
        std::fs::create_dir_all(&cache).unwrap();
        let env = ToolEnv {
            tools_dirs: vec![data.join("tools"), data.join("a@x/tools")],
            homes: Some(data.clone()),
            ..ToolEnv::default()
        };
        // A link named like a user, to the global tools (what a case-insensitive mount
        // does to `TOOLS`): the same directory on disk.
        std::os::unix::fs::symlink(data.join("tools"), data.join("alias@x")).unwrap();
        let e = prepare(&space("alias@x", &data.join("alias@x")), &env, &cache).unwrap_err();
        assert!(e.to_string().contains("link"), "{e}");
        // Its own tools root inside its home is fine, and is made a real folder.
        prepare(&space("a@x", &data.join("a@x")), &env, &cache).unwrap();
        assert!(toolhost_catalog::is_real_dir(&data.join("a@x/tools")));
        // A cache inside a home.
        let inside = data.join("c@x");
        std::fs::create_dir_all(inside.join("cache")).unwrap();
        let e = prepare(&space("c@x", &inside), &env, &inside.join("cache")).unwrap_err();
        assert!(
            e.to_string().contains("contains the cache directory"),
            "{e}"
        );
    }

    #[test]
    fn a_link_or_file_named_tools_is_moved_aside_and_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("d@x");
        let theirs = tmp.path().join("b@x/tools");
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::os::unix::fs::symlink(&theirs, home.join("tools")).unwrap();
        own_tools_folder(&home.join("tools")).unwrap();
        assert!(toolhost_catalog::is_real_dir(&home.join("tools")));
        std::fs::remove_dir(home.join("tools")).unwrap();
        std::fs::write(home.join("tools"), "a file").unwrap();
        own_tools_folder(&home.join("tools")).unwrap();
        let mut aside: Vec<String> = std::fs::read_dir(&home)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("tools.not-a-folder."))
            .collect();
        aside.sort();
        assert_eq!(aside.len(), 2, "{aside:?}");
        // Nothing lost: the link still points at b's tools, the file keeps its text.
        let texts: Vec<_> = aside
            .iter()
            .map(|n| home.join(n))
            .map(|p| {
                (
                    std::fs::read_link(&p).ok(),
                    std::fs::read_to_string(&p).ok(),
                )
            })
            .collect();
        assert!(texts.contains(&(Some(theirs.clone()), None)), "{texts:?}");
        assert!(
            texts.iter().any(|(_, t)| t.as_deref() == Some("a file")),
            "{texts:?}"
        );
    }
}
