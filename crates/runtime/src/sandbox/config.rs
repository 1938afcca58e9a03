//! `[sandbox]` in `toolhost.toml`.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;

use ipnet::IpNet;

use serde::Deserialize;

/// How tool processes are isolated. The defaults are the strict ones.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// `false` runs tools without any isolation, with a loud warning on every start.
    pub enabled: bool,
    /// Layers that must be available, or no tool runs: any of `namespaces`, `landlock`,
    /// `seccomp`, `cgroups`.
    pub require: BTreeSet<Requirement>,
    /// The `toolhost` binary that sets the sandbox up (its hidden helper modes). Defaults
    /// to the running executable.
    pub helper: Option<PathBuf>,
    /// On a root host, tools run as `uid_base + hash(user) % uid_count`, one uid per user.
    pub uid_base: u32,
    pub uid_count: u32,
    /// Size of the private `/tmp` (and `/dev/shm`), in MiB.
    pub tmp_mb: u64,
    /// Memory of one sandbox (a worker or a per-call process with all its children), in
    /// MiB, where cgroups are available.
    pub memory_mb: u64,
    /// Helpers kept started ahead of need, so that starting a sandbox costs a call less.
    pub spares: usize,
    /// Use cgroups where the host offers them (memory and process limits per sandbox).
    pub cgroups: bool,
    /// Processes and threads in one sandbox (cgroup `pids.max`).
    pub max_processes: u64,
    /// Processes and threads of one user over all their sandboxes (`RLIMIT_NPROC`, which
    /// the kernel counts per uid).
    pub max_user_processes: u64,
    pub max_open_files: u64,
    /// Largest file a tool may write, in MiB.
    pub max_file_mb: u64,
    /// CPU seconds of one Python or Bash call (a Node.js worker is bounded by the call
    /// deadlines instead: its CPU time adds up over many calls).
    pub cpu_seconds: u64,
    /// Whether a tool that declares `network: true` in TOOL.md gets the network.
    pub network: NetworkPolicy,
    /// Tools that get the network even without declaring it, when the policy allows.
    pub network_allow: BTreeSet<String>,
    /// Tools that never get the network, declared or not.
    pub network_deny: BTreeSet<String>,
    /// TCP ports a networked tool may connect to; empty means any.
    pub network_ports: Vec<u16>,
    /// Loopback, private, link-local and other non-public networks (CIDRs) that networked
    /// tools may reach anyway; none by default. `127.0.0.1/32` opens the host's loopback.
    pub network_private: Vec<IpNet>,
    /// DNS servers (`ip:port`) that answer networked tools; by default the host's
    /// `/etc/resolv.conf` nameservers.
    pub dns: Vec<SocketAddr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Requirement {
    Namespaces,
    Landlock,
    Seccomp,
    Cgroups,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkPolicy {
    /// Tools that declare `network: true` get it (minus `network_deny`).
    Declared,
    /// No tool gets the network.
    Never,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            enabled: true,
            require: [
                Requirement::Namespaces,
                Requirement::Landlock,
                Requirement::Seccomp,
            ]
            .into(),
            helper: None,
            uid_base: 200_000,
            uid_count: 50_000,
            tmp_mb: 64,
            memory_mb: 2048,
            cgroups: true,
            spares: 2,
            max_processes: 256,
            max_user_processes: 2048,
            max_open_files: 4096,
            max_file_mb: 1024,
            cpu_seconds: 600,
            network: NetworkPolicy::Declared,
            network_allow: BTreeSet::new(),
            network_deny: BTreeSet::new(),
            network_ports: vec![80, 443],
            network_private: Vec::new(),
            dns: Vec::new(),
        }
    }
}

impl SandboxConfig {
    /// The configuration for running without a sandbox (tests of the runtime itself, and
    /// hosts that opted out).
    pub fn disabled() -> SandboxConfig {
        SandboxConfig {
            enabled: false,
            ..SandboxConfig::default()
        }
    }

    /// Whether a tool gets the network.
    pub fn network_for(&self, tool: &str, declared: bool) -> bool {
        self.network == NetworkPolicy::Declared
            && !self.network_deny.contains(tool)
            && (declared || self.network_allow.contains(tool))
    }
}
