//! TypeScript → JavaScript for Node.js 20, in process, with oxc, into a content-addressed
//! cache ([`Transpiler`]); and a tool folder's code as the host may read it, bounded and
//! never outside the folder ([`ToolFolder`]).
#![warn(missing_docs, unreachable_pub)]

mod tool_folder;
mod transpile;

pub use tool_folder::{MAX_DEPTH, MAX_ENTRIES, MAX_SOURCE_BYTES, Stamp, ToolFolder};
pub use transpile::{PREAMBLE_PREFIX, Source, TranspileError, Transpiler, read_sources};
