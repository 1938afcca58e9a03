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
    Transpile(crate::TranspileError),
    #[error("{0}")]
    Sandbox(String),
    /// A setting no call could work with.
    #[error("{0}")]
    Config(String),
}

impl RuntimeError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        RuntimeError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
