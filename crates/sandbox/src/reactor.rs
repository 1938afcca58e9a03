//! Descriptors the host owns, registered with Tokio's reactor. `AsyncFd::register` is
//! `unsafe` (the descriptor must stay open, and name the same file, while registered);
//! it lives here because this crate holds the workspace's every `unsafe` block.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::OwnedFd;

use tokio::io::unix::AsyncFd;

/// Registers `fd` for readiness with the current Tokio runtime, taking ownership of it.
/// For descriptors whose reads and writes the caller makes itself (with `MSG_DONTWAIT`,
/// say, so that a descriptor shared with another process stays in blocking mode for it).
pub fn register(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the `AsyncFd` owns the `OwnedFd`, so the descriptor stays open, and names
    // the same file description, for as long as it is registered; `OwnedFd::as_raw_fd`
    // always returns that one descriptor.
    unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)
}
