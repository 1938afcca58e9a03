//! `toolhost check`: every diagnostic for a set of tool folders, entry lints included.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;
use toolhost_spec::{Code, Diagnostic, Language, LoadOptions, Severity, TOOL_MD, load_folder};

use crate::catalog::{duplicate_diagnostics, unreadable_root};
use crate::folder::list_tool_dirs;

/// One folder that was checked.
#[derive(Debug, Clone, Serialize)]
pub struct CheckedFolder {
    /// The tool's name when TOOL.md parsed far enough to tell.
    pub name: Option<String>,
    /// The folder.
    pub path: PathBuf,
    /// True when the folder defines a usable tool (no errors).
    pub ok: bool,
}

/// What `toolhost check` found, for printing as text or JSON.
#[derive(Debug, Default, Serialize)]
pub struct CheckReport {
    /// Every folder looked at, in order.
    pub folders: Vec<CheckedFolder>,
    /// Every finding across them, entry-file lints and duplicate names included.
    pub diagnostics: Vec<Diagnostic>,
}

impl CheckReport {
    /// True when any finding is an error, which makes `check` exit non-zero.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// True when `path` looks like one tool folder rather than a root of them.
pub fn is_tool_folder(path: &Path) -> bool {
    path.join(TOOL_MD).exists()
        || Language::ALL
            .iter()
            .flat_map(|l| l.entry_candidates())
            .any(|f| path.join(f).is_file())
}

/// Checks one tool folder. Named explicitly, a folder without TOOL.md is an error.
pub fn check_folder(dir: &Path) -> CheckReport {
    let mut report = CheckReport::default();
    let mut folder = load_folder(dir, LoadOptions { lint: true });
    for d in &mut folder.diagnostics {
        if d.code == Code::ToolMdMissing {
            d.severity = Severity::Error;
            d.message = "no TOOL.md: a tool folder needs TOOL.md next to its entry file".into();
        }
    }
    report.folders.push(CheckedFolder {
        name: folder.manifest.as_ref().map(|m| m.name.clone()),
        path: dir.to_path_buf(),
        ok: folder.tool().is_some(),
    });
    let missing = missing_programs(dir, folder.manifest.as_ref());
    report.diagnostics.extend(folder.diagnostics);
    report.diagnostics.extend(missing);
    report
}

/// Where tool processes look for a program named without a directory (the runtime's
/// `PATH` for tools, inside the sandbox as out of it: the sandbox shows the host's `/usr`).
const TOOL_PATH: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

/// A warning for each program in `programs` that the tools' `PATH` lacks on this host.
fn missing_programs(dir: &Path, manifest: Option<&toolhost_spec::ToolManifest>) -> Vec<Diagnostic> {
    let Some(m) = manifest else {
        return Vec::new();
    };
    m.programs
        .iter()
        .filter(|p| !TOOL_PATH.iter().any(|d| is_executable(&Path::new(d).join(p))))
        .map(|p| {
            let hint = match debian_package(p) {
                Some(pkg) => format!(" (Debian: `apt-get install {pkg}`)"),
                None => String::new(),
            };
            Diagnostic::warning(
                dir.join(TOOL_MD),
                None,
                Code::ProgramMissing,
                format!(
                    "`{}` runs `{p}`, which is not installed on this host (not in {}): its calls will fail{hint}",
                    m.name,
                    TOOL_PATH.join(":")
                ),
            )
        })
        .collect()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The Debian package of a program the standard tools run.
fn debian_package(program: &str) -> Option<&'static str> {
    Some(match program {
        "ffmpeg" | "ffprobe" => "ffmpeg",
        "tesseract" => "tesseract-ocr",
        "pdftotext" | "pdftoppm" | "pdfinfo" | "pdfimages" => "poppler-utils",
        "sqlite3" => "sqlite3",
        "chromium" => "chromium",
        _ => return None,
    })
}

/// Checks every tool folder of a root, plus names defined twice in it.
pub fn check_root(root: &Path) -> CheckReport {
    let mut report = CheckReport::default();
    let dirs = match list_tool_dirs(root) {
        Ok(dirs) => dirs,
        Err(e) => {
            report.diagnostics.push(unreadable_root(root, &e));
            return report;
        }
    };
    let loaded: Vec<_> = dirs
        .into_par_iter()
        .map(|(_, dir)| (load_folder(&dir, LoadOptions { lint: true }), dir))
        .collect();
    let mut by_name: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for (folder, dir) in loaded {
        if let Some((m, _)) = folder.tool() {
            by_name.entry(m.name.clone()).or_default().push(dir.clone());
        }
        add_folder(&mut report, &dir, folder);
    }
    for (name, dirs) in by_name.iter().filter(|(_, d)| d.len() > 1) {
        let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
        report
            .diagnostics
            .extend(duplicate_diagnostics(name, &dirs));
        for f in report
            .folders
            .iter_mut()
            .filter(|f| dirs.contains(&f.path.as_path()))
        {
            f.ok = false;
        }
    }
    report
        .diagnostics
        .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    report
}

fn add_folder(report: &mut CheckReport, dir: &Path, folder: toolhost_spec::FolderReport) {
    let is_tool = folder
        .diagnostics
        .iter()
        .all(|d| d.code != Code::ToolMdMissing);
    if is_tool {
        report.folders.push(CheckedFolder {
            name: folder.manifest.as_ref().map(|m| m.name.clone()),
            path: dir.to_path_buf(),
            ok: folder.tool().is_some(),
        });
    }
    let missing = missing_programs(dir, folder.manifest.as_ref());
    report.diagnostics.extend(folder.diagnostics);
    report.diagnostics.extend(missing);
}
