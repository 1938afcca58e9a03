//! The layers PID 1 puts on itself before it starts the tool, which inherits them all:
//! resource limits, Landlock, no capabilities, `no_new_privs`, and a seccomp filter.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};
use rustix::process::{Resource, Rlimit};
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::spec::Spec;
use super::{filter, notify};

/// Confines the calling process. For a networked tool, returns the listener of the
/// network supervisor's notifications, for the first stage to serve.
pub(super) fn apply(spec: &Spec) -> Result<Option<OwnedFd>, String> {
    limits(spec)?;
    if spec.landlock {
        landlock(spec)?;
    }
    drop_capabilities()?;
    rustix::thread::set_no_new_privs(true).map_err(|e| format!("no_new_privs: {e}"))?;
    if spec.seccomp {
        return seccomp(spec.network.is_some());
    }
    if spec.network.is_some() {
        return Err("a networked tool needs seccomp, for its network supervisor".into());
    }
    Ok(None)
}

fn limits(spec: &Spec) -> Result<(), String> {
    let set = |what: Resource, n: u64| {
        rustix::process::setrlimit(
            what,
            Rlimit {
                current: Some(n),
                maximum: Some(n),
            },
        )
        .map_err(|e| format!("setrlimit({what:?}, {n}): {e}"))
    };
    set(Resource::Core, 0)?;
    let l = &spec.limits;
    for (what, n) in [
        (Resource::Nproc, l.processes),
        (Resource::Nofile, l.open_files),
        (Resource::Fsize, l.file_size),
        (Resource::Cpu, l.cpu_seconds),
    ] {
        if let Some(n) = n {
            set(what, n)?;
        }
    }
    Ok(())
}

/// Read (and execute) beneath every read-only mount, read and write beneath the writable
/// ones. Without the network the same ruleset also refuses TCP outright (a networked
/// tool's connections are the supervisor's to judge), and it keeps signals and abstract
/// sockets inside the sandbox, where the kernel can.
fn landlock(spec: &Spec) -> Result<(), String> {
    let abi = ABI::V6;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let mut read_paths: Vec<PathBuf> = vec!["/proc".into(), "/etc".into(), "/dev".into()];
    let mut write_paths: Vec<PathBuf> = vec!["/tmp".into(), "/dev/shm".into()];
    for m in &spec.mounts {
        if m.writable {
            write_paths.push(m.target.clone());
        } else {
            read_paths.push(m.target.clone());
        }
    }
    let device_files = ["/dev/null", "/dev/zero", "/dev/full"];

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(|e| format!("landlock: {e}"))?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(|e| format!("landlock: {e}"))?;
    if spec.network.is_none() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| format!("landlock: {e}"))?;
    }
    let mut created = ruleset.create().map_err(|e| format!("landlock: {e}"))?;
    for (paths, access) in [
        (
            read_paths.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
            read,
        ),
        (write_paths.iter().map(PathBuf::as_path).collect(), all),
        (
            device_files.iter().map(Path::new).collect(),
            read | AccessFs::WriteFile,
        ),
    ] {
        for path in paths {
            let Ok(fd) = PathFd::new(path) else { continue };
            // A rule on a file may only name file rights.
            let access = if path.is_dir() {
                access
            } else {
                access & AccessFs::from_file(abi)
            };
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| format!("landlock rule for {}: {e}", path.display()))?;
        }
    }
    let status = created
        .restrict_self()
        .map_err(|e| format!("landlock: {e}"))?;
    if status.ruleset == landlock::RulesetStatus::NotEnforced {
        return Err("landlock is not enforced by this kernel".into());
    }
    Ok(())
}

/// The tool runs as root of its user namespace; with an empty bounding set and no
/// capabilities, that root can do nothing a plain user cannot.
fn drop_capabilities() -> Result<(), String> {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    for cap in CapabilitySet::all().iter() {
        // Capabilities newer than this kernel give EINVAL: nothing to drop.
        let _ = rustix::thread::remove_capability_from_bounding_set(cap);
    }
    let _ = rustix::thread::clear_ambient_capability_set();
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )
    .map_err(|e| format!("capset: {e}"))
}

/// System calls a tool never needs and an escape would: debugging other processes,
/// mounting, namespaces, keyrings, BPF, kernel modules, io_uring, and the like.
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_syslog,
    libc::SYS_quotactl,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_seccomp,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_vhangup,
];

const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
    0x80, // CLONE_NEWTIME
];

fn arch() -> Result<TargetArch, String> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(TargetArch::x86_64),
        "aarch64" => Ok(TargetArch::aarch64),
        other => Err(format!("no seccomp filter for {other}")),
    }
}

fn seccomp(supervised: bool) -> Result<Option<OwnedFd>, String> {
    let arch = arch()?;
    fn err(e: impl std::fmt::Display) -> String {
        format!("seccomp: {e}")
    }
    let bpf = |filter: SeccompFilter| -> Result<seccompiler::BpfProgram, String> {
        filter.try_into().map_err(err)
    };

    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&nr| (nr, vec![])).collect();
    let cond = |arg: u8, op, value| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(err)
    };
    let mut clone_rules = Vec::new();
    for &flag in NAMESPACE_FLAGS {
        clone_rules.push(
            SeccompRule::new(vec![cond(0, SeccompCmpOp::MaskedEq(flag), flag)?]).map_err(err)?,
        );
    }
    rules.insert(libc::SYS_clone, clone_rules);
    // prctl(PR_SET_SECCOMP) is the other way to load a filter.
    rules.insert(
        libc::SYS_prctl,
        vec![
            SeccompRule::new(vec![cond(
                0,
                SeccompCmpOp::Eq,
                libc::PR_SET_SECCOMP as u64,
            )?])
            .map_err(err)?,
        ],
    );
    let main = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| format!("seccomp: {e}"))?;

    // The hand-written filter first: the main one refuses further filters.
    let listener = notify::install(&filter::program(supervised)?, supervised).map_err(err)?;
    seccompiler::apply_filter(&bpf(main)?).map_err(err)?;
    Ok(listener)
}
