//! The tool catalog: which tools exist, where, and which definition wins.
//!
//! Roots are scanned in order; later roots override earlier ones by tool name. The catalog
//! keeps one entry per tool folder keyed by a content hash, so a re-scan after a change
//! touches only the folders that changed. [`watch`] turns file-system events into such
//! re-scans and publishes [`CatalogEvent`]s. [`sync`] is the seed's version-based copy of
//! seed tools into a data directory, made atomic.

#![warn(missing_docs, unreachable_pub)]

mod catalog;
pub mod check;
mod error;
mod folder;
mod hash;
mod roots;
pub mod sync;
mod users;
pub mod watch;

pub use catalog::{Catalog, CatalogEvent, EventKind, ResolvedTool, Tool};
pub use error::CatalogError;
pub use folder::load_tool;
pub use hash::ContentHash;
pub use roots::{Root, RootOrigin, RootsConfig};
pub use users::{is_real_dir, validate_user};
