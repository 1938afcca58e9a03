//! The embedded sandbox: every tool process starts inside it. Linux only: it is built from
//! namespaces, Landlock, seccomp and cgroups. Elsewhere the crate compiles to a small API
//! whose every entry point says the sandbox needs Linux. This is the only crate of the
//! workspace with `unsafe` code, in [`fds`] and [`notify`], each operation behind a safe
//! wrapper or an `unsafe fn` with its contract.
//!
//! The host never forks in its multi-threaded state to build a sandbox. It runs its own
//! binary in a hidden helper mode instead ([`helper_main`]), in two stages:
//!
//! 1. `__sandbox-exec` ([`stage1`]): joins the cgroups, opens the mount sources while it
//!    still can, drops to the user's uid, creates the namespaces and maps the uid.
//! 2. [`stage2`], forked by the first: PID 1 of the new PID namespace. Builds the new root
//!    ([`layout`]), pivots into it, applies limits, Landlock, capabilities and seccomp
//!    ([`confine`]), starts the tool and reaps until it exits.
//!
//! A networked tool gets its own network namespace too; the first stage stays on the
//! host's network and connects for it, where [`egress`] allows ([`supervise`], [`dns`]).
//!
//! [`host`] is the host's side: probing the machine, checking the configuration's
//! requirements, and turning a launch into a helper invocation ([`spec`]). The helper is
//! whatever binary calls [`helper_main`] first thing: `toolhost`, or this crate's test.
#![warn(missing_docs, unreachable_pub)]

mod config;
mod error;
mod layer;

pub use config::{InvalidSetting, NetworkPolicy, Requirement, SandboxConfig};
pub use error::SandboxError;
pub use layer::Layer;

/// The hidden argument that probes the machine in a fresh, single-threaded process.
pub const PROBE_MODE: &str = "__sandbox-probe";

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod confine;
#[cfg(target_os = "linux")]
mod dns;
#[cfg(target_os = "linux")]
mod egress;
#[cfg(target_os = "linux")]
mod fds;
#[cfg(target_os = "linux")]
mod filter;
#[cfg(target_os = "linux")]
mod handoff;
#[cfg(target_os = "linux")]
mod helper;
#[cfg(target_os = "linux")]
mod host;
#[cfg(target_os = "linux")]
mod layout;
#[cfg(target_os = "linux")]
mod notify;
#[cfg(target_os = "linux")]
mod probe;
#[cfg(target_os = "linux")]
mod quota;
#[cfg(target_os = "linux")]
pub mod reactor;
#[cfg(target_os = "linux")]
mod spares;
#[cfg(target_os = "linux")]
mod spec;
#[cfg(target_os = "linux")]
mod stage1;
#[cfg(target_os = "linux")]
mod stage2;
#[cfg(target_os = "linux")]
mod supervise;
#[cfg(target_os = "linux")]
mod usage;

#[cfg(target_os = "linux")]
pub use cgroup::Lease;
#[cfg(target_os = "linux")]
pub use helper::{helper_main, keep_inherited_descriptors};
#[cfg(target_os = "linux")]
pub use host::{Launch, LaunchArg, Refill, Sandbox};
#[cfg(target_os = "linux")]
pub use layout::{CacheView, View};
#[cfg(target_os = "linux")]
pub use probe::probe_here;
#[cfg(target_os = "linux")]
pub use quota::Watched;
#[cfg(target_os = "linux")]
pub use spec::{Limits, Mount, Spec};

#[cfg(not(target_os = "linux"))]
mod elsewhere;
#[cfg(not(target_os = "linux"))]
pub use elsewhere::{Sandbox, helper_main, keep_inherited_descriptors, probe_here};
