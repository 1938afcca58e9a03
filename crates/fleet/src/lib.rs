//! Scale-out: gateways that serve and runners that run calls, on NATS (Debian's
//! nats-server 2.9: `async-nats` is built without its 2.10+ features) and PostgreSQL.
//!
//! - [`rendezvous`]: every gateway picks the same home runner for a user, with no shared
//!   table; a runner joining or leaving moves only its own users.
//! - [`wire`]: the subjects and messages calls travel on.
//! - [`bundle`]: a tool folder as one immutable value named by its content.
//! - [`gateway`]: [`Gateway`], the runtime's [`toolhost_runtime::Dispatch`] for a gateway:
//!   folder tools' calls go to runners; accepted calls are never sent twice.
//! - [`runner`]: `toolhost runner`'s loop: take calls, run them in the sandbox, report.
#![warn(missing_docs, unreachable_pub)]

pub mod bundle;
mod bundles;
pub mod catalog;
mod connect;
pub mod gateway;
pub mod members;
pub mod metrics;
pub mod rendezvous;
pub mod runner;
pub mod wire;

pub use bundles::Bundles;
pub use connect::NatsLogin;
pub use gateway::Gateway;
pub use runner::{Runner, RunnerOptions};

/// Why a node could not join or serve the fleet.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// `[cluster]` or the command line is incomplete or wrong.
    #[error("{0}")]
    Config(String),
    /// NATS refused or failed.
    #[error("{0}")]
    Nats(String),
    /// The runtime could not start.
    #[error(transparent)]
    Runtime(#[from] toolhost_runtime::RuntimeError),
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
