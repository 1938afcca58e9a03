//! Rust examples of embedding Toolhost; run them with
//! `cargo run -p toolhost-examples --example NAME`:
//!
//! - `embed_runtime`: the runtime in a program of your own: a catalog scanned, one tool
//!   called (in the sandbox, with the program as its helper), progress and result shown.
//! - `native_plugin`: a plugin of Rust tools with typed settings, granted to an agent,
//!   resolved for a turn and called through the runtime.
//! - `custom_source`: serve tools of your own over MCP (stdio) through the host's
//!   `ToolSource` interface, with the runtime's validation, deadlines and cancellation.
//!
//! `tests/examples.rs` runs each one as a user would.
