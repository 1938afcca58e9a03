//! Where tools are looked for, in order of increasing precedence.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::CatalogError;
use crate::users::{is_real_dir, validate_user};

/// Why a directory is a tool root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RootOrigin {
    /// `--tools-dir`
    Flag,
    /// `PI_TOOLS_DIRS`
    Env,
    /// `DATA_PATH/tools`
    DataGlobal,
    /// `DATA_PATH/EMAIL/tools`
    DataUser {
        /// Whose home the root is in.
        user: String,
    },
}

/// A directory whose subfolders are tool folders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Root {
    /// The directory.
    pub path: PathBuf,
    /// What made it a root, for `list` and diagnostics.
    pub origin: RootOrigin,
}

/// The inputs that decide the roots, in the order of precedence the CLI documents:
/// `--tools-dir` (repeatable), else `PI_TOOLS_DIRS`, else the `--data`/`--user` layout.
#[derive(Debug, Clone, Default)]
pub struct RootsConfig {
    /// `--tools-dir`, in the order given.
    pub tools_dirs: Vec<PathBuf>,
    /// The raw value of `PI_TOOLS_DIRS`, colon-separated.
    pub env_tools_dirs: Option<String>,
    /// `--data`: the data directory holding global tools and users' homes.
    pub data: Option<PathBuf>,
    /// `--user`: whose home's tools are added on top of the global ones.
    pub user: Option<String>,
}

impl RootsConfig {
    /// Resolves the roots. Roots named explicitly must exist; `PI_TOOLS_DIRS` entries that
    /// do not are left out with a warning (returned), as are data-layout folders not yet made.
    pub fn resolve(&self) -> Result<(Vec<Root>, Vec<String>), CatalogError> {
        let mut warnings = Vec::new();
        if self.user.is_some() && self.data.is_none() {
            return Err(CatalogError::UserWithoutData);
        }
        // Whatever decides the roots, the user also names a home.
        if let Some(user) = &self.user {
            validate_user(user)?;
        }
        if !self.tools_dirs.is_empty() {
            let roots = self
                .tools_dirs
                .iter()
                .map(|p| {
                    existing_dir(p).map(|path| Root {
                        path,
                        origin: RootOrigin::Flag,
                    })
                })
                .collect::<Result<_, _>>()?;
            return Ok((roots, warnings));
        }
        if let Some(env) = self
            .env_tools_dirs
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            let mut roots = Vec::new();
            for part in env.split(':').filter(|p| !p.is_empty()) {
                match existing_dir(Path::new(part)) {
                    Ok(path) => roots.push(Root {
                        path,
                        origin: RootOrigin::Env,
                    }),
                    Err(e) => warnings.push(format!("PI_TOOLS_DIRS: skipping {part}: {e}")),
                }
            }
            if roots.is_empty() {
                return Err(CatalogError::NoRoots);
            }
            return Ok((roots, warnings));
        }
        let Some(data) = &self.data else {
            return Err(CatalogError::NoRoots);
        };
        let data = &std::path::absolute(data).unwrap_or_else(|_| data.clone());
        if !data.is_dir() {
            return Err(CatalogError::MissingData(data.clone()));
        }
        let mut roots = vec![Root {
            path: data.join("tools"),
            origin: RootOrigin::DataGlobal,
        }];
        if let Some(user) = &self.user {
            roots.push(Root {
                path: data.join(user).join("tools"),
                origin: RootOrigin::DataUser { user: user.clone() },
            });
        }
        roots.retain(|r| {
            let user_root = matches!(r.origin, RootOrigin::DataUser { .. });
            let present = std::fs::symlink_metadata(&r.path).is_ok();
            if user_root && present && !is_real_dir(&r.path) {
                warnings.push(format!(
                    "{} is not a folder (a link?): a user's tools folder is never followed; \
                     that user's next sandboxed call moves it aside",
                    r.path.display()
                ));
                return false;
            }
            let exists = r.path.is_dir();
            if !exists {
                warnings.push(format!(
                    "{} does not exist yet (no tools there)",
                    r.path.display()
                ));
            }
            exists
        });
        Ok((roots, warnings))
    }
}

/// The directory as an absolute path (tools run elsewhere than the current directory).
fn existing_dir(p: &Path) -> Result<PathBuf, CatalogError> {
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => Ok(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
        Ok(_) => Err(CatalogError::NotADirectory(p.to_path_buf())),
        Err(_) => Err(CatalogError::MissingRoot(p.to_path_buf())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_beat_env_beat_data() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::create_dir(&a).unwrap();
        let cfg = RootsConfig {
            tools_dirs: vec![a.clone()],
            env_tools_dirs: Some("/nope".into()),
            data: Some(dir.path().into()),
            user: None,
        };
        assert_eq!(
            cfg.resolve().unwrap().0,
            vec![Root {
                path: a.clone(),
                origin: RootOrigin::Flag
            }]
        );
        let cfg = RootsConfig {
            tools_dirs: vec![],
            ..cfg
        };
        assert!(matches!(cfg.resolve(), Err(CatalogError::NoRoots)));
        let cfg = RootsConfig {
            env_tools_dirs: Some(format!("{}:/nope", a.display())),
            ..cfg
        };
        let (roots, warnings) = cfg.resolve().unwrap();
        assert_eq!(roots.len(), 1);
        assert_eq!(warnings.len(), 1);
        let cfg = RootsConfig {
            env_tools_dirs: None,
            user: Some("u@x".into()),
            ..cfg
        };
        std::fs::create_dir_all(dir.path().join("tools")).unwrap();
        std::fs::create_dir_all(dir.path().join("u@x/tools")).unwrap();
        let (roots, _) = cfg.resolve().unwrap();
        assert_eq!(roots[0].origin, RootOrigin::DataGlobal);
        assert_eq!(roots[1].origin, RootOrigin::DataUser { user: "u@x".into() });
    }
}
