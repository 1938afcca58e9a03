//! Host work on a tool's behalf, done with the tool user's credentials: a short-lived
//! thread that drops its own uid and gid before it starts, so that what it reads of a tool
//! folder, it reads as the tool would (never as root), then ends.
//!
//! Linux credentials belong to a thread. rustix's `set_thread_*` calls are the raw system
//! calls, which change only the calling thread (glibc's `setresuid` would broadcast the
//! change to every thread of the process); this thread's credentials end with it.
//!
//! It is a thread of its own, not one of Tokio's blocking pool: a Tokio runtime waits for
//! its blocking tasks when it shuts down, and nothing here may keep a server from exiting.

use std::future::Future;

/// Whose credentials the thread takes: `None` keeps the host's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ids {
    pub uid: u32,
    pub gid: u32,
}

/// Runs `work` on a new thread, as `ids` when given; resolves to its result, or to why it
/// could not run. Dropping the future does not stop the thread: `work` should check a flag
/// the caller sets (see [`StopOnDrop`]).
pub(crate) fn run_as<T, F>(
    name: &str,
    ids: Option<Ids>,
    work: F,
) -> impl Future<Output = Result<T, String>> + use<T, F>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let outcome = match ids {
                Some(ids) => become_user(ids).map(|()| work()),
                None => Ok(work()),
            };
            let _ = tx.send(outcome);
        });
    async move {
        spawned.map_err(|e| format!("cannot start a thread: {e}"))?;
        rx.await
            .map_err(|_| "the thread ended without an answer".to_string())?
    }
}

fn become_user(ids: Ids) -> Result<(), String> {
    let (uid, gid) = (
        rustix::process::Uid::from_raw(ids.uid),
        rustix::process::Gid::from_raw(ids.gid),
    );
    rustix::thread::set_thread_groups(&[]).map_err(|e| format!("setgroups: {e}"))?;
    rustix::thread::set_thread_res_gid(gid, gid, gid)
        .map_err(|e| format!("setresgid({}): {e}", ids.gid))?;
    rustix::thread::set_thread_res_uid(uid, uid, uid)
        .map_err(|e| format!("setresuid({}): {e}", ids.uid))?;
    Ok(())
}

/// A flag set when dropped: a host step abandoned by its call (deadline, cancellation)
/// tells the thread doing it to stop early.
#[derive(Default)]
pub(crate) struct StopOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl StopOnDrop {
    pub(crate) fn flag(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        std::sync::Arc::clone(&self.0)
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_ids(status: &str, field: &str) -> Vec<u32> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .unwrap()
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn only_the_thread_changes_user() {
        if !rustix::process::getuid().is_root() {
            return;
        }
        let ids = Ids {
            uid: 61_234,
            gid: 61_235,
        };
        let seen = run_as("test-as-user", Some(ids), || {
            let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
            let denied = std::fs::read_to_string("/proc/1/environ").is_err();
            (
                status_ids(&status, "Uid:"),
                status_ids(&status, "Gid:"),
                denied,
            )
        })
        .await
        .unwrap();
        assert_eq!(seen.0, [61_234; 4]);
        assert_eq!(seen.1, [61_235; 4]);
        assert!(seen.2, "the thread kept root's privileges");
        // The rest of the process is still root: this thread, and every other one.
        assert!(rustix::process::getuid().is_root());
        let me = std::fs::read_to_string("/proc/self/status").unwrap();
        assert_eq!(status_ids(&me, "Uid:"), [0; 4]);
        for task in std::fs::read_dir("/proc/self/task").unwrap() {
            let task = task.unwrap().path();
            // The dropped thread may still be ending.
            let comm = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
            if comm.trim() == "test-as-user" {
                continue;
            }
            if let Ok(status) = std::fs::read_to_string(task.join("status")) {
                assert_eq!(status_ids(&status, "Uid:"), [0; 4], "{status}");
            }
        }
        let host = run_as("test-as-host", None, rustix::process::getuid)
            .await
            .unwrap();
        assert!(host.is_root());
    }
}
