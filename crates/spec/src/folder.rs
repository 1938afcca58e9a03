//! One tool folder: TOOL.md, the entry file next to it, and (for `check`) the lints.

use std::io;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Code, Diagnostic};
use crate::lint::lint_entry;
use crate::manifest::{Language, ToolManifest};
use crate::parse::parse_tool_md;

/// The file that makes a folder a tool folder.
pub const TOOL_MD: &str = "TOOL.md";

/// The entry file the runtime loads on a tool's first call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Full path of the entry file.
    pub path: PathBuf,
    /// `index.ts`, `index.js`, `index.py` or `index.sh`.
    pub file_name: &'static str,
}

/// How thoroughly [`load_folder`] and [`inspect_folder`] look at a folder.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Also run the checks that need more than TOOL.md: the entry file's "common mistakes"
    /// lints, and the warning when both index.ts and index.js exist. Discovery leaves this
    /// off: it reads TOOL.md only (entry files load lazily on first call) and stats just
    /// enough to find the entry.
    pub lint: bool,
}

/// Everything known about one folder after reading it.
#[derive(Debug, Clone)]
pub struct FolderReport {
    /// The folder that was read.
    pub dir: PathBuf,
    /// Present when TOOL.md parsed without errors.
    pub manifest: Option<ToolManifest>,
    /// The entry file, when one exists for the manifest's language.
    pub entry: Option<Entry>,
    /// Every finding about TOOL.md, the entry file and the folder.
    pub diagnostics: Vec<Diagnostic>,
}

impl FolderReport {
    /// The tool, when the folder defines a usable one (no errors anywhere).
    pub fn tool(&self) -> Option<(&ToolManifest, &Entry)> {
        if self.has_errors() {
            return None;
        }
        Some((self.manifest.as_ref()?, self.entry.as_ref()?))
    }

    /// Like [`FolderReport::tool`], but takes the parts out, leaving the diagnostics.
    pub fn take_tool(&mut self) -> Option<(ToolManifest, Entry)> {
        if self.has_errors() || self.manifest.is_none() || self.entry.is_none() {
            return None;
        }
        Some((self.manifest.take()?, self.entry.take()?))
    }

    /// True when any finding keeps the tool out.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Reads `dir/TOOL.md` and inspects the folder.
pub fn load_folder(dir: &Path, opts: LoadOptions) -> FolderReport {
    let bytes = std::fs::read(dir.join(TOOL_MD));
    inspect_folder(dir, bytes.as_deref().map_err(clone_err), opts)
}

fn clone_err(e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), e.to_string())
}

/// Inspects a folder whose TOOL.md bytes the caller already read (the catalog hashes them).
pub fn inspect_folder(
    dir: &Path,
    tool_md: Result<&[u8], io::Error>,
    opts: LoadOptions,
) -> FolderReport {
    let md_path = dir.join(TOOL_MD);
    let mut report = FolderReport {
        dir: dir.to_path_buf(),
        manifest: None,
        entry: None,
        diagnostics: Vec::new(),
    };
    let bytes = match tool_md {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            report.diagnostics.push(Diagnostic::warning(
                dir,
                None,
                Code::ToolMdMissing,
                "no TOOL.md here, so this folder is not a tool (skipped)",
            ));
            return report;
        }
        Err(e) => {
            report.diagnostics.push(Diagnostic::error(
                &md_path,
                None,
                Code::ToolMdUnreadable,
                format!("cannot read TOOL.md: {e}"),
            ));
            return report;
        }
    };
    let parsed = parse_tool_md(&md_path, bytes);
    report.diagnostics = parsed.diagnostics;
    let Some(manifest) = parsed.manifest else {
        return report;
    };
    report.entry = resolve_entry(dir, manifest.language, opts.lint, &mut report.diagnostics);
    if opts.lint
        && let Some(entry) = &report.entry
    {
        lint_file(entry, &mut report.diagnostics);
    }
    report.manifest = Some(manifest);
    report
}

fn resolve_entry(
    dir: &Path,
    language: Language,
    all: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Entry> {
    let exists = |name: &&str| dir.join(name).is_file();
    let found: Vec<&'static str> = if all {
        language
            .entry_candidates()
            .iter()
            .copied()
            .filter(exists)
            .collect()
    } else {
        language
            .entry_candidates()
            .iter()
            .copied()
            .find(exists)
            .into_iter()
            .collect()
    };
    match found.as_slice() {
        [] => {
            let expected = language.entry_candidates().join(" or ");
            let other = Language::ALL
                .iter()
                .filter(|l| **l != language)
                .flat_map(|l| l.entry_candidates().iter().map(move |f| (l, f)))
                .find(|(_, f)| dir.join(f).is_file());
            let hint = match other {
                Some((l, f)) => format!(" ({f} exists: did you mean `language: {}`?)", l.as_str()),
                None => String::new(),
            };
            diagnostics.push(Diagnostic::error(
                dir,
                None,
                Code::EntryMissing,
                format!(
                    "no entry file: a {} tool needs {expected}{hint}",
                    language.as_str()
                ),
            ));
            None
        }
        [first, rest @ ..] => {
            if !rest.is_empty() {
                diagnostics.push(Diagnostic::warning(
                    dir.join(rest[0]),
                    None,
                    Code::EntryAmbiguous,
                    format!(
                        "both {first} and {} exist: {first} is the entry and {} is ignored",
                        rest[0], rest[0]
                    ),
                ));
            }
            Some(Entry {
                path: dir.join(first),
                file_name: first,
            })
        }
    }
}

fn lint_file(entry: &Entry, diagnostics: &mut Vec<Diagnostic>) {
    let typescript = match entry.file_name {
        "index.ts" => true,
        "index.js" => false,
        _ => return,
    };
    match std::fs::read(&entry.path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(source) => diagnostics.extend(lint_entry(&entry.path, &source, typescript)),
            Err(_) => diagnostics.push(Diagnostic::error(
                &entry.path,
                None,
                Code::NotUtf8,
                "entry file is not valid UTF-8",
            )),
        },
        Err(e) => diagnostics.push(Diagnostic::error(
            &entry.path,
            None,
            Code::EntryUnreadable,
            format!("cannot read the entry file: {e}"),
        )),
    }
}
