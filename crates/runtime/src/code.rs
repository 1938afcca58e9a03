//! A TypeScript or JavaScript tool's code made ready for one user's call: its version, and
//! its sources transpiled into that user's own cache directory.
//!
//! The host reads tool code only inside the tool folder ([`ToolFolder`]) and, on a root
//! host with the sandbox on, with the tool user's credentials ([`tool_user`]): a folder
//! can show the host nothing its own sandbox could not read. Transpiling and writing the
//! cache then happen as the host. Both run on threads of their own that stop early once
//! the call is abandoned.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::RuntimeError;
use crate::launch::Launcher;
use crate::tool_user::{self, StopOnDrop};
use crate::version::CodeVersions;
use toolhost_transpile::ToolFolder;
use toolhost_transpile::Transpiler;
use toolhost_transpile::read_sources;

#[derive(Default)]
pub(crate) struct Code {
    versions: CodeVersions,
    /// (user, tool folder) → the code version whose sources are in that user's cache.
    prepared: Mutex<HashMap<(String, PathBuf), String>>,
}

impl Code {
    /// Makes `dir`'s code ready in `user`'s cache; returns its version. Costs an `openat2`
    /// and an `fstat` per module file when nothing changed since the last call.
    pub(crate) async fn prepare(
        &self,
        launcher: &Launcher,
        dir: &Path,
        user: &str,
    ) -> Result<String, RuntimeError> {
        let key = (user.to_string(), dir.to_path_buf());
        if let Some(version) = self.versions.unchanged(dir)
            && self.prepared.lock().ok().and_then(|p| p.get(&key).cloned()) == Some(version.clone())
        {
            return Ok(version);
        }
        let cache = launcher.transpiled_dir(user)?;
        let transpiler = Transpiler::new(&cache).map_err(|e| RuntimeError::io(&cache, e))?;
        let stop = StopOnDrop::default();

        // The reader (as the tool's user) hands sources one by one to the transpiler (as
        // the host), so at most a few files are in memory at once.
        let (tx, rx) = std::sync::mpsc::sync_channel(2);
        let flag = stop.flag();
        let reader = launcher.tool_user(user)?;
        // The folder itself is opened as the host, as the sandbox mounts it: the tool's
        // uid need not be able to reach it through the host's directories (a root under
        // /root, a 0700 temporary directory), only to read what lies beneath it.
        let folder = ToolFolder::open(dir).map_err(RuntimeError::Transpile)?;
        let read = tool_user::run_as("toolhost-read", reader, move || {
            let modules = folder.modules(&flag)?;
            read_sources(&folder, &modules, &flag, |source| tx.send(source).is_ok())?;
            Ok(modules)
        });
        let flag = stop.flag();
        let store = tool_user::run_as("toolhost-transpile", None, move || {
            transpiler.store(rx, &flag)
        });
        let (read, stored) = tokio::join!(read, store);
        let read = read.map_err(|why| {
            RuntimeError::WorkerStart(format!(
                "cannot read {} as the tool's user: {why}",
                dir.display()
            ))
        })?;
        // The transpiler fails only on a file read before any read error: its error
        // comes first (and a reader left without a transpiler just stops).
        stored
            .map_err(RuntimeError::WorkerStart)?
            .map_err(RuntimeError::Transpile)?;
        let modules = read.map_err(RuntimeError::Transpile)?;

        let version = self.versions.remember(dir, modules);
        if let Ok(mut p) = self.prepared.lock() {
            if p.len() > 10_000 {
                p.clear();
            }
            p.insert(key, version.clone());
        }
        Ok(version)
    }

    /// `dir`'s code version when it was last prepared, if none of its files changed since
    /// (one `fstat` per module file; no directory walk).
    pub(crate) fn current_version(&self, dir: &Path) -> Option<String> {
        self.versions.unchanged(dir)
    }

    /// Makes the next call of `dir` for `user` check the cache again (a load failed: the
    /// cache may have been cleared).
    pub(crate) fn forget(&self, dir: &Path, user: &str) {
        if let Ok(mut p) = self.prepared.lock() {
            p.remove(&(user.to_string(), dir.to_path_buf()));
        }
    }
}
