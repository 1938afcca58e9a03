//! The sandbox on a system other than Linux: there is none. The API the host needs to say
//! so compiles, and every entry point reports [`SandboxError::NeedsLinux`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::{Layer, PROBE_MODE, SandboxConfig, SandboxError};

/// The argument that starts a helper's first stage (see the Linux build).
const EXEC_MODE: &str = "__sandbox-exec";
/// Exit status of a helper that could not build the sandbox.
const SETUP_FAILED: u8 = 125;

/// The embedded sandbox, which this system cannot run: [`Sandbox::ready`] says so.
#[derive(Debug)]
pub struct Sandbox {
    config: SandboxConfig,
    helper: PathBuf,
    layers: Vec<Layer>,
}

impl Sandbox {
    /// A sandbox that reports, through [`Sandbox::ready`] and [`Sandbox::layers`], that it
    /// needs Linux.
    pub fn new(config: SandboxConfig) -> Sandbox {
        let helper = config
            .helper
            .clone()
            .or_else(|| std::env::current_exe().ok())
            .unwrap_or_else(|| PathBuf::from("toolhost"));
        Sandbox {
            config,
            helper,
            layers: probe_here(),
        }
    }

    /// What the probe found: one missing layer, Linux.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The configuration this sandbox was built from.
    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The binary that would build sandboxes.
    pub fn helper(&self) -> &Path {
        &self.helper
    }

    /// Always [`SandboxError::NeedsLinux`]: no tool can run in a sandbox here.
    pub fn ready(&self) -> Result<(), SandboxError> {
        Err(SandboxError::NeedsLinux)
    }
}

/// The layers of this machine: none, since the sandbox needs Linux.
pub fn probe_here() -> Vec<Layer> {
    vec![Layer {
        name: "linux".into(),
        available: false,
        detail: SandboxError::NeedsLinux.to_string(),
    }]
}

/// Nothing to run but a refusal: a helper mode asked for here fails with the reason.
pub fn helper_main() -> Option<ExitCode> {
    let mode = std::env::args_os().nth(1)?;
    if !matches!(mode.to_str(), Some(PROBE_MODE | EXEC_MODE)) {
        return None;
    }
    eprintln!("toolhost sandbox: {}", SandboxError::NeedsLinux);
    Some(ExitCode::from(SETUP_FAILED))
}

/// Marking inherited descriptors close-on-exec uses Linux's `close_range`.
pub fn keep_inherited_descriptors() -> Result<(), SandboxError> {
    Err(SandboxError::NeedsLinux)
}
