//! `OFFICER_EMAIL_DB`: every sandbox mounts the database's directory read-write at
//! `/officer/data` (SQLite keeps its journal and WAL files beside the database), so that
//! directory must hold nothing else any user's tools must not see or change.

use std::path::Path;

use crate::RuntimeError;
use crate::config::ToolEnv;
use crate::overlap::{normal, relation};

/// Refuses a database whose directory is `/`, or is, contains or lies inside the homes'
/// directory, a tool root or the cache: each user's tools would share it.
pub(crate) fn check(env: &ToolEnv, cache: &Path) -> Result<(), RuntimeError> {
    let Some(db) = env.email_db() else {
        return Ok(());
    };
    let refuse = |why: String| {
        Err(RuntimeError::Config(format!(
            "[env] OFFICER_EMAIL_DB = {:?}: {why}; give the database a directory of its own \
             (such as /srv/officer-mail/emails.db), outside the data directory, the tool \
             roots and the cache",
            db.display().to_string()
        )))
    };
    if !db.is_absolute() {
        return refuse(
            "must be an absolute path (its directory is mounted into every sandbox)".into(),
        );
    }
    let dir = match db.parent() {
        Some(dir) if db.file_name().is_some() && normal(dir) != Path::new("/") => dir,
        _ => return refuse("its directory would be the whole file system `/`".into()),
    };
    let mut shared: Vec<(&str, &Path)> = Vec::new();
    if let Some(homes) = &env.homes {
        shared.push(("the directory of users' homes", homes));
    }
    for root in &env.tools_dirs {
        shared.push(("the tool root", root));
    }
    shared.push(("the cache directory", cache));
    for (what, other) in shared {
        if let Some(r) = relation(dir, other) {
            return refuse(format!(
                "its directory {} is mounted read-write at /officer/data in every user's \
                 sandbox, and it {} {what} {}",
                dir.display(),
                r.verb(),
                other.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn env(db: &str) -> ToolEnv {
        ToolEnv {
            vars: [("OFFICER_EMAIL_DB".to_string(), db.to_string())].into(),
            tools_dirs: vec![PathBuf::from("/srv/tools")],
            homes: Some(PathBuf::from("/srv/officer")),
            ..ToolEnv::default()
        }
    }

    #[test]
    fn the_database_needs_a_directory_of_its_own() {
        let cache = Path::new("/var/cache/toolhost");
        // F3: the README's own example put it in the data directory.
        for (db, says) in [
            (
                "/srv/officer/emails.db",
                "is the directory of users' homes /srv/officer",
            ),
            (
                "/srv/officer/mail/emails.db",
                "lies inside the directory of users' homes",
            ),
            ("/srv/emails.db", "contains the directory of users' homes"),
            ("/srv/tools/emails.db", "is the tool root /srv/tools"),
            (
                "/var/cache/toolhost/ts/e.db",
                "lies inside the cache directory",
            ),
            ("/emails.db", "`/`"),
            ("emails.db", "absolute"),
        ] {
            let e = check(&env(db), cache).unwrap_err().to_string();
            assert!(
                e.contains(says) && e.contains("directory of its own"),
                "{db}: {e}"
            );
        }
        check(&env("/srv/officer-mail/emails.db"), cache).unwrap();
        check(&ToolEnv::default(), cache).unwrap();
    }
}
