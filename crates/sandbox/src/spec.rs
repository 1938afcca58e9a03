//! What the host asks the sandbox helper to build: the one message between the two sides.
//!
//! The host (multi-threaded, async) describes the sandbox; the helper (the `toolhost`
//! binary in a fresh single-threaded process) builds it and runs the tool inside. The
//! spec travels on the helper's stdin as one frame (a little-endian u64 length, then
//! JSON); whatever follows on stdin is the tool's.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::egress::Egress;

/// The argument that starts the helper's first stage.
pub(crate) const EXEC_MODE: &str = "__sandbox-exec";
/// The byte a started helper writes on its stdout before it reads its spec.
pub(crate) const READY: u8 = b'R';
/// Exit status of a helper that could not build the sandbox.
pub(crate) const SETUP_FAILED: i32 = 125;

/// A sandbox to build, as the helper gets it. Made by [`crate::Sandbox::spec`]; its
/// [`Limits`] may be tightened before it is started.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spec {
    /// The program to run, as a path inside the sandbox.
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    /// Working directory, inside the sandbox.
    pub(crate) cwd: PathBuf,
    /// Host uid and gid the tool runs as (mapped to 0 inside its user namespace). Only
    /// a root host can choose; otherwise they are the host's own.
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) mounts: Vec<Mount>,
    /// Symbolic links to create in the new root: (path, target).
    pub(crate) links: Vec<(PathBuf, PathBuf)>,
    /// Files to write into the new root before it turns read-only: (path, content).
    pub(crate) files: Vec<(PathBuf, String)>,
    pub(crate) tmp_bytes: u64,
    /// The tool's resource limits.
    pub limits: Limits,
    /// A networked tool: where it may connect, enforced by the network supervisor.
    /// `None`: the tool has no network at all.
    pub(crate) network: Option<Egress>,
    /// cgroup directories (one per controller hierarchy) the helper joins; empty when
    /// the host already moved it (a spare helper).
    pub(crate) cgroups: Vec<PathBuf>,
    /// The tool's whole environment.
    pub(crate) env: Vec<(String, String)>,
    pub(crate) landlock: bool,
    pub(crate) seccomp: bool,
    pub(crate) hostname: String,
}

/// A host path shown inside the sandbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mount {
    /// Host path, opened by the first stage before it gives up its privileges.
    pub source: PathBuf,
    /// Path inside the sandbox.
    pub target: PathBuf,
    /// Whether the tool may write to it.
    pub writable: bool,
}

/// The tool's resource limits (`setrlimit`); `None`: the host's.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Limits {
    /// Processes of the tool's uid (`RLIMIT_NPROC`).
    pub processes: Option<u64>,
    /// Open descriptors per process (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// The largest file it may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size: Option<u64>,
    /// CPU time of a per-call process, in seconds (`RLIMIT_CPU`).
    pub cpu_seconds: Option<u64>,
}

/// Reads the spec frame from stdin, byte-exact: what follows belongs to the tool.
pub(super) fn read_frame() -> Result<String, String> {
    const MAX: u64 = 16 * 1024 * 1024;
    let mut len = [0u8; 8];
    read_exact(&mut len)?;
    let len = u64::from_le_bytes(len);
    if len > MAX {
        return Err(format!("a {len}-byte sandbox spec is too large"));
    }
    let mut json = vec![0u8; usize::try_from(len).map_err(|e| e.to_string())?];
    read_exact(&mut json)?;
    String::from_utf8(json).map_err(|e| format!("the sandbox spec is not UTF-8: {e}"))
}

fn read_exact(mut buf: &mut [u8]) -> Result<(), String> {
    while !buf.is_empty() {
        match rustix::io::read(rustix::stdio::stdin(), &mut *buf) {
            Ok(0) => return Err("stdin closed before the sandbox spec arrived".into()),
            Ok(n) => buf = &mut buf[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(format!("reading the sandbox spec: {e}")),
        }
    }
    Ok(())
}
