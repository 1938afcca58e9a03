//! Helpers started ahead of need. Starting the helper (a large binary) and moving it into
//! its cgroups (a kernel grace period per hierarchy on cgroup v1) take milliseconds that
//! need not fall on a call: a few helpers wait, already in fresh cgroups (and, on a root
//! host, in a fresh network namespace), for the spec of the next sandbox on their stdin.
//! A used spare is replaced once the tool that took it is done with the call that needed
//! it (a worker's first call, a per-call process's whole run): a helper starting
//! meanwhile would only take CPU from that call.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::process::{Child, Command};
use tokio::sync::Notify;

use super::cgroup::{Cgroups, Lease};
use super::spec::{EXEC_MODE, READY};

/// A helper waiting for its spec, with the cgroups it already sits in.
#[derive(Debug)]
pub(crate) struct Spare {
    pub child: Child,
    pub lease: Option<Lease>,
}

#[derive(Default, Debug)]
pub(crate) struct Spares {
    ready: Mutex<Vec<Spare>>,
    starting: Mutex<usize>,
    changed: Notify,
}

/// Limits a spare's cgroups get: memory and processes.
#[derive(Clone, Copy)]
pub(crate) struct GroupLimits {
    pub memory: u64,
    pub processes: u64,
}

impl Spares {
    /// A ready helper, if one is waiting (one that died meanwhile is dropped).
    pub(crate) fn take(&self) -> Option<Spare> {
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(mut spare) = ready.pop() {
            if matches!(spare.child.try_wait(), Ok(None)) {
                return Some(spare);
            }
        }
        None
    }

    /// Starts helpers in the background until `wanted` are ready or starting.
    pub(crate) fn refill(
        self: &Arc<Self>,
        wanted: usize,
        helper: &Path,
        cgroups: Option<Arc<Cgroups>>,
        limits: GroupLimits,
    ) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let missing = {
            let ready = self.ready.lock().unwrap_or_else(|e| e.into_inner()).len();
            let mut starting = self.starting.lock().unwrap_or_else(|e| e.into_inner());
            let missing = wanted.saturating_sub(ready + *starting);
            *starting += missing;
            missing
        };
        for _ in 0..missing {
            let (spares, helper, cgroups) =
                (Arc::clone(self), helper.to_path_buf(), cgroups.clone());
            handle.spawn(async move {
                let spare = start(&helper, cgroups.as_deref(), limits).await;
                *spares.starting.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
                match spare {
                    Ok(spare) => spares
                        .ready
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(spare),
                    Err(why) => tracing::warn!("could not start a spare sandbox helper: {why}"),
                }
                spares.changed.notify_waiters();
            });
        }
    }

    /// Waits until no helper is starting any more.
    pub(crate) async fn settled(&self) {
        loop {
            let changed = self.changed.notified();
            if *self.starting.lock().unwrap_or_else(|e| e.into_inner()) == 0 {
                return;
            }
            changed.await;
        }
    }
}

/// Starts a helper that waits for its spec on stdin.
pub(crate) fn command(helper: &Path) -> Command {
    let mut command = Command::new(helper);
    command
        // PID 1 of every sandbox is this process's fork, and its command line is there
        // for the tool to read: not the binary's host path.
        .arg0("toolhost")
        .arg(EXEC_MODE)
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    command
}

async fn start(
    helper: &Path,
    cgroups: Option<&Cgroups>,
    limits: GroupLimits,
) -> Result<Spare, String> {
    let mut child = command(helper)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", helper.display()))?;
    let Some(cgroups) = cgroups else {
        started(&mut child).await?;
        return Ok(Spare { child, lease: None });
    };
    let lease = cgroups.lease(limits.memory, limits.processes)?;
    let pid = child.id().ok_or("the helper exited at once")?;
    let dirs = lease.dirs.clone();
    tokio::task::spawn_blocking(move || {
        for dir in &dirs {
            std::fs::write(dir.join("cgroup.procs"), pid.to_string())
                .map_err(|e| format!("cannot move the helper into {}: {e}", dir.display()))?;
        }
        Ok::<(), String>(())
    })
    .await
    .map_err(|e| e.to_string())??;
    started(&mut child).await?;
    Ok(Spare {
        child,
        lease: Some(lease),
    })
}

/// Waits until a helper has started (loaded, and done what needs no spec): until then a
/// spare is not ready, and a sandbox handed to it would wait on its start-up.
pub(crate) async fn started(child: &mut Child) -> Result<(), String> {
    use tokio::io::AsyncReadExt;
    let mut byte = [0u8; 1];
    let read = match child.stdout.as_mut() {
        Some(stdout) => stdout.read_exact(&mut byte).await.map(drop),
        None => Err(std::io::Error::other("no stdout")),
    };
    match read {
        Ok(()) if byte[0] == READY => Ok(()),
        Ok(()) => Err(format!(
            "the sandbox helper started with {:?}, not its ready byte",
            byte[0]
        )),
        Err(e) => Err(format!("the sandbox helper did not start: {e}")),
    }
}
