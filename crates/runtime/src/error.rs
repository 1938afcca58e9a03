use std::path::{Path, PathBuf};

/// Why a call could not start. Inside a call, every failure becomes an error result
/// instead: the model must always get an answer it can act on.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A file or directory the runtime needs could not be read, written or made.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A tool's program (Node.js, Python, Bash) could not be started.
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A Node.js worker did not start (or its tool's code could not be read for it).
    #[error("{0}")]
    WorkerStart(String),
    /// A tool's TypeScript could not be transpiled.
    #[error("{0}")]
    Transpile(toolhost_transpile::TranspileError),
    /// The sandbox could not be set up or started.
    #[error(transparent)]
    Isolation(#[from] toolhost_sandbox::SandboxError),
    /// A tool the sandbox cannot show or run (a folder outside the tool roots, say).
    #[error("{0}")]
    Sandbox(String),
    /// A setting no call could work with (a limit of zero, an unsafe uid range).
    #[error(transparent)]
    Setting(#[from] toolhost_sandbox::InvalidSetting),
    /// A configuration that would share what must
    /// not be shared (the email database's directory over the homes, say).
    #[error("{0}")]
    Config(String),
    /// A user or home no tool may run in.
    #[error("{0}")]
    Home(String),
    /// The call could not be handed to a runner of the fleet (none is live, the
    /// messaging is down, the tool's bundle could not be made): it did not start.
    #[error("{0}")]
    Dispatch(String),
    /// Every runner tried is busy: the call did not start, and may be retried shortly.
    #[error("{0}")]
    Overloaded(String),
}

impl RuntimeError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        RuntimeError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
