//! TypeScript → JavaScript for Node.js 20, in process, with oxc (no npm toolchain).
//!
//! Every TypeScript file of a tool folder is transpiled once into a content-addressed cache:
//! `<cache_dir>/<sha256 of the source bytes, lowercase hex>.js`. The runtime gives each user
//! a cache directory of their own, and reads tool folders only through [`ToolFolder`],
//! which never leaves the folder. The Node module hooks
//! (`node/hooks.mjs`) hash a `.ts` file they are asked to load and serve that entry under the
//! original file URL, so `import.meta.url` keeps pointing into the tool folder.
//!
//! What the output is:
//!
//! - an ES module with TypeScript syntax removed and nothing else lowered (Node.js 20 runs
//!   ES2022 natively), so no runtime helper is ever needed: no `@oxc-project/runtime` or
//!   `@babel/runtime` import appears;
//! - prefixed, when the module uses the CommonJS globals `__dirname`, `__filename` or
//!   `require` without declaring them, by one line that defines exactly those from
//!   `import.meta.url` (see [`PREAMBLE_PREFIX`]);
//! - followed by an inline source map whose `sources` is the file's name, which Node resolves
//!   against the module's own URL (the `.ts` file), so stack traces under
//!   `--enable-source-maps` show TypeScript lines. The map accounts for the preamble line.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    AccessorProperty, AccessorPropertyType, Decorator, IdentifierReference, Program,
    TSExportAssignment, VariableDeclaration,
};
use oxc_ast_visit::{Visit, walk};
use oxc_codegen::{Codegen, CodegenOptions};
use oxc_parser::Parser;
use oxc_semantic::{Scoping, SemanticBuilder, SymbolFlags};
use oxc_sourcemap::ConcatSourceMapBuilder;
use oxc_span::{GetSpan, SourceType, Span};
use oxc_transformer::{
    EnvOptions, HelperLoaderMode, HelperLoaderOptions, TransformOptions, Transformer,
    TypeScriptOptions,
};
use sha2::{Digest, Sha256};
use toolhost_spec::{LineIndex, error_offset};

use crate::tool_folder::{MAX_SOURCE_BYTES, Stamp, ToolFolder, Unread};

/// Names of the generated preamble's own bindings start with this; tool code should not
/// declare names with this prefix at the top level of a module.
pub const PREAMBLE_PREFIX: &str = "__toolhost_";

/// Stack for the transpiling thread: oxc's parser, transformer and printer recurse once per
/// nesting level. The stack is only reserved address space; pages are committed when used.
const STACK_BASE: usize = 16 << 20;
const STACK_PER_SOURCE_BYTE: usize = 2 << 10;
const STACK_MAX: usize = 512 << 20;

/// The first error of oxc's `Diagnostics`: where it points (as `toolhost check` says, by
/// [`error_offset`]), and its message.
/// (A macro: the diagnostics type lives in a crate this one does not name.)
macro_rules! first_error {
    ($diagnostics:expr) => {
        $diagnostics
            .errors()
            .next()
            .map(|d| (error_offset(&d.labels), d.message.to_string()))
    };
}

/// Why a TypeScript file could not be transpiled or cached. Each message is one line that
/// names the file (and the line:column where there is one).
#[derive(Debug, thiserror::Error)]
pub enum TranspileError {
    /// Reading a source, listing a folder or writing a cache entry failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// What went wrong underneath.
        source: io::Error,
    },
    /// The source is not valid TypeScript (first error only; 1-based line and column).
    #[error("{}:{line}:{column}: TypeScript syntax error: {message}", path.display())]
    Syntax {
        /// The file or folder concerned.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// oxc's message, on one line.
        message: String,
    },
    /// Valid TypeScript that Toolhost cannot turn into a Node.js 20 ES module.
    #[error("{}:{line}:{column}: unsupported TypeScript: {message}", path.display())]
    Unsupported {
        /// The file or folder concerned.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// oxc's message, on one line.
        message: String,
    },
    /// The file is not UTF-8 text.
    #[error("{}: not valid UTF-8 text: {source}", path.display())]
    Encoding {
        /// The file or folder concerned.
        path: PathBuf,
        /// What went wrong underneath.
        source: std::str::Utf8Error,
    },
    /// The file name does not end in `.ts`, `.mts`, `.cts` or `.tsx`.
    #[error("{}: not a TypeScript file (expected .ts, .mts, .cts or .tsx)", path.display())]
    NotTypeScript {
        /// The file or folder concerned.
        path: PathBuf,
    },
    /// oxc failed on this file (a bug in oxc, reported instead of crashing).
    #[error("{}: the TypeScript transpiler failed on this file: {message}", path.display())]
    Internal {
        /// The file or folder concerned.
        path: PathBuf,
        /// oxc's message, on one line.
        message: String,
    },
    /// A TypeScript file is a symbolic link that leads out of the tool folder.
    #[error(
        "{} is a symbolic link out of the tool folder: Toolhost reads a tool's code only inside its folder",
        path.display()
    )]
    OutsideFolder {
        /// The file or folder concerned.
        path: PathBuf,
    },
    /// The user the code is read as (the tool's own, on a root host) may not read it.
    #[error(
        "{}: the tool's user may not read this (a tool folder must be readable by other users: o+r for files, o+rx for folders)",
        path.display()
    )]
    Unreadable {
        /// The file or folder concerned.
        path: PathBuf,
    },
    /// A TypeScript name on a FIFO, socket, device or directory.
    #[error("{}: not a regular file", path.display())]
    NotAFile {
        /// The file or folder concerned.
        path: PathBuf,
    },
    /// A source file over [`MAX_SOURCE_BYTES`].
    #[error("{}: larger than {} MiB, the most Toolhost reads of one source file", path.display(), limit >> 20)]
    TooLarge {
        /// The file or folder concerned.
        path: PathBuf,
        /// The bound it exceeds.
        limit: u64,
    },
    /// A folder nested deeper than Toolhost searches.
    #[error(
        "{}: more than {limit} folders below the tool folder; Toolhost does not search that deep (keep dependencies in node_modules)",
        path.display()
    )]
    TooDeep {
        /// The file or folder concerned.
        path: PathBuf,
        /// The bound it exceeds.
        limit: usize,
    },
    /// More entries than Toolhost searches.
    #[error(
        "{}: more than {limit} files and folders outside node_modules and hidden folders; Toolhost does not search a tool folder that large",
        path.display()
    )]
    TooManyEntries {
        /// The file or folder concerned.
        path: PathBuf,
        /// The bound it exceeds.
        limit: usize,
    },
}

impl TranspileError {
    fn io(path: &Path, source: io::Error) -> Self {
        TranspileError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            TranspileError::Io { path, .. }
            | TranspileError::Syntax { path, .. }
            | TranspileError::Unsupported { path, .. }
            | TranspileError::Encoding { path, .. }
            | TranspileError::NotTypeScript { path }
            | TranspileError::Internal { path, .. }
            | TranspileError::OutsideFolder { path }
            | TranspileError::Unreadable { path }
            | TranspileError::NotAFile { path }
            | TranspileError::TooLarge { path, .. }
            | TranspileError::TooDeep { path, .. }
            | TranspileError::TooManyEntries { path, .. } => path,
        }
    }
}

/// Transpiles TypeScript files into a content-addressed cache directory.
#[derive(Debug, Clone)]
pub struct Transpiler {
    cache_dir: PathBuf,
}

impl Transpiler {
    /// A transpiler writing into `cache_dir`, which is created if missing.
    pub fn new(cache_dir: impl Into<PathBuf>) -> io::Result<Self> {
        let cache_dir = cache_dir.into();
        std::fs::create_dir_all(&cache_dir)?;
        Ok(Transpiler { cache_dir })
    }

    /// The cache directory entries are written to.
    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// Where the JavaScript for a source with these bytes is (or would be) cached:
    /// `<cache_dir>/<sha256 hex>.js`.
    pub fn cache_path(&self, source: &[u8]) -> PathBuf {
        self.cache_dir.join(format!("{}.js", sha256_hex(source)))
    }

    /// Transpiles one TypeScript source into an ES module for Node.js 20.
    ///
    /// `path` names the file in errors, selects the source type from its extension
    /// (`.ts`, `.mts`, `.cts`, `.tsx`; every one is compiled as an ES module), and its file
    /// name is the inline source map's `sources` entry.
    pub fn transpile(&self, path: &Path, source: &str) -> Result<String, TranspileError> {
        transpile_source(path, source)
    }

    /// Ensures every TypeScript file under `tool_dir` has its cache entry, and returns how
    /// many had to be transpiled (0 when all were cached already).
    ///
    /// Searches recursively, skipping `node_modules`, hidden directories and declaration
    /// files (`.d.ts`), without leaving the folder (see [`read_sources`]). Existing entries
    /// are never rewritten; new ones are written to a temporary file in the cache directory
    /// and renamed into place, so a reader sees either no entry or a complete one. Stops at
    /// the first file that fails.
    pub fn prepare_folder(&self, tool_dir: &Path) -> Result<usize, TranspileError> {
        let stop = AtomicBool::new(false);
        let folder = ToolFolder::open(tool_dir)?;
        let modules = folder.modules(&stop)?;
        let mut sources = Vec::new();
        read_sources(&folder, &modules, &stop, |source| {
            sources.push(source);
            true
        })?;
        self.store(sources, &stop)
    }

    /// Transpiles the sources whose entry is missing and writes them into the cache;
    /// returns how many it wrote. Stops early (with an error) once `stop` is set.
    pub fn store(
        &self,
        sources: impl IntoIterator<Item = Source>,
        stop: &AtomicBool,
    ) -> Result<usize, TranspileError> {
        let mut transpiled = 0;
        for Source { path, bytes } in sources {
            if stop.load(Ordering::Relaxed) {
                return Err(TranspileError::io(&path, io::ErrorKind::Interrupted.into()));
            }
            let target = self.cache_path(&bytes);
            if target.is_file() {
                continue;
            }
            let source =
                std::str::from_utf8(&bytes).map_err(|source| TranspileError::Encoding {
                    path: path.clone(),
                    source,
                })?;
            let js = match transpile_source(&path, source) {
                Ok(js) => js,
                // A .js file that is not an ES module (a CommonJS helper, say) is served
                // as it is; only TypeScript must compile.
                Err(_) if is_module_js(&path) => continue,
                Err(e) => return Err(e),
            };
            self.write_atomically(&target, js.as_bytes())?;
            transpiled += 1;
        }
        Ok(transpiled)
    }

    fn write_atomically(&self, target: &Path, contents: &[u8]) -> Result<(), TranspileError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = self.cache_dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let create = || {
            create_readable(&temp).or_else(|e| {
                // The cache directory was removed since `new` (a temp cleaner): recreate it.
                if e.kind() != io::ErrorKind::NotFound {
                    return Err(e);
                }
                std::fs::create_dir_all(&self.cache_dir)?;
                create_readable(&temp)
            })
        };
        let written = create()
            .and_then(|mut file| file.write_all(contents).and_then(|()| file.sync_all()))
            .and_then(|()| std::fs::rename(&temp, target));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(TranspileError::io(target, e));
        }
        Ok(())
    }
}

/// Lowercase hex SHA-256 of `bytes`: the cache key of a source.
fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Is this a file `prepare_folder` transpiles (TypeScript, not a declaration file)?
fn is_transpiled_file(path: &Path) -> bool {
    SourceType::from_path(path).is_ok_and(|t| t.is_typescript() && !t.is_typescript_definition())
        || is_module_js(path)
}

/// `.js` and `.mjs` files of a tool run as ES modules; they go through the same pipeline
/// (no TypeScript to strip) so that `__dirname`, `__filename` and `require` work in them.
fn is_module_js(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("js" | "mjs")
    )
}

/// A new file readable by everyone who may enter its directory, whatever the umask: the
/// cache directory itself decides who that is.
fn create_readable(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::PermissionsExt;
    let file = std::fs::File::create(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
    Ok(file)
}

/// One source file of a tool, as read.
#[derive(Debug)]
pub struct Source {
    /// The file's path (in the tool folder as given), for messages and the source map.
    pub path: PathBuf,
    /// Its contents.
    pub bytes: Vec<u8>,
}

/// Reads the files of `modules` that [`Transpiler::store`] transpiles, without leaving the
/// folder, and hands each to `sink` (one at a time, so a large folder is never held in
/// memory whole); stops early when `sink` returns false. A TypeScript file that cannot be
/// read is an error naming it (a link out of the folder among them); a JavaScript file
/// that cannot be read here is skipped: Node.js loads it as it is, inside the tool's
/// sandbox, which resolves it in the sandbox's view. A dangling link is skipped as well.
pub fn read_sources(
    folder: &ToolFolder,
    modules: &[(PathBuf, Stamp)],
    stop: &AtomicBool,
    mut sink: impl FnMut(Source) -> bool,
) -> Result<(), TranspileError> {
    for (rel, _) in modules {
        if !is_transpiled_file(rel) {
            continue;
        }
        let path = folder.path().join(rel);
        if stop.load(Ordering::Relaxed) {
            return Err(TranspileError::io(&path, io::ErrorKind::Interrupted.into()));
        }
        let why = match folder.read(rel) {
            Ok(bytes) => {
                if !sink(Source { path, bytes }) {
                    return Ok(());
                }
                continue;
            }
            Err(_) if is_module_js(rel) => continue,
            Err(Unread::Failed(e)) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(why) => why,
        };
        return Err(match why {
            Unread::Outside => TranspileError::OutsideFolder { path },
            Unread::Denied => TranspileError::Unreadable { path },
            Unread::NotAFile => TranspileError::NotAFile { path },
            Unread::TooLarge => TranspileError::TooLarge {
                path,
                limit: MAX_SOURCE_BYTES,
            },
            Unread::Failed(e) => TranspileError::io(&path, e),
        });
    }
    Ok(())
}

/// Runs [`transpile_inner`] on a thread with a stack sized for the source, so deeply nested
/// code cannot overflow the caller's stack, and a panic inside oxc becomes an error.
fn transpile_source(path: &Path, source: &str) -> Result<String, TranspileError> {
    let stack = STACK_BASE
        .saturating_add(source.len().saturating_mul(STACK_PER_SOURCE_BYTE))
        .min(STACK_MAX);
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("toolhost-transpile".to_string())
            .stack_size(stack)
            .spawn_scoped(scope, || transpile_inner(path, source))
            .map(std::thread::ScopedJoinHandle::join)
    });
    match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "internal error".to_string());
            Err(TranspileError::Internal {
                path: path.to_path_buf(),
                message: one_line(&message),
            })
        }
        // No thread available: transpile on the caller's stack.
        Err(_spawn_error) => transpile_inner(path, source),
    }
}

/// The options: TypeScript only, nothing lowered.
///
/// - `env` is empty: Node.js 20 supports ES2022 (class fields, private methods, static
///   blocks, top-level await, optional chaining, `??=`), so no syntax is lowered and no
///   runtime helper is ever referenced.
/// - `typescript` keeps oxc's defaults, the `isolatedModules` behaviour of `tsc`: imports
///   only used as types are elided, namespaces are compiled, enums (also `const enum`)
///   become objects so they work when imported by another file.
/// - decorators stay off (lowering them needs helpers); they are rejected with a clear
///   error instead (Node.js 20 cannot parse them).
/// - helpers, should any transform still ask for one, are `External` (a reference to a
///   global `babelHelpers`, never an import); [`transpile_inner`] rejects such output.
fn transform_options() -> TransformOptions {
    TransformOptions {
        typescript: TypeScriptOptions::default(),
        env: EnvOptions::default(),
        helper_loader: HelperLoaderOptions {
            mode: HelperLoaderMode::External,
            ..HelperLoaderOptions::default()
        },
        ..TransformOptions::default()
    }
}

fn transpile_inner(path: &Path, source: &str) -> Result<String, TranspileError> {
    let source_type = match SourceType::from_path(path) {
        Ok(t) if t.is_typescript() || is_module_js(path) => t.with_module(true),
        _ => {
            return Err(TranspileError::NotTypeScript {
                path: path.to_path_buf(),
            });
        }
    };
    // Errors point at a byte offset (see `first_error!`), shown as line:column.
    let index = LineIndex::new(source);
    let syntax = |offset: Option<u32>, message: &str| {
        let p = index.position(offset.map_or(0, |o| o as usize));
        TranspileError::Syntax {
            path: path.to_path_buf(),
            line: p.line,
            column: p.column,
            message: one_line(message),
        }
    };
    let unsupported = |offset: Option<u32>, message: &str| {
        let p = index.position(offset.map_or(0, |o| o as usize));
        TranspileError::Unsupported {
            path: path.to_path_buf(),
            line: p.line,
            column: p.column,
            message: one_line(message),
        }
    };

    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if parsed.panicked || parsed.diagnostics.has_errors() {
        let first = first_error!(parsed.diagnostics);
        return Err(match first {
            Some((offset, message)) => syntax(offset, &message),
            None => syntax(None, "the file could not be parsed"),
        });
    }
    let mut program = parsed.program;

    let mut checks = UnsupportedSyntax::default();
    checks.visit_program(&program);
    if let Some((span, message)) = checks.first {
        return Err(unsupported(Some(span.start), message));
    }

    let built = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .with_excess_capacity(2.0)
        .with_enum_eval(true)
        .build(&program);
    if built.diagnostics.has_errors() {
        let (offset, message) = first_error!(built.diagnostics)
            .unwrap_or((None, "the file could not be analysed".to_string()));
        return Err(syntax(offset, &message));
    }
    let scoping = built.semantic.into_scoping();

    let transformed = Transformer::new(&allocator, path, &transform_options())
        .build_with_scoping(scoping, &mut program);
    if transformed.diagnostics.has_errors() {
        let (offset, message) = first_error!(transformed.diagnostics)
            .unwrap_or((None, "the file could not be transformed".to_string()));
        return Err(unsupported(offset, &message));
    }

    let globals = CommonJsGlobals::find(&program, &transformed.scoping);
    if let Some(span) = globals.helper {
        return Err(unsupported(
            Some(span.start),
            "this syntax needs a runtime helper, which Toolhost does not provide",
        ));
    }
    // A hashbang must be a file's first line; a cached module has no use for it.
    program.hashbang = None;

    let file_name = path
        .file_name()
        .map_or_else(|| path.to_path_buf(), PathBuf::from);
    let printed = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(file_name),
            ..CodegenOptions::default()
        })
        .build(&program);

    let preamble = globals.preamble();
    let mut out = String::with_capacity(preamble.len() + printed.code.len() * 2 + 64);
    let mut line_offset = 0;
    if !preamble.is_empty() {
        out.push_str(&preamble);
        out.push('\n');
        line_offset = 1;
    }
    out.push_str(&printed.code);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if let Some(map) = printed.map {
        let url = if line_offset == 0 {
            map.to_data_url()
        } else {
            ConcatSourceMapBuilder::from_sourcemaps(&[(&map, line_offset)])
                .into_sourcemap()
                .to_data_url()
        };
        out.push_str("//# sourceMappingURL=");
        out.push_str(&url);
        out.push('\n');
    }
    Ok(out)
}

/// Messages are shown on one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Finds the first syntax Node.js 20 cannot run and Toolhost does not lower, before types
/// are removed (so `abstract` and `declare` members are still told apart).
#[derive(Default)]
struct UnsupportedSyntax {
    first: Option<(Span, &'static str)>,
}

impl UnsupportedSyntax {
    fn note(&mut self, span: Span, message: &'static str) {
        if self.first.is_none_or(|(first, _)| span.start < first.start) {
            self.first = Some((span, message));
        }
    }
}

impl<'a> Visit<'a> for UnsupportedSyntax {
    fn visit_decorator(&mut self, it: &Decorator<'a>) {
        self.note(
            it.span,
            "decorators are not supported (Node.js 20 cannot run them and Toolhost does not lower them); remove the decorator",
        );
    }

    fn visit_ts_export_assignment(&mut self, it: &TSExportAssignment<'a>) {
        self.note(
            it.span,
            "`export =` is CommonJS-only and tool modules are ES modules; use `export default` or named exports",
        );
        walk::walk_ts_export_assignment(self, it);
    }

    fn visit_variable_declaration(&mut self, it: &VariableDeclaration<'a>) {
        if it.kind.is_using() && !it.declare {
            self.note(
                it.span,
                "`using` declarations are not supported by Node.js 20; use try/finally",
            );
        }
        walk::walk_variable_declaration(self, it);
    }

    fn visit_accessor_property(&mut self, it: &AccessorProperty<'a>) {
        if it.r#type == AccessorPropertyType::AccessorProperty {
            self.note(
                it.span,
                "`accessor` fields are not supported by Node.js 20; write a getter and a setter",
            );
        }
        walk::walk_accessor_property(self, it);
    }
}

/// Which CommonJS globals the transformed module uses without declaring them.
#[derive(Default)]
struct CommonJsGlobals {
    dirname: bool,
    filename: bool,
    require: bool,
    /// A reference to the global `babelHelpers` (a transform asked for a helper).
    helper: Option<Span>,
}

impl CommonJsGlobals {
    fn find(program: &Program<'_>, scoping: &Scoping) -> Self {
        let mut finder = GlobalFinder {
            scoping,
            found: CommonJsGlobals::default(),
        };
        finder.visit_program(program);
        let mut found = finder.found;
        // A top-level value binding of the name wins: defining it again would be a
        // redeclaration. (`declare`d names and types are gone from the output.)
        let declared = |name: &str| {
            scoping.get_root_binding(name.into()).is_some_and(|symbol| {
                let flags = scoping.symbol_flags(symbol);
                flags.intersects(SymbolFlags::Value | SymbolFlags::Import)
                    && !flags.contains(SymbolFlags::Ambient)
            })
        };
        found.dirname &= !declared("__dirname");
        found.filename &= !declared("__filename");
        found.require &= !declared("require");
        found
    }

    /// One line defining the used globals from `import.meta.url`, or "" when none is used.
    fn preamble(&self) -> String {
        let mut imports = String::new();
        let mut consts = String::new();
        let p = PREAMBLE_PREFIX;
        if self.dirname || self.filename {
            imports.push_str(&format!(
                "import {{ fileURLToPath as {p}fileURLToPath }} from 'node:url'; "
            ));
        }
        if self.dirname {
            imports.push_str(&format!(
                "import {{ dirname as {p}dirname }} from 'node:path'; "
            ));
        }
        if self.require {
            imports.push_str(&format!(
                "import {{ createRequire as {p}createRequire }} from 'node:module'; "
            ));
        }
        let filename = format!("{p}fileURLToPath(import.meta.url)");
        if self.filename {
            consts.push_str(&format!("const __filename = {filename}; "));
        }
        if self.dirname {
            let from = if self.filename {
                "__filename"
            } else {
                &filename
            };
            consts.push_str(&format!("const __dirname = {p}dirname({from}); "));
        }
        if self.require {
            consts.push_str(&format!(
                "const require = {p}createRequire(import.meta.url); "
            ));
        }
        let mut line = imports;
        line.push_str(&consts);
        line.truncate(line.trim_end().len());
        line
    }
}

struct GlobalFinder<'s> {
    scoping: &'s Scoping,
    found: CommonJsGlobals,
}

impl GlobalFinder<'_> {
    /// Does this reference resolve to nothing the output declares (no symbol, or only an
    /// ambient `declare` one, which the TypeScript transform removed)?
    fn is_global(&self, it: &IdentifierReference<'_>) -> bool {
        let symbol = it
            .reference_id
            .get()
            .and_then(|id| self.scoping.get_reference(id).symbol_id());
        symbol.is_none_or(|s| self.scoping.symbol_flags(s).contains(SymbolFlags::Ambient))
    }
}

impl<'a> Visit<'a> for GlobalFinder<'_> {
    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        let name = it.name.as_str();
        if !matches!(
            name,
            "__dirname" | "__filename" | "require" | "babelHelpers"
        ) || !self.is_global(it)
        {
            return;
        }
        match name {
            "__dirname" => self.found.dirname = true,
            "__filename" => self.found.filename = true,
            "require" => self.found.require = true,
            _ => {
                self.found.helper.get_or_insert(it.span());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn sha256_hex_is_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn preamble_defines_only_what_is_used() {
        let none = CommonJsGlobals::default();
        assert_eq!(none.preamble(), "");
        let dirname = CommonJsGlobals {
            dirname: true,
            ..CommonJsGlobals::default()
        };
        assert_eq!(
            dirname.preamble(),
            "import { fileURLToPath as __toolhost_fileURLToPath } from 'node:url'; \
             import { dirname as __toolhost_dirname } from 'node:path'; \
             const __dirname = __toolhost_dirname(__toolhost_fileURLToPath(import.meta.url));"
        );
        let all = CommonJsGlobals {
            dirname: true,
            filename: true,
            require: true,
            helper: None,
        };
        let line = all.preamble();
        assert!(!line.contains('\n'));
        assert!(line.contains("const __filename = __toolhost_fileURLToPath(import.meta.url);"));
        assert!(line.contains("const __dirname = __toolhost_dirname(__filename);"));
        assert!(line.ends_with("const require = __toolhost_createRequire(import.meta.url);"));
    }

    #[test]
    fn typescript_and_module_javascript_are_transpiled() {
        for yes in [
            "a.ts",
            "a.mts",
            "a.cts",
            "a.tsx",
            "dir/a.b.ts",
            "a.js",
            "a.mjs",
        ] {
            assert!(is_transpiled_file(Path::new(yes)), "{yes}");
        }
        for no in ["a.d.ts", "a.d.mts", "a.d.cts", "a.cjs", "ts", "a.json"] {
            assert!(!is_transpiled_file(Path::new(no)), "{no}");
        }
    }

    #[test]
    fn messages_are_one_line() {
        assert_eq!(one_line("a\n  b\tc "), "a b c");
    }
}
