//! Compiler-style diagnostics: `PATH:LINE:COL: severity[code]: message`.
//!
//! Codes are part of the public interface (scripts match on them), so they live in one
//! enum with a fixed spelling and are never renamed.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How bad a diagnostic is. Any error keeps a tool out of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)*) => {
        /// A stable identifier for each kind of diagnostic.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $($(#[$doc])* $variant,)* }

        impl Code {
            /// Every code, in declaration order (for documentation and tests).
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $text,)* }
            }
        }
    };
}

codes! {
    // TOOL.md structure
    ToolMdMissing = "tool-md-missing",
    ToolMdUnreadable = "tool-md-unreadable",
    NotUtf8 = "not-utf8",
    FrontmatterMissing = "frontmatter-missing",
    FrontmatterUnclosed = "frontmatter-unclosed",
    YamlSyntax = "yaml-syntax",
    FrontmatterNotMapping = "frontmatter-not-mapping",
    FieldUnknown = "field-unknown",
    FieldType = "field-type",
    BodyEmpty = "body-empty",
    // fields
    NameMissing = "name-missing",
    NameInvalid = "name-invalid",
    NameNotSnakeCase = "name-not-snake-case",
    DescriptionMissing = "description-missing",
    VersionMissing = "version-missing",
    VersionInvalid = "version-invalid",
    LanguageUnknown = "language-unknown",
    // inputs
    InputInvalid = "input-invalid",
    InputNameInvalid = "input-name-invalid",
    InputTypeMissing = "input-type-missing",
    InputTypeUnknown = "input-type-unknown",
    InputTypeUnsupported = "input-type-unsupported",
    InputDescriptionMissing = "input-description-missing",
    EnumValuesMissing = "enum-values-missing",
    EnumValuesDuplicate = "enum-values-duplicate",
    ValuesIgnored = "values-ignored",
    DefaultInvalid = "default-invalid",
    DefaultCoerced = "default-coerced",
    DefaultOnRequired = "default-on-required",
    // entry file
    EntryMissing = "entry-missing",
    EntryAmbiguous = "entry-ambiguous",
    EntryUnreadable = "entry-unreadable",
    EntrySyntax = "entry-syntax",
    ExecuteMissing = "execute-missing",
    CliEntry = "cli-entry",
    BunApi = "bun-api",
    ConsoleOutput = "console-output",
    ThrowInExecute = "throw-in-execute",
    // catalog
    DuplicateName = "duplicate-name",
    RootUnreadable = "root-unreadable",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A 1-based line and column (columns count Unicode scalar values, like most editors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl Position {
    pub const START: Position = Position { line: 1, column: 1 };

    pub fn new(line: usize, column: usize) -> Position {
        Position {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }
}

/// One finding about one file or folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub path: PathBuf,
    /// `None` when the finding is about a whole folder or a file that does not exist.
    #[serde(flatten)]
    pub position: Option<Position>,
    pub severity: Severity,
    pub code: Code,
    pub message: String,
}

impl Diagnostic {
    pub fn error(
        path: impl Into<PathBuf>,
        position: Option<Position>,
        code: Code,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            path: path.into(),
            position,
            severity: Severity::Error,
            code,
            message: message.into(),
        }
    }

    pub fn warning(
        path: impl Into<PathBuf>,
        position: Option<Position>,
        code: Code,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            path: path.into(),
            position,
            severity: Severity::Warning,
            code,
            message: message.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Sort key that puts a file's findings in reading order.
    pub fn sort_key(&self) -> (&Path, Option<Position>, Severity, Code) {
        (&self.path, self.position, self.severity, self.code)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(p) = self.position {
            write!(f, ":{}:{}", p.line, p.column)?;
        }
        write!(f, ": {}[{}]: {}", self.severity, self.code, self.message)
    }
}

/// Maps byte offsets in a source text to [`Position`]s.
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    /// Position of a byte offset; offsets past the end or inside a character clamp safely.
    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self
            .line_starts
            .partition_point(|&start| start <= offset)
            .max(1);
        let start = self.line_starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or_else(|| {
                String::from_utf8_lossy(&self.text.as_bytes()[start..offset])
                    .chars()
                    .count()
            });
        Position::new(line, column + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_maps_offsets() {
        let idx = LineIndex::new("ab\ncdé\nf");
        assert_eq!(idx.position(0), Position::new(1, 1));
        assert_eq!(idx.position(2), Position::new(1, 3));
        assert_eq!(idx.position(3), Position::new(2, 1));
        assert_eq!(idx.position(7), Position::new(2, 4)); // after the 2-byte é
        assert_eq!(idx.position(8), Position::new(3, 1));
        assert_eq!(idx.position(99), Position::new(3, 2));
    }

    #[test]
    fn display_is_compiler_style() {
        let d = Diagnostic::error(
            "t/TOOL.md",
            Some(Position::new(3, 7)),
            Code::NameMissing,
            "boom",
        );
        assert_eq!(d.to_string(), "t/TOOL.md:3:7: error[name-missing]: boom");
        let d = Diagnostic::warning("t", None, Code::ToolMdMissing, "skipped");
        assert_eq!(d.to_string(), "t: warning[tool-md-missing]: skipped");
    }

    #[test]
    fn codes_are_unique_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "duplicate code {c}");
            assert!(
                c.as_str()
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch == '-' || ch.is_ascii_digit())
            );
        }
    }
}
