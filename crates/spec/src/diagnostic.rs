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
    /// Keeps the tool out of the catalog (or fails `check`).
    Error,
    /// Worth fixing; the tool is still served.
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

            /// The code's stable spelling, as printed and as scripts match on it.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $text,)* }
            }
        }
    };
}

codes! {
    // TOOL.md structure
    /// The folder has no TOOL.md; a warning in a root, an error for a folder named explicitly.
    ToolMdMissing = "tool-md-missing",
    /// TOOL.md exists but could not be read.
    ToolMdUnreadable = "tool-md-unreadable",
    /// A file is not UTF-8.
    NotUtf8 = "not-utf8",
    /// TOOL.md does not start with `---` frontmatter.
    FrontmatterMissing = "frontmatter-missing",
    /// The frontmatter has no closing `---`.
    FrontmatterUnclosed = "frontmatter-unclosed",
    /// Invalid YAML, a duplicate key, or nesting deeper than the parser allows.
    YamlSyntax = "yaml-syntax",
    /// The frontmatter is not `key: value` lines.
    FrontmatterNotMapping = "frontmatter-not-mapping",
    /// A key this version does not know; it is kept, not rejected.
    FieldUnknown = "field-unknown",
    /// A field has the wrong YAML type.
    FieldType = "field-type",
    /// No Markdown documentation for the agent to read.
    BodyEmpty = "body-empty",
    /// A program the tool lists in `programs` is not on the tools' `PATH` on this host.
    ProgramMissing = "program-missing",
    // fields
    /// No `name`.
    NameMissing = "name-missing",
    /// A `name` MCP clients and model providers would reject.
    NameInvalid = "name-invalid",
    /// A valid `name` that is not the seed's recommended snake_case.
    NameNotSnakeCase = "name-not-snake-case",
    /// No or blank `description`.
    DescriptionMissing = "description-missing",
    /// No `version`, so it counts as 0 and sync cannot tell versions apart.
    VersionMissing = "version-missing",
    /// A `version` that is not a non-negative integer.
    VersionInvalid = "version-invalid",
    /// A `language` other than typescript, python or bash.
    LanguageUnknown = "language-unknown",
    // inputs
    /// An entry under `inputs:` that is not a mapping.
    InputInvalid = "input-invalid",
    /// An input name model providers may reject.
    InputNameInvalid = "input-name-invalid",
    /// An input without `type`; it is treated as a string.
    InputTypeMissing = "input-type-missing",
    /// An input `type` this version does not know; it is treated as a string.
    InputTypeUnknown = "input-type-unknown",
    /// An `object` or `array` input, which the tool should accept as a JSON string instead.
    InputTypeUnsupported = "input-type-unsupported",
    /// An input without a description, so the agent will not know what to pass.
    InputDescriptionMissing = "input-description-missing",
    /// An enum input without `values`.
    EnumValuesMissing = "enum-values-missing",
    /// An enum value listed twice.
    EnumValuesDuplicate = "enum-values-duplicate",
    /// `values` on an input that is not an enum.
    ValuesIgnored = "values-ignored",
    /// A default not of the input's type, or not one of the enum's values.
    DefaultInvalid = "default-invalid",
    /// A default written as a string and read as a number or boolean.
    DefaultCoerced = "default-coerced",
    /// A default on an input that is not optional.
    DefaultOnRequired = "default-on-required",
    // entry file
    /// No entry file for the tool's language.
    EntryMissing = "entry-missing",
    /// Both index.ts and index.js exist; index.ts wins.
    EntryAmbiguous = "entry-ambiguous",
    /// The entry file exists but could not be read.
    EntryUnreadable = "entry-unreadable",
    /// The entry file does not parse.
    EntrySyntax = "entry-syntax",
    /// The entry file has no named `execute` export.
    ExecuteMissing = "execute-missing",
    /// A `require.main === module` block, which never runs in Toolhost.
    CliEntry = "cli-entry",
    /// A Bun API, which throws in Node.js.
    BunApi = "bun-api",
    /// `execute` logs its result instead of returning it.
    ConsoleOutput = "console-output",
    /// `execute` throws outside a `try`.
    ThrowInExecute = "throw-in-execute",
    // catalog
    /// Two folders of one root define the same tool name.
    DuplicateName = "duplicate-name",
    /// A tool root could not be listed.
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
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in Unicode scalar values.
    pub column: u32,
}

impl Position {
    /// Line 1, column 1: where a finding points when nothing more precise is known.
    pub(crate) const START: Position = Position { line: 1, column: 1 };

    /// A position from 1-based counts, saturating rather than wrapping on huge files.
    pub(crate) fn new(line: usize, column: usize) -> Position {
        Position {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }
}

/// One finding about one file or folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file or folder the finding is about.
    pub path: PathBuf,
    /// `None` when the finding is about a whole folder or a file that does not exist.
    #[serde(flatten)]
    pub position: Option<Position>,
    /// Whether the finding keeps the tool out.
    pub severity: Severity,
    /// What kind of finding it is, for scripts.
    pub code: Code,
    /// What is wrong, for people.
    pub message: String,
}

impl Diagnostic {
    /// An error-level finding: the tool is not served until it is fixed.
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

    /// A warning-level finding: the tool is still served.
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

    /// True when this finding keeps the tool out.
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
    /// Indexes the line starts of `text` once, so each lookup is a binary search.
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
