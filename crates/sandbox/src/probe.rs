//! Which isolation layers this machine offers, and why one is missing.
//!
//! Namespaces can only be tried by unsharing them, which changes the calling process and
//! fails in a multi-threaded one. So [`probe_here`] is meant for a fresh, single-threaded
//! process (the binary's hidden `__sandbox-probe` mode) that exits right after.

use std::path::Path;

use crate::Layer;

impl Layer {
    fn new(name: &'static str, result: Result<String, String>) -> Layer {
        match result {
            Ok(detail) => Layer {
                name: name.into(),
                available: true,
                detail,
            },
            Err(detail) => Layer {
                name: name.into(),
                available: false,
                detail,
            },
        }
    }
}

/// Probes every layer. Unshares namespaces in the calling process: call it only in a
/// fresh, single-threaded process that exits afterwards.
pub fn probe_here() -> Vec<Layer> {
    use rustix::thread::UnshareFlags as F;
    let user = unshare(F::NEWUSER, "CLONE_NEWUSER");
    let mut layers = vec![Layer::new("user-namespace", user)];
    for (name, flag, what) in [
        ("mount-namespace", F::NEWNS, "CLONE_NEWNS"),
        ("pid-namespace", F::NEWPID, "CLONE_NEWPID"),
        ("network-namespace", F::NEWNET, "CLONE_NEWNET"),
        ("ipc-namespace", F::NEWIPC, "CLONE_NEWIPC"),
        ("uts-namespace", F::NEWUTS, "CLONE_NEWUTS"),
    ] {
        layers.push(Layer::new(name, unshare(flag, what)));
    }
    layers.push(Layer::new("landlock", landlock_abi()));
    layers.push(Layer::new("seccomp", seccomp()));
    layers.push(Layer::new("no-new-privs", no_new_privs()));
    layers.push(Layer::new("cgroups", cgroups(Path::new("/sys/fs/cgroup"))));
    layers.push(Layer::new(
        "rlimits",
        Ok("processes, open files, file size, CPU time".into()),
    ));
    // Last: it installs the filter in this (throwaway) process.
    layers.push(Layer::new("network-supervisor", network_supervisor()));
    layers
}

/// Whether a networked tool can run: its `connect` calls go to a supervisor through a
/// seccomp user-notification listener.
fn network_supervisor() -> Result<String, String> {
    let program = super::filter::program(true)?;
    rustix::thread::set_no_new_privs(true).map_err(|e| format!("no_new_privs: {e}"))?;
    match super::notify::install(&program, true) {
        Ok(_) => Ok(
            "seccomp user notification: networked tools reach only what [sandbox] allows".into(),
        ),
        Err(e) => Err(format!(
            "seccomp user notification is unavailable ({e}): tools with the network cannot run"
        )),
    }
}

/// Tries one namespace; the probe runs in a single-threaded process that exits afterwards.
fn unshare(flags: rustix::thread::UnshareFlags, what: &str) -> Result<String, String> {
    match super::fds::unshare(flags) {
        Ok(()) => Ok(format!("unshare({what}) works")),
        Err(e) => Err(format!("unshare({what}) failed: {e}{}", hint(what))),
    }
}

fn hint(what: &str) -> String {
    if what != "CLONE_NEWUSER" {
        return String::new();
    }
    let sysctl = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    match (
        sysctl("/proc/sys/user/max_user_namespaces"),
        sysctl("/proc/sys/kernel/unprivileged_userns_clone"),
    ) {
        (Some(max), _) if max == "0" => " (user.max_user_namespaces is 0)".into(),
        (_, Some(v)) if v == "0" => " (kernel.unprivileged_userns_clone is 0)".into(),
        _ => " (a container or security module may forbid it)".into(),
    }
}

fn landlock_abi() -> Result<String, String> {
    use landlock::{ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr};
    let abis = [
        ABI::V10,
        ABI::V9,
        ABI::V8,
        ABI::V7,
        ABI::V6,
        ABI::V5,
        ABI::V4,
        ABI::V3,
        ABI::V2,
        ABI::V1,
    ];
    for abi in abis {
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create());
        if created.is_ok() {
            return Ok(format!("ABI {abi} (file system access control)"));
        }
    }
    Err("the kernel has no Landlock, or it is not enabled at boot (lsm=…,landlock)".into())
}

fn seccomp() -> Result<String, String> {
    rustix::thread::secure_computing_mode()
        .map_err(|e| format!("prctl(PR_GET_SECCOMP) failed: {e}"))?;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if status.lines().any(|l| l.starts_with("Seccomp_filters:")) {
        Ok("filter mode (seccomp-bpf)".into())
    } else {
        Ok("available (filter support assumed: /proc/self/status does not say)".into())
    }
}

fn no_new_privs() -> Result<String, String> {
    rustix::thread::no_new_privs()
        .map(|_| "prctl(PR_SET_NO_NEW_PRIVS) supported".into())
        .map_err(|e| e.to_string())
}

/// cgroup v2 (one unified hierarchy), v1 (one per controller), or none; memory and pids
/// are the controllers the sandbox needs.
fn cgroups(root: &Path) -> Result<String, String> {
    let controllers = root.join("cgroup.controllers");
    if let Ok(list) = std::fs::read_to_string(&controllers) {
        let have: Vec<&str> = list.split_whitespace().collect();
        let missing: Vec<&str> = ["memory", "pids"]
            .into_iter()
            .filter(|c| !have.contains(c))
            .collect();
        return if missing.is_empty() {
            Ok(format!("v2 (controllers: {})", have.join(" ")))
        } else {
            Err(format!(
                "v2 without the {} controller",
                missing.join(" and ")
            ))
        };
    }
    let v1: Vec<&str> = ["memory", "pids"]
        .into_iter()
        .filter(|c| root.join(c).is_dir())
        .collect();
    match v1.as_slice() {
        ["memory", "pids"] => Ok("v1 (memory and pids hierarchies)".into()),
        [] => Err(format!("no cgroup file system at {}", root.display())),
        some => Err(format!("v1 with only the {} hierarchy", some.join(" "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_cgroup_versions_apart() {
        let dir = tempfile::tempdir().unwrap();
        assert!(cgroups(dir.path()).unwrap_err().contains("no cgroup"));
        std::fs::create_dir(dir.path().join("memory")).unwrap();
        assert_eq!(
            cgroups(dir.path()).unwrap_err(),
            "v1 with only the memory hierarchy"
        );
        std::fs::create_dir(dir.path().join("pids")).unwrap();
        assert_eq!(
            cgroups(dir.path()).unwrap(),
            "v1 (memory and pids hierarchies)"
        );
        std::fs::write(dir.path().join("cgroup.controllers"), "cpu io memory\n").unwrap();
        assert_eq!(
            cgroups(dir.path()).unwrap_err(),
            "v2 without the pids controller"
        );
        std::fs::write(dir.path().join("cgroup.controllers"), "cpu memory pids\n").unwrap();
        assert_eq!(
            cgroups(dir.path()).unwrap(),
            "v2 (controllers: cpu memory pids)"
        );
    }
}
