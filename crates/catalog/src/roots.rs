//! Where tools are looked for, in order of increasing precedence.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::CatalogError;

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
    DataUser { user: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Root {
    pub path: PathBuf,
    pub origin: RootOrigin,
}

/// The inputs that decide the roots, in the order of precedence the CLI documents:
/// `--tools-dir` (repeatable), else `PI_TOOLS_DIRS`, else the `--data`/`--user` layout.
#[derive(Debug, Clone, Default)]
pub struct RootsConfig {
    pub tools_dirs: Vec<PathBuf>,
    pub env_tools_dirs: Option<String>,
    pub data: Option<PathBuf>,
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
            validate_user(user)?;
            roots.push(Root {
                path: data.join(user).join("tools"),
                origin: RootOrigin::DataUser { user: user.clone() },
            });
        }
        roots.retain(|r| {
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

/// A user names a folder under DATA_PATH, so it must not be able to point anywhere else.
pub fn validate_user(user: &str) -> Result<(), CatalogError> {
    let ok = !user.is_empty()
        && user.len() <= 254
        && !user.starts_with('.')
        && !user.contains(['/', '\\', '\0'])
        && !user.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(CatalogError::InvalidUser(user.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_cannot_escape_the_data_dir() {
        for bad in ["", "..", ".hidden", "a/b", "a\\b", "a\0b", "x\ny"] {
            assert!(validate_user(bad).is_err(), "{bad:?} accepted");
        }
        assert!(validate_user("ada@example.com").is_ok());
    }

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
