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
    /// The range must lie in [`TOOL_UIDS`] and avoid 65534 and 65535 (`validate`).
    pub uid_base: u32,
    /// How many uids the range holds, from `uid_base`.
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
    /// Descriptors one tool process may hold open (`RLIMIT_NOFILE`).
    pub max_open_files: u64,
    /// Largest file a tool may write, in MiB.
    pub max_file_mb: u64,
    /// Disk space one user's home may take, in MiB (files, folders and links, as
    /// allocated); `0`: no quota. Checked before each call and about every second while
    /// the user's sandboxes run.
    pub home_mb: u64,
    /// Files, folders and links one user's home may hold; `0`: no limit. Also bounds the
    /// walk that measures the home.
    pub home_files: u64,
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

/// An isolation layer the configuration requires (`[sandbox] require`): without it, no
/// tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Requirement {
    /// User, mount, PID, network, IPC and UTS namespaces.
    Namespaces,
    /// Landlock file system access control.
    Landlock,
    /// seccomp-bpf system call filtering (with `no_new_privs`).
    Seccomp,
    /// cgroups: memory and process limits per sandbox.
    Cgroups,
}

/// Which tools get the network (`[sandbox] network`).
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
            home_mb: 2048,
            home_files: 200_000,
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

/// The uids tools may run as (a half-open range): none of the host's system accounts
/// (below 1000), nothing that software storing a uid in a signed 32-bit integer reads as
/// negative, and so neither of the kernel's "no uid" values (4294967294, 4294967295).
pub(crate) const TOOL_UIDS: std::ops::Range<u32> = 1000..(1 << 31) - 1;
/// `nobody`, and `-1` as a 16-bit uid: never a tool's.
const RESERVED_UIDS: [u32; 2] = [65534, 65535];

/// A setting of the configuration file that cannot work, named by section and key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[{section}] {message}")]
pub struct InvalidSetting {
    /// The section, such as `sandbox`.
    pub section: &'static str,
    /// The key at fault, such as `uid_base`.
    pub key: &'static str,
    /// What is wrong with it and what to do, starting with the key.
    pub message: String,
}

impl InvalidSetting {
    /// `[section] message`, about `key`.
    pub fn new(section: &'static str, key: &'static str, message: String) -> InvalidSetting {
        InvalidSetting {
            section,
            key,
            message,
        }
    }
}

impl SandboxConfig {
    /// Whether the settings make sense, with what is wrong in terms of the keys when not.
    /// A tool's uid is `uid_base + n` for some `n < uid_count`, so the whole range must be
    /// safe to hand out: a wrapped sum or uid 0 would run tools as a host account.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let bad = |key, message| Err(InvalidSetting::new("sandbox", key, message));
        for (key, value) in [
            ("tmp_mb", self.tmp_mb),
            ("memory_mb", self.memory_mb),
            ("max_processes", self.max_processes),
            ("max_user_processes", self.max_user_processes),
            ("max_open_files", self.max_open_files),
            ("max_file_mb", self.max_file_mb),
            ("cpu_seconds", self.cpu_seconds),
        ] {
            if value == 0 {
                return bad(
                    key,
                    format!("{key} must be at least 1: with 0 no tool could run"),
                );
            }
        }
        let (base, count) = (self.uid_base, self.uid_count);
        if count == 0 {
            return bad("uid_count", "uid_count must be at least 1".into());
        }
        if base < TOOL_UIDS.start {
            return bad(
                "uid_base",
                format!(
                    "uid_base = {base} would run tools as a host system account \
                     (uid 0 is root): tools' uids start at {} or above",
                    TOOL_UIDS.start
                ),
            );
        }
        let last = u64::from(base) + u64::from(count) - 1;
        if last >= u64::from(TOOL_UIDS.end) {
            return bad(
                "uid_count",
                format!(
                    "uid_base = {base} with uid_count = {count} reaches uid {last}, past \
                     the highest uid tools may use ({}): lower uid_base or uid_count",
                    TOOL_UIDS.end - 1
                ),
            );
        }
        if let Some(uid) = RESERVED_UIDS
            .iter()
            .find(|u| (u64::from(base)..=last).contains(&u64::from(**u)))
        {
            return bad(
                "uid_base",
                format!(
                    "uid_base = {base} with uid_count = {count} includes uid {uid} \
                     (nobody, or -1 as a 16-bit uid): choose a range without 65534 and 65535"
                ),
            );
        }
        Ok(())
    }

    /// Host accounts (from `/etc/passwd` and `/etc/group` text) whose id lies in the tools'
    /// uid range: such an account would own the files of some user's tools, and share
    /// their process limit.
    pub fn accounts_in_range(&self, passwd: &str, group: &str) -> Vec<String> {
        let range = u64::from(self.uid_base)..u64::from(self.uid_base) + u64::from(self.uid_count);
        let mut found = Vec::new();
        for (text, what) in [(passwd, "user"), (group, "group")] {
            for line in text.lines() {
                let mut fields = line.split(':');
                let (Some(name), Some(id)) = (fields.next(), fields.nth(1)) else {
                    continue;
                };
                if let Ok(id) = id.trim().parse::<u64>()
                    && range.contains(&id)
                {
                    found.push(format!("{what} {name} ({id})"));
                }
            }
        }
        found
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn uids(base: u32, count: u32) -> Result<(), String> {
        SandboxConfig {
            uid_base: base,
            uid_count: count,
            ..SandboxConfig::default()
        }
        .validate()
        .map_err(|e| e.to_string())
    }

    // F18: the review's two settings ran tools as host uid 2483 (a wrapped sum) and as
    // host root.
    #[test]
    fn the_uid_range_is_refused_when_it_wraps_reaches_root_or_special_ids() {
        let wraps = uids(4_294_967_295, 50_000).unwrap_err();
        assert!(wraps.contains("uid_base = 4294967295"), "{wraps}");
        assert!(wraps.contains("uid_count"), "{wraps}");
        let root = uids(0, 1).unwrap_err();
        assert!(root.contains("uid_base = 0"), "{root}");
        assert!(root.contains("root"), "{root}");
        assert!(uids(999, 1).is_err());
        assert!(uids(200_000, 0).unwrap_err().contains("uid_count"));
        assert!(uids(60_000, 10_000).unwrap_err().contains("65534"));
        assert!(uids(65_535, 1).unwrap_err().contains("65535"));
        assert!(uids(2_147_483_000, 1000).is_err());
        // What is left works, up to the last safe uid.
        assert_eq!(SandboxConfig::default().validate(), Ok(()));
        assert_eq!(uids(1000, 64_534), Ok(()));
        assert_eq!(uids(65_536, 1), Ok(()));
        assert_eq!(uids(2_147_483_646, 1), Ok(()));
        assert!(uids(2_147_483_646, 2).is_err());
    }

    #[test]
    fn host_accounts_inside_the_uid_range_are_found() {
        let config = SandboxConfig {
            uid_base: 200_000,
            uid_count: 10,
            ..SandboxConfig::default()
        };
        let passwd = "root:x:0:0:root:/root:/bin/bash\nbob:x:200003:100::/home/bob:/bin/sh\n\
                      carol:x:200010:100::/home/carol:/bin/sh\n# comment\n";
        let group = "root:x:0:\nbots:x:200009:bob\n";
        assert_eq!(
            config.accounts_in_range(passwd, group),
            ["user bob (200003)", "group bots (200009)"]
        );
    }
}
