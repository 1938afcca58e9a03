//! The TOOL.md format: parsing, validation, input schemas and entry-file lints.
//!
//! This is the bottom layer of Toolhost. It reads bytes and reports findings; it never
//! runs a tool and never panics on any input. See `ARCHITECTURE.md` for the layers above.

#![warn(missing_docs, unreachable_pub)]

mod diagnostic;
mod folder;
mod frontmatter;
mod lint;
mod manifest;
pub mod names;
mod parse;
pub mod seconds;
mod yaml;

pub use diagnostic::{Code, Diagnostic, LineIndex, Position, Severity};
pub use folder::{Entry, FolderReport, LoadOptions, TOOL_MD, inspect_folder, load_folder};
pub use lint::{error_offset, lint_entry};
pub use manifest::{Input, InputType, Language, ToolManifest};
pub use parse::{Parsed, parse_tool_md, peek_version};
