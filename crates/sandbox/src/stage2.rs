//! The helper's second stage, forked by the first: PID 1 of the sandbox, root of its own user namespace. It
//! builds the new root, pivots into it, confines itself (limits, Landlock, capabilities,
//! seccomp), starts the tool, reaps every process until the tool exits, and exits with
//! the tool's status, which takes down whatever the tool left behind.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;

use rustix::fs::{FileType, StatVfsMountFlags};
use rustix::mount::{MountFlags, MountPropagationFlags, MoveMountFlags, UnmountFlags};
use rustix::process::{Signal, WaitOptions};

use super::spec::Spec;
use super::{confine, fds, handoff, notify};

/// Where the new root is assembled before `pivot_root`. Any existing directory does: it
/// is only covered in this process's private mount namespace.
const STAGING: &str = "/tmp";

pub(super) fn run(
    spec: &Spec,
    sources: Vec<OwnedFd>,
    handoff: Option<handoff::Child>,
) -> Result<i32, String> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
        .map_err(|e| format!("prctl(PR_SET_PDEATHSIG): {e}"))?;
    let dns = match spec.network {
        Some(_) => Some(private_network()?),
        None => None,
    };
    if !sources.is_empty() && sources.len() != spec.mounts.len() {
        return Err("the sandbox spec names a descriptor per mount, or none".into());
    }

    build_root(spec, &sources)?;
    drop(sources);
    enter_root()?;
    rustix::system::sethostname(spec.hostname.as_bytes())
        .map_err(|e| format!("sethostname: {e}"))?;

    // Nothing the helper inherited or opened may reach the tool.
    fds::cloexec_from_3()?;

    let listener = confine::apply(spec)?;
    match (handoff, listener, dns) {
        (Some(handoff), Some(listener), Some(dns)) => handoff.send([&listener, &dns])?,
        (None, None, None) => {}
        _ => return Err("the network supervisor has nothing to serve".into()),
    }
    // The tool may not read this process's memory map or executable link (the helper's
    // host path): not dumpable, PID 1 is out of the tool's reach through /proc. The
    // first stage has its descriptors by now, and the tool's own exec makes it dumpable
    // again.
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(|e| format!("prctl(PR_SET_DUMPABLE): {e}"))?;

    let child = Command::new(&spec.program)
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", spec.program.display()))?;
    let tool = rustix::process::Pid::from_child(&child);
    Ok(reap_until(tool))
}

/// A networked tool's own network namespace, with its loopback up, and the socket on
/// which the DNS relay answers it (127.0.0.1:53, what its resolv.conf names).
fn private_network() -> Result<OwnedFd, String> {
    fds::unshare(rustix::thread::UnshareFlags::NEWNET)
        .map_err(|e| format!("unshare(CLONE_NEWNET): {e}"))?;
    notify::loopback_up().map_err(|e| format!("bringing the loopback up: {e}"))?;
    let socket = rustix::net::socket_with(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::DGRAM,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|e| format!("socket: {e}"))?;
    let at = std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, 53);
    rustix::net::bind(&socket, &at).map_err(|e| format!("binding the DNS relay to {at}: {e}"))?;
    Ok(socket)
}

/// As PID 1, every orphan in the sandbox becomes our child: reap them all, and return
/// when the tool itself is gone.
fn reap_until(tool: rustix::process::Pid) -> i32 {
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid == tool => {
                if let Some(code) = status.exit_status() {
                    return code;
                }
                return 128 + status.terminating_signal().unwrap_or(0);
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return 1,
        }
    }
}

fn inside(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// A path in the new root being built, as the tool will see it. What the helper reports
/// reaches the tool's caller: it names the sandbox's paths, never where they are staged
/// or where their contents come from on the host.
fn shown(path: &Path) -> String {
    match path.strip_prefix(STAGING) {
        Ok(rest) => Path::new("/").join(rest).display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

fn build_root(spec: &Spec, sources: &[OwnedFd]) -> Result<(), String> {
    let root = Path::new(STAGING);
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .map_err(|e| format!("making mounts private: {e}"))?;
    mount_tmpfs(root, "mode=0755,size=16m", MountFlags::empty())?;
    // /tmp first: a server's granted host paths keep their own paths, which may lie
    // under /tmp, and must land on top of it, not under it.
    let tmp = root.join("tmp");
    make_mountpoint(&tmp, true)?;
    mount_tmpfs(
        &tmp,
        &format!("mode=1777,size={}", spec.tmp_bytes.max(4096)),
        MountFlags::empty(),
    )?;

    for (i, m) in spec.mounts.iter().enumerate() {
        let target = inside(root, &m.target);
        let fd = sources.get(i);
        let stat = match fd {
            Some(fd) => rustix::fs::fstat(fd),
            None => rustix::fs::stat(&m.source),
        };
        let is_dir = stat
            .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
            .map_err(|e| format!("cannot look at what {} shows: {e}", m.target.display()))?;
        make_mountpoint(&target, is_dir)?;
        let attached = match fd {
            Some(fd) => rustix::mount::move_mount(
                fd,
                "",
                rustix::fs::CWD,
                &target,
                MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
            ),
            None => rustix::mount::mount_bind_recursive(&m.source, &target),
        };
        attached.map_err(|e| format!("cannot mount {}: {e}", m.target.display()))?;
        if !m.writable {
            remount_read_only(&target)?;
        }
    }
    for (path, to) in &spec.links {
        let link = inside(root, path);
        create_parent(&link)?;
        std::os::unix::fs::symlink(to, &link)
            .map_err(|e| format!("symlink {}: {e}", path.display()))?;
    }
    for (path, content) in &spec.files {
        let file = inside(root, path);
        create_parent(&file)?;
        std::fs::write(&file, content).map_err(|e| format!("write {}: {e}", path.display()))?;
    }

    build_dev(root, spec.tmp_bytes)?;

    let proc = root.join("proc");
    make_mountpoint(&proc, true)?;
    rustix::mount::mount(
        "proc",
        &proc,
        "proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        None,
    )
    .map_err(|e| format!("mounting /proc: {e}"))?;
    Ok(())
}

fn build_dev(root: &Path, shm_bytes: u64) -> Result<(), String> {
    let dev = root.join("dev");
    make_mountpoint(&dev, true)?;
    mount_tmpfs(&dev, "mode=0755,size=64k", MountFlags::NOEXEC)?;
    for name in ["null", "zero", "full", "random", "urandom"] {
        let target = dev.join(name);
        make_mountpoint(&target, false)?;
        rustix::mount::mount_bind(Path::new("/dev").join(name).as_path(), &target)
            .map_err(|e| format!("bind /dev/{name}: {e}"))?;
    }
    for (name, to) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(to, dev.join(name))
            .map_err(|e| format!("symlink /dev/{name}: {e}"))?;
    }
    let shm = dev.join("shm");
    make_mountpoint(&shm, true)?;
    mount_tmpfs(
        &shm,
        &format!("mode=1777,size={}", shm_bytes.max(4096)),
        MountFlags::empty(),
    )?;
    Ok(())
}

fn enter_root() -> Result<(), String> {
    rustix::process::chdir(STAGING).map_err(|e| format!("chdir: {e}"))?;
    // pivot_root(".", ".") stacks the old root under the new one; detaching "." then
    // removes the old root, leaving only the new.
    rustix::process::pivot_root(".", ".").map_err(|e| format!("pivot_root: {e}"))?;
    rustix::mount::unmount(".", UnmountFlags::DETACH)
        .map_err(|e| format!("detaching the host's root: {e}"))?;
    rustix::process::chdir("/").map_err(|e| format!("chdir /: {e}"))?;
    rustix::mount::mount_remount(
        "/",
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
        "",
    )
    .map_err(|e| format!("making / read-only: {e}"))
}

fn mount_tmpfs(target: &Path, options: &str, extra: MountFlags) -> Result<(), String> {
    let data = std::ffi::CString::new(options).map_err(|e| e.to_string())?;
    rustix::mount::mount(
        "tmpfs",
        target,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV | extra,
        Some(data.as_c_str()),
    )
    .map_err(|e| format!("mounting a tmpfs on {}: {e}", shown(target)))
}

/// A read-only remount of a bind mount must repeat the flags the kernel locked on the
/// original (nosuid, nodev, noexec, atime), or a user namespace is refused.
fn remount_read_only(target: &Path) -> Result<(), String> {
    let st = rustix::fs::statvfs(target).map_err(|e| format!("statvfs {}: {e}", shown(target)))?;
    let mut flags = MountFlags::BIND | MountFlags::RDONLY;
    for (have, add) in [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ] {
        if st.f_flag.contains(have) {
            flags |= add;
        }
    }
    rustix::mount::mount_remount(target, flags, "")
        .map_err(|e| format!("making {} read-only: {e}", shown(target)))
}

fn create_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(parent) => {
            std::fs::create_dir_all(parent).map_err(|e| format!("mkdir {}: {e}", shown(parent)))
        }
        None => Ok(()),
    }
}

fn make_mountpoint(path: &Path, dir: bool) -> Result<(), String> {
    if dir {
        return std::fs::create_dir_all(path).map_err(|e| format!("mkdir {}: {e}", shown(path)));
    }
    create_parent(path)?;
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map(drop)
        .map_err(|e| format!("create {}: {e}", shown(path)))
}
