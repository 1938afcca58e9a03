//! The helper's first stage: runs in the host's namespaces, still with the host's
//! credentials. It joins the cgroups, clones every mount source while it can still reach
//! them, becomes the tool's unprivileged uid, creates the namespaces, maps the uid, and
//! forks the second stage, which is PID 1 of the new PID namespace.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;

use rustix::fs::{Mode, OFlags};
use rustix::mount::OpenTreeFlags;
use rustix::process::{Pid, Signal, WaitOptions};
use rustix::thread::{LinkNameSpaceType, UnshareFlags};

use super::egress::Egress;
use super::fds::{self, Forked};
use super::spec::Spec;
use super::supervise::Supervisor;
use super::{dns, handoff, stage2};

/// What the first stage does before its spec arrives, the same for every sandbox: in a
/// spare helper, off the path of the call that will use it.
pub(super) struct Ahead {
    /// On a root host, the helper has left the host's network namespace for a fresh,
    /// empty one: the costliest namespace to make (most of a millisecond). The host's
    /// user namespace owns it, in which the tool holds no capability, so the tool can
    /// configure it no more than one of its own (it drops every capability anyway).
    /// This is the way back, for a tool with the network.
    host_network: Option<OwnedFd>,
}

impl Ahead {
    pub(super) fn prepare() -> Ahead {
        // Should this fail, the namespace is made later, with the others.
        Ahead {
            host_network: fresh_network().ok(),
        }
    }
}

fn fresh_network() -> rustix::io::Result<OwnedFd> {
    if !rustix::process::getuid().is_root() {
        // Only a user namespace of its own, made once the spec is known, lets it.
        return Err(rustix::io::Errno::PERM);
    }
    let host = rustix::fs::open(
        "/proc/self/ns/net",
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    fds::unshare(UnshareFlags::NEWNET)?;
    Ok(host)
}

/// Runs the first stage and returns the exit status to leave with (or re-raises the
/// signal that ended the tool).
pub(super) fn run(json: &str, ahead: Ahead) -> Result<i32, String> {
    let spec: Spec =
        serde_json::from_str(json).map_err(|e| format!("invalid sandbox spec: {e}"))?;

    let network_made = match (ahead.host_network, &spec.network) {
        (Some(host), Some(_)) => {
            rustix::thread::move_into_link_name_space(
                host.as_fd(),
                Some(LinkNameSpaceType::Network),
            )
            .map_err(|e| format!("returning to the host's network namespace: {e}"))?;
            false
        }
        (Some(_), None) => true,
        (None, _) => false,
    };

    // What this stage reports reaches the tool's caller: it names what the sandbox
    // shows, never a host path.
    for cg in &spec.cgroups {
        let procs = cg.join("cgroup.procs");
        std::fs::write(&procs, format!("{}\n", std::process::id()))
            .map_err(|e| format!("cannot join the sandbox's cgroups: {e}"))?;
    }

    // A root host clones each source as a detached mount now, while it can still reach
    // it (the new uid may not: a cache under /root, a private temporary directory); the
    // second stage attaches them. An unprivileged host keeps its uid, so the second
    // stage binds the paths themselves.
    let mut sources: Vec<OwnedFd> = Vec::with_capacity(spec.mounts.len());
    if rustix::process::getuid().is_root() {
        for m in &spec.mounts {
            let fd = rustix::mount::open_tree(
                rustix::fs::CWD,
                &m.source,
                OpenTreeFlags::OPEN_TREE_CLONE
                    | OpenTreeFlags::AT_RECURSIVE
                    | OpenTreeFlags::OPEN_TREE_CLOEXEC,
            )
            .map_err(|e| format!("cannot open what {} shows: {e}", m.target.display()))?;
            sources.push(fd);
        }
    }

    let (uid, gid) = become_tool_user(spec.uid, spec.gid)?;
    // Changing credentials made /proc/self root's; the uid and gid maps below are
    // written through it. (No parent-death signal here: it follows the host *thread*
    // that spawned us, which may retire. The host kills us by process group instead.)
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::Dumpable)
        .map_err(|e| format!("prctl(PR_SET_DUMPABLE): {e}"))?;

    let mut flags = UnshareFlags::NEWUSER
        | UnshareFlags::NEWNS
        | UnshareFlags::NEWPID
        | UnshareFlags::NEWIPC
        | UnshareFlags::NEWUTS
        | UnshareFlags::NEWCGROUP;
    // A networked tool's namespace is made by PID 1, which keeps this stage on the
    // host's network, where the supervisor makes the tool's outside connections.
    if spec.network.is_none() && !network_made {
        flags |= UnshareFlags::NEWNET;
    }
    fds::unshare(flags).map_err(|e| format!("unshare({flags:?}): {e}"))?;
    write_map("/proc/self/setgroups", "deny")?;
    write_map("/proc/self/uid_map", &format!("0 {uid} 1\n"))?;
    write_map("/proc/self/gid_map", &format!("0 {gid} 1\n"))?;

    // The first child after unshare(CLONE_NEWPID) is PID 1 of the new namespace. A fork,
    // not a new exec of this large binary: that would cost milliseconds for nothing.
    let (handoff, proc) = match spec.network {
        Some(_) => {
            // The host's /proc, for the supervisor: the sandbox's will hide it.
            let proc = rustix::fs::open(
                "/proc",
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| format!("cannot open /proc: {e}"))?;
            (Some(handoff::pipes()?), Some(proc))
        }
        None => (None, None),
    };
    let (parent, child) = match handoff {
        Some((parent, child)) => (Some(parent), Some(child)),
        None => (None, None),
    };

    // SAFETY: the helper is single-threaded: `helper_main` runs first thing in `main`,
    // before anything could start a thread, and nothing in this stage up to here starts
    // one.
    #[allow(unsafe_code)]
    let forked = unsafe { fds::fork() }?;
    let init = match forked {
        Forked::Child => {
            drop(parent);
            let code = match stage2::run(&spec, sources, child) {
                Ok(code) => code,
                Err(why) => {
                    eprintln!("toolhost sandbox: {why}");
                    super::spec::SETUP_FAILED
                }
            };
            std::process::exit(code);
        }
        Forked::Parent(pid) => pid,
    };
    drop(sources);
    drop(child);
    if let (Some(parent), Some(proc), Some(egress)) = (parent, proc, spec.network.clone()) {
        // On failure PID 1 gets no acknowledgement and stops before the tool starts.
        if let Err(why) = supervise(parent, init, egress, proc) {
            eprintln!("toolhost sandbox: {why}");
        }
    }
    let status = loop {
        match rustix::process::waitpid(Some(init), WaitOptions::empty()) {
            Ok(Some((_, status))) => break status,
            Ok(None) | Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(format!("waiting for the sandbox: {e}")),
        }
    };
    let status = std::process::ExitStatus::from_raw(status.as_raw() as i32);

    // PID 1 reports a tool killed by signal N as 128 + N; pass the signal on so the host
    // sees what really happened.
    let signal = status.signal().or_else(|| {
        status
            .code()
            .filter(|c| (129..=192).contains(c))
            .map(|c| c - 128)
    });
    if let Some(sig) = signal.and_then(Signal::from_named_raw) {
        let _ = rustix::process::kill_process(rustix::process::getpid(), sig);
    }
    Ok(status.code().unwrap_or(1))
}

/// Serves the network supervisor and the DNS relay on the descriptors PID 1 hands over,
/// until PID 1 exits.
fn supervise(
    parent: handoff::Parent,
    init: Pid,
    egress: Egress,
    proc: OwnedFd,
) -> Result<(), String> {
    use rustix::event::{PollFd, PollFlags};
    let init_fd = rustix::process::pidfd_open(init, rustix::process::PidfdFlags::empty())
        .map_err(|e| format!("pidfd_open: {e}"))?;
    let Some([listener, dns]) = parent.receive(&init_fd)? else {
        return Ok(());
    };
    let resolvers = egress.dns.clone();
    let supervisor = Supervisor::new(listener, egress, proc)
        .map_err(|e| format!("cannot start the network supervisor: {e}"))?;
    parent.acknowledge()?;
    loop {
        let mut fds = [
            PollFd::new(&init_fd, PollFlags::IN),
            PollFd::from_borrowed_fd(supervisor.listener(), PollFlags::IN),
            PollFd::new(&dns, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(format!("poll: {e}")),
        }
        let ready = fds.map(|f| !f.revents().is_empty());
        if ready[1] {
            supervisor.serve_one();
        }
        if ready[2] {
            dns::relay_one(dns.as_fd(), &resolvers);
        }
        if ready[0] {
            return Ok(());
        }
    }
}

/// On a root host, drops to the uid and gid chosen for this user. Elsewhere the tool
/// runs as the host's own uid (an unprivileged host has no other to give).
fn become_tool_user(uid: u32, gid: u32) -> Result<(u32, u32), String> {
    let me = rustix::process::getuid();
    if !me.is_root() {
        return Ok((me.as_raw(), rustix::process::getgid().as_raw()));
    }
    // Staying root would give the tool the host's root outside its user namespace
    // (files, mounts it can reach): never, whatever the spec says.
    if uid == 0 || gid == 0 {
        return Err(format!(
            "refusing to run a tool as host uid {uid}, gid {gid}: a root host runs tools \
             as unprivileged uids ([sandbox] uid_base, uid_count)"
        ));
    }
    let (u, g) = (
        rustix::process::Uid::from_raw(uid),
        rustix::process::Gid::from_raw(gid),
    );
    rustix::thread::set_thread_groups(&[]).map_err(|e| format!("setgroups: {e}"))?;
    rustix::thread::set_thread_res_gid(g, g, g).map_err(|e| format!("setresgid({gid}): {e}"))?;
    rustix::thread::set_thread_res_uid(u, u, u).map_err(|e| format!("setresuid({uid}): {e}"))?;
    Ok((uid, gid))
}

fn write_map(path: &str, content: &str) -> Result<(), String> {
    std::fs::write(path, content).map_err(|e| format!("cannot write {path}: {e}"))
}
