//! Lints for the seed's "Common mistakes", on a real JavaScript/TypeScript syntax tree.
//!
//! The entry file is parsed with oxc (as an ES module first, as CommonJS if that fails)
//! and checked with oxc's semantic analysis, so every finding comes from the syntax tree
//! and scope information, never from matching text:
//!
//! - [`exports`] finds the named `execute` export (or why there is none),
//! - [`globals`] walks the whole file for Bun APIs, CommonJS exports and CLI entry points,
//! - [`execute_body`] looks inside `execute` for console output and unprotected throws.

mod execute_body;
mod exports;
mod globals;
#[cfg(test)]
mod tests;

use std::path::Path;

use oxc_allocator::Allocator;
use oxc_ast::ast::Program;
use oxc_parser::Parser;
use oxc_semantic::{Scoping, SemanticBuilder};
use oxc_span::SourceType;

use crate::diagnostic::{Code, Diagnostic, LineIndex, Position};

use self::exports::{DefaultKind, ExportFacts};
use self::globals::Globals;

/// The signature every entry file must export, as shown in messages.
const EXECUTE_SIGNATURE: &str =
    "`export async function execute(toolCallId, params, signal, onUpdate)`";

/// Stack for the linting thread: oxc's parser and the AST walks recurse once per nesting
/// level, so deeply nested sources need more than a default thread stack. The stack is only
/// reserved address space; pages are committed as they are used.
const STACK_BASE: usize = 16 << 20;
const STACK_PER_SOURCE_BYTE: usize = 2 << 10;
const STACK_MAX: usize = 512 << 20;

/// Reported instead of propagating a panic from the parser or semantic analysis.
const ANALYSIS_FAILED: &str = "the entry file could not be analysed: the JavaScript parser failed on it; check it with `node --check`";

impl Diagnostic {
    /// Whether this finding stands for a panic inside the linter rather than for anything
    /// in the file: the user still gets a finding, but tests must tell the two apart, or
    /// "the linter survives any text" could never fail.
    pub fn is_analysis_failure(&self) -> bool {
        self.code == Code::EntrySyntax && self.message == ANALYSIS_FAILED
    }
}

/// Parses an entry file with oxc and reports the seed's common mistakes.
///
/// Runs on its own thread with a stack sized for the source, so deep nesting does not
/// overflow the caller's stack and a panic inside oxc becomes a diagnostic.
pub fn lint_entry(path: &Path, source: &str, typescript: bool) -> Vec<Diagnostic> {
    let stack = STACK_BASE
        .saturating_add(source.len().saturating_mul(STACK_PER_SOURCE_BYTE))
        .min(STACK_MAX);
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("toolhost-lint".to_string())
            .stack_size(stack)
            .spawn_scoped(scope, || lint_source(path, source, typescript))
            .map(std::thread::ScopedJoinHandle::join)
    });
    match outcome {
        Ok(Ok(diagnostics)) => diagnostics,
        Ok(Err(_panic)) => vec![Diagnostic::error(
            path,
            Some(Position::START),
            Code::EntrySyntax,
            ANALYSIS_FAILED,
        )],
        // No thread available: lint on the caller's stack.
        Err(_spawn_error) => lint_source(path, source, typescript),
    }
}

fn lint_source(path: &Path, source: &str, typescript: bool) -> Vec<Diagnostic> {
    let index = LineIndex::new(source);
    let allocator = Allocator::default();
    let mut diagnostics = match parse(&allocator, source, typescript) {
        Ok((program, scoping)) => Linter {
            path,
            index: &index,
        }
        .run(program, &scoping),
        Err(errors) => errors
            .into_iter()
            .map(|e| {
                let position = e
                    .offset
                    .map_or(Position::START, |offset| index.position(offset as usize));
                Diagnostic::error(path, Some(position), Code::EntrySyntax, e.message)
            })
            .collect(),
    };
    diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    diagnostics
}

/// Where an oxc error points: the label oxc marks primary, else the label that starts
/// latest. oxc lists context first in many errors (the first declaration of a redeclared
/// name, the opening bracket), and reads left to right, so the error was found at the
/// latest label: a redeclaration points at the second `let`, not the valid first one.
pub fn error_offset(labels: &[oxc_span::LabeledSpan]) -> Option<u32> {
    labels
        .iter()
        .find(|l| l.primary())
        .or_else(|| labels.iter().max_by_key(|l| l.offset()))
        .map(oxc_span::LabeledSpan::offset)
}

/// One syntax error: where it points (see [`error_offset`]) and oxc's message.
struct SyntaxError {
    offset: Option<u32>,
    message: String,
}

/// Parses as an ES module (the normal case for an entry file); when that fails, retries as
/// CommonJS (sloppy mode, top-level `return`), and reports the module errors if both fail.
fn parse<'a>(
    allocator: &'a Allocator,
    source: &'a str,
    typescript: bool,
) -> Result<(&'a Program<'a>, Scoping), Vec<SyntaxError>> {
    let language = if typescript {
        SourceType::ts()
    } else {
        SourceType::mjs()
    };
    match parse_as(allocator, source, language.with_module(true)) {
        Ok(parsed) => Ok(parsed),
        Err(module_errors) => {
            parse_as(allocator, source, language.with_commonjs(true)).map_err(|_| module_errors)
        }
    }
}

/// Parses and runs semantic analysis (scopes, references and the syntax errors oxc only
/// detects there, such as redeclared `let`s). `Err` when either reports an error.
fn parse_as<'a>(
    allocator: &'a Allocator,
    source: &'a str,
    source_type: SourceType,
) -> Result<(&'a Program<'a>, Scoping), Vec<SyntaxError>> {
    let parsed = Parser::new(allocator, source, source_type).parse();
    if parsed.panicked || parsed.diagnostics.has_errors() {
        let mut errors: Vec<SyntaxError> = parsed
            .diagnostics
            .errors()
            .map(|d| SyntaxError {
                offset: error_offset(&d.labels),
                message: d.message.to_string(),
            })
            .collect();
        if errors.is_empty() {
            errors.push(SyntaxError {
                offset: None,
                message: "the file could not be parsed".to_string(),
            });
        }
        return Err(errors);
    }
    let program: &'a Program<'a> = allocator.alloc(parsed.program);
    let built = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .build(program);
    if built.diagnostics.has_errors() {
        return Err(built
            .diagnostics
            .errors()
            .map(|d| SyntaxError {
                offset: error_offset(&d.labels),
                message: d.message.to_string(),
            })
            .collect());
    }
    Ok((program, built.semantic.into_scoping()))
}

struct Linter<'p> {
    path: &'p Path,
    index: &'p LineIndex<'p>,
}

impl Linter<'_> {
    fn at(&self, offset: u32) -> Option<Position> {
        Some(self.index.position(offset as usize))
    }

    fn error(&self, offset: Option<u32>, code: Code, message: String) -> Diagnostic {
        let position = offset.map_or(Some(Position::START), |o| self.at(o));
        Diagnostic::error(self.path, position, code, message)
    }

    fn warning(&self, offset: u32, code: Code, message: String) -> Diagnostic {
        Diagnostic::warning(self.path, self.at(offset), code, message)
    }

    fn run(&self, program: &Program<'_>, scoping: &Scoping) -> Vec<Diagnostic> {
        let exports = exports::scan(program);
        let globals = globals::scan(program, scoping);
        let mut out = Vec::new();

        for bun in &globals.bun {
            out.push(self.error(Some(bun.offset), Code::BunApi, bun.message.clone()));
        }

        let mut cli_folded = false;
        if !exports.has_execute && !exports.star {
            let (offset, message, folds_cli) = missing_execute(&exports, &globals);
            cli_folded = folds_cli;
            out.push(self.error(offset, Code::ExecuteMissing, message));
        }
        for cli in globals.cli.iter().skip(usize::from(cli_folded)) {
            out.push(self.warning(
                cli.offset,
                Code::CliEntry,
                format!(
                    "this CLI entry point (`{}`) never runs inside Toolhost, which only calls `execute`; \
                     move the work into `execute` and remove the check",
                    cli.text
                ),
            ));
        }

        if let Some(function) = &exports.execute_fn {
            let body = execute_body::scan(function, scoping);
            if let Some(console) = body.first_console.as_ref().filter(|_| !body.returns_value) {
                out.push(self.error(
                    Some(console.offset),
                    Code::ConsoleOutput,
                    format!(
                        "`{}` output never reaches the agent and `execute` returns nothing; \
                         return `{{ content: [{{ type: 'text', text }}] }}` instead",
                        console.callee
                    ),
                ));
            }
            for &offset in &body.unprotected_throws {
                out.push(
                    self.warning(
                        offset,
                        Code::ThrowInExecute,
                        "`execute` throws here: the agent gets a generic error it cannot act on; \
                     return `{ content: [...], isError: true }` instead"
                            .to_string(),
                    ),
                );
            }
        }
        out
    }
}

/// Where to point and what to say when there is no named `execute` export, from the most
/// to the least specific finding. The flag is set when the message is about a CLI entry.
fn missing_execute(
    exports: &ExportFacts<'_, '_>,
    globals: &Globals,
) -> (Option<u32>, String, bool) {
    let commonjs = globals
        .commonjs
        .iter()
        .find(|c| c.exports_execute)
        .or_else(|| globals.commonjs.first());
    if let Some(cjs) = commonjs.filter(|c| c.exports_execute) {
        return (Some(cjs.offset), commonjs_message(&cjs.text), false);
    }
    if let Some(class) = &exports.class_export {
        let message = format!(
            "no named `execute` export: found the class pattern `{}`; \
             export `async function execute(toolCallId, params, signal, onUpdate)` instead",
            class.text
        );
        return (Some(class.offset), message, false);
    }
    if let Some(cjs) = commonjs {
        return (Some(cjs.offset), commonjs_message(&cjs.text), false);
    }
    if let Some((default, kind)) = &exports.default_export {
        let text = &default.text;
        let message = match kind {
            DefaultKind::Function => format!(
                "no named `execute` export: found the default export `{text}`; name it `execute` instead: \
                 {EXECUTE_SIGNATURE}"
            ),
            DefaultKind::Identifier(name) => format!(
                "no named `execute` export: found the default export `{text}`; export it by name instead: \
                 `export {{ {name} as execute }}`"
            ),
            DefaultKind::Other => format!(
                "no named `execute` export: found the default export `{text}`, but Toolhost calls the named \
                 export `execute`; use {EXECUTE_SIGNATURE}"
            ),
        };
        return (Some(default.offset), message, false);
    }
    if let Some(cli) = globals.cli.first() {
        let message = format!(
            "no named `execute` export: found the CLI entry point `{}`, which never runs inside Toolhost; \
             export `async function execute(toolCallId, params, signal, onUpdate)` instead",
            cli.text
        );
        return (Some(cli.offset), message, true);
    }
    let message = format!(
        "no named `execute` export: Toolhost calls `execute` on every tool call; \
         add {EXECUTE_SIGNATURE} returning `{{ content: [{{ type: 'text', text }}] }}`"
    );
    (None, message, false)
}

fn commonjs_message(text: &str) -> String {
    format!(
        "no named `execute` export: found the CommonJS export `{text}`, which Toolhost does not load; \
         use {EXECUTE_SIGNATURE} instead"
    )
}
