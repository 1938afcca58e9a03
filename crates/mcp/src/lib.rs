//! The MCP surface: serves a [`ToolSource`](toolhost_host::ToolSource) to any MCP client
//! over stdio and Streamable HTTP, built on rmcp (the official Rust SDK).
//!
//! - [`McpServer`] answers `tools/list` (deterministic order, paginated) and `tools/call`
//!   (through the runtime, with progress and cancellation), and tells clients when the
//!   tool list changes: `notifications/tools/list_changed` on 2025-11-25 sessions, and on
//!   `subscriptions/listen` streams for the stateless 2026-07-28 revision.
//! - [`serve_stdio`] runs one session on stdin/stdout (non-blocking whether the client
//!   gave us pipes or, as Node.js does, sockets).
//! - [`http::router_at`] is the `/mcp` endpoint (and one per agent) for `toolhost serve`:
//!   bearer tokens map a request to its `Caller`, `Host` and `Origin` are validated,
//!   bodies are capped; 2025-11-25 sessions belong to the user who opened them and are
//!   capped per user and overall. [`connections::serve`] serves it with header, body and idle timeouts and
//!   caps on connections. With OAuth issuers it is a protected resource
//!   ([`ProtectedResource`]): metadata at the well-known URLs, challenges on 401 and 403.
//!
//! What it serves comes from `toolhost_host`: a `ToolSource` (the catalog, an agent's
//! tool sets) per caller, with the host's runtime, tokens and call log. This crate only
//! speaks MCP.

#![warn(missing_docs, unreachable_pub)]

mod challenge;
pub mod connections;
mod holding_body;
pub mod http;
mod resource;
mod scopes;
mod server;
mod sessions;
mod shared_sessions;
mod std_streams;
mod stdio;
mod throttle;

pub use resource::ProtectedResource;
pub use server::McpServer;
pub use sessions::SessionLimits;
pub use stdio::serve_stdio;
