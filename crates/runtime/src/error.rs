use std::path::{Path, PathBuf};

/// Why a call could not start. Inside a call, every failure becomes an error result
/// instead: the model must always get an answer it can act on.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    WorkerStart(String),
    #[error("{0}")]
    Transpile(toolhost_transpile::TranspileError),
    /// The sandbox could not be set up or started.
    #[error(transparent)]
    Isolation(#[from] toolhost_sandbox::SandboxError),
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
}

impl RuntimeError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        RuntimeError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
