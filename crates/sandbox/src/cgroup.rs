//! Memory and process-count limits per sandbox, through cgroups where the host may
//! create them: v2 (one hierarchy) or v1 (one per controller). The host creates a group
//! per sandbox, the helper's first stage joins it, and the host removes it once the
//! sandbox is gone.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const ROOT: &str = "/sys/fs/cgroup";

#[derive(Debug)]
pub(crate) struct Cgroups {
    /// `memory` and `pids` parents under which each sandbox gets its own group.
    memory: PathBuf,
    pids: PathBuf,
}

/// Every runtime of this process shares the `toolhost-<pid>` parents, so the groups under
/// them are numbered process-wide: a runtime's group removed late (once its processes are
/// reaped) must never be another runtime's fresh one of the same name.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A sandbox's groups; removed (in the background, once empty) when dropped.
#[derive(Debug)]
pub struct Lease {
    pub(crate) dirs: Vec<PathBuf>,
}

impl Cgroups {
    /// Sets up `toolhost-<pid>` parents, or says why cgroups cannot be used.
    pub(crate) fn new() -> Result<Cgroups, String> {
        let root = Path::new(ROOT);
        let base = format!("toolhost-{}", std::process::id());
        let (memory, pids) = if root.join("cgroup.controllers").exists() {
            let parent = root.join(&base);
            enable(root, &["memory", "pids"])?;
            mkdir(&parent)?;
            enable(&parent, &["memory", "pids"])?;
            (parent.clone(), parent)
        } else {
            let (memory, pids) = (
                root.join("memory").join(&base),
                root.join("pids").join(&base),
            );
            mkdir(&memory)?;
            mkdir(&pids)?;
            (memory, pids)
        };
        sweep_stale(root);
        Ok(Cgroups { memory, pids })
    }

    pub(crate) fn describe(&self) -> String {
        if self.memory == self.pids {
            format!("v2 at {}", self.memory.display())
        } else {
            format!(
                "v1 at {} and {}",
                self.memory.display(),
                self.pids.display()
            )
        }
    }

    /// A fresh group limited to `memory` bytes and `processes` tasks.
    pub(crate) fn lease(&self, memory: u64, processes: u64) -> Result<Lease, String> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("s{n}");
        if self.memory == self.pids {
            // Another runtime of this process that ended may have removed the parent.
            if !self.memory.is_dir() {
                mkdir(&self.memory)?;
                enable(&self.memory, &["memory", "pids"])?;
            }
            let dir = self.memory.join(&name);
            mkdir(&dir)?;
            let lease = Lease {
                dirs: vec![dir.clone()],
            };
            write(&dir.join("memory.max"), memory)?;
            write(&dir.join("memory.swap.max"), 0).ok();
            write(&dir.join("pids.max"), processes)?;
            Ok(lease)
        } else {
            let (m, p) = (self.memory.join(&name), self.pids.join(&name));
            mkdir(&self.memory)?;
            mkdir(&self.pids)?;
            mkdir(&m)?;
            let mut lease = Lease {
                dirs: vec![m.clone()],
            };
            mkdir(&p)?;
            lease.dirs.push(p.clone());
            write(&m.join("memory.limit_in_bytes"), memory)?;
            write(&p.join("pids.max"), processes)?;
            Ok(lease)
        }
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.memory);
        let _ = std::fs::remove_dir(&self.pids);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let dirs = std::mem::take(&mut self.dirs);
        if dirs.iter().all(|d| std::fs::remove_dir(d).is_ok()) {
            return;
        }
        // A group can only go once its processes are reaped, which may lag the kill.
        let remove = move || {
            for _ in 0..100 {
                if dirs.iter().all(|d| match std::fs::remove_dir(d) {
                    Ok(()) => true,
                    Err(e) => e.kind() == std::io::ErrorKind::NotFound,
                }) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        let _ = std::thread::Builder::new()
            .name("cgroup-cleanup".into())
            .spawn(remove);
    }
}

fn mkdir(dir: &Path) -> Result<(), String> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("cannot create {}: {e}", dir.display())),
    }
}

fn write(file: &Path, value: u64) -> Result<(), String> {
    std::fs::write(file, value.to_string())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))
}

fn enable(dir: &Path, controllers: &[&str]) -> Result<(), String> {
    let file = dir.join("cgroup.subtree_control");
    for c in controllers {
        std::fs::write(&file, format!("+{c}"))
            .map_err(|e| format!("cannot enable the {c} controller in {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Groups of earlier hosts that died without cleaning up.
fn sweep_stale(root: &Path) {
    for parent in [root.to_path_buf(), root.join("memory"), root.join("pids")] {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("toolhost-")) else {
                continue;
            };
            let alive = pid
                .parse::<u32>()
                .is_ok_and(|p| Path::new("/proc").join(p.to_string()).exists());
            if alive {
                continue;
            }
            if let Ok(children) = std::fs::read_dir(e.path()) {
                for c in children.flatten().filter(|c| c.path().is_dir()) {
                    let _ = std::fs::remove_dir(c.path());
                }
            }
            let _ = std::fs::remove_dir(e.path());
        }
    }
}
