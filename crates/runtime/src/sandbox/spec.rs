//! What the host asks the sandbox helper to build: the one message between the two sides.
//!
//! The host (multi-threaded, async) describes the sandbox; the helper (the `toolhost`
//! binary in a fresh single-threaded process) builds it and runs the tool inside. The
//! spec travels as JSON in the helper's arguments; the tool's environment travels as the
//! helper's own environment.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The argument that starts the helper's first stage.
pub const EXEC_MODE: &str = "__sandbox-exec";
/// Exit status of a helper that could not build the sandbox.
pub const SETUP_FAILED: i32 = 125;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spec {
    /// The program to run, as a path inside the sandbox.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Working directory, inside the sandbox.
    pub cwd: PathBuf,
    /// Host uid and gid the tool runs as (mapped to 0 inside its user namespace). Only
    /// a root host can choose; otherwise they are the host's own.
    pub uid: u32,
    pub gid: u32,
    pub mounts: Vec<Mount>,
    /// Symbolic links to create in the new root: (path, target).
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Files to write into the new root before it turns read-only: (path, content).
    pub files: Vec<(PathBuf, String)>,
    pub tmp_bytes: u64,
    pub limits: Limits,
    /// Keep the host's network namespace (a tool that declared `network: true`).
    pub network: bool,
    /// With the network: the TCP ports the tool may connect to (empty: any).
    pub tcp_ports: Vec<u16>,
    /// cgroup directories (one per controller hierarchy) the sandbox joins.
    pub cgroups: Vec<PathBuf>,
    pub landlock: bool,
    pub seccomp: bool,
    pub hostname: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mount {
    /// Host path, opened by the first stage before it gives up its privileges.
    pub source: PathBuf,
    /// Path inside the sandbox.
    pub target: PathBuf,
    pub writable: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Limits {
    pub processes: Option<u64>,
    pub open_files: Option<u64>,
    pub file_size: Option<u64>,
    pub cpu_seconds: Option<u64>,
}
