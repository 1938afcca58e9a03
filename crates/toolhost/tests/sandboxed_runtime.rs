//! Every runtime test again, with the sandbox on: the runtime crate's own run is the
//! unsandboxed one. The tests' `common::HELPER` is this crate's `toolhost` binary, which the
//! sandboxed runtime starts in its helper modes.
#![allow(clippy::unwrap_used, clippy::duplicate_mod)]

#[path = "../../runtime/tests/calls.rs"]
mod calls;

#[path = "../../runtime/tests/redaction.rs"]
mod redaction;

#[path = "../../runtime/tests/workers.rs"]
mod workers;
