//! Loading one tool folder for the catalog.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use toolhost_spec::{Diagnostic, LoadOptions, TOOL_MD, inspect_folder};

use crate::{ContentHash, Root, RootOrigin, Tool, is_real_dir};

/// What the catalog keeps per tool folder.
#[derive(Debug, Clone)]
pub(crate) struct FolderEntry {
    pub hash: ContentHash,
    pub diagnostics: Vec<Diagnostic>,
    pub tool: Option<Arc<Tool>>,
}

/// Reads TOOL.md (only: entry files load lazily, on first call) and checks the entry exists.
pub(crate) fn load(root: &Path, root_index: usize, dir: &Path) -> FolderEntry {
    let bytes = std::fs::read(dir.join(TOOL_MD));
    let mut report = inspect_folder(
        dir,
        bytes
            .as_deref()
            .map_err(|e| std::io::Error::new(e.kind(), e.to_string())),
        LoadOptions::default(),
    );
    let hash = ContentHash::of_definition(
        bytes.as_deref().unwrap_or_default(),
        report.entry.as_ref().map(|e| e.file_name),
    );
    let tool = report.take_tool().map(|(manifest, entry)| {
        Arc::new(Tool {
            manifest,
            entry,
            dir: dir.to_path_buf(),
            root: root.to_path_buf(),
            root_index,
            hash,
            input_schema: OnceLock::new(),
        })
    });
    FolderEntry {
        hash,
        diagnostics: report.diagnostics,
        tool,
    }
}

/// One tool folder outside any catalog (a fleet runner's copy of a bundle): the tool, or
/// why the folder is not one.
pub fn load_tool(root: &Path, dir: &Path) -> Result<Arc<Tool>, Vec<Diagnostic>> {
    let entry = load(root, 0, dir);
    entry.tool.ok_or(entry.diagnostics)
}

/// [`list_tool_dirs`] of a root that may be listed: see [`followable`].
pub(crate) fn list_root(root: &Root) -> std::io::Result<Vec<(String, PathBuf)>> {
    followable(root)?;
    list_tool_dirs(&root.path)
}

/// A user's own tools folder (`DATA_PATH/EMAIL/tools`) lies in a home that user's tools
/// can write, so it is read only when it is a folder itself: a link there could show
/// another user's tools. Other roots are the operator's and may be links.
pub(crate) fn followable(root: &Root) -> std::io::Result<()> {
    let user_root = matches!(root.origin, RootOrigin::DataUser { .. });
    // A missing root is reported as such by the listing.
    if user_root && root.path.symlink_metadata().is_ok() && !is_real_dir(&root.path) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a folder (a link?); a user's tools folder is never followed",
        ));
    }
    Ok(())
}

/// The immediate subfolders of a root that may be tools, sorted by name. Hidden folders
/// (including sync's temporary ones) are not tools.
pub(crate) fn list_tool_dirs(root: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // file_type() does not follow symlinks; a symlinked tool folder is still a folder.
        let is_dir = match entry.file_type() {
            Ok(t) if t.is_dir() => true,
            Ok(t) if t.is_symlink() => path.is_dir(),
            _ => false,
        };
        if is_dir {
            dirs.push((name, path));
        }
    }
    dirs.sort();
    Ok(dirs)
}
