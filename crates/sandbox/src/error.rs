//! Why a sandbox could not be had.

use std::path::PathBuf;

/// Why a sandbox could not be set up or started. A failure inside a running sandbox is the
/// tool's (its exit status and stderr), not one of these.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// This machine or the configuration keeps every sandbox from starting: no tool runs.
    #[error("{0}")]
    Unavailable(String),
    /// The sandbox is built from Linux namespaces, Landlock, seccomp and cgroups.
    #[error("the sandbox needs Linux")]
    NeedsLinux,
    /// A file or directory the sandbox needs (a user's home) could not be used.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A program (the helper, or the tool's interpreter) could not be found or started.
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        /// The program, as given.
        program: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A path the launch names that the sandbox does not show.
    #[error("{} is outside the sandbox's view", .0.display())]
    OutsideView(PathBuf),
    /// The user's home is at or over its quota, or cannot be measured.
    #[error("{0}")]
    Quota(String),
    /// The descriptors this process inherited could not be kept from its children.
    #[error("{0}")]
    Inherited(String),
    /// Starting this sandbox failed: its cgroups, the helper, or handing it its spec.
    #[error("{0}")]
    Start(String),
}

impl SandboxError {
    #[cfg(target_os = "linux")]
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        SandboxError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
