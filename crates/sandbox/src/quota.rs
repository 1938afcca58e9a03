//! `[sandbox] home_mb` and `home_files`: how much of the host's disk one user's tools may
//! fill. The tools' only lasting writable place is the user's home, so its size is the
//! quota's measure ([`usage`](super::usage)).
//!
//! Three checks keep a home near its quota: a call for a user whose home is full (at or over it) is
//! refused; a sandbox starts with its largest file (`RLIMIT_FSIZE`) no larger than what
//! is left; and while any of the user's sandboxes runs, the home is measured about every
//! second, and once it is over, every sandbox of the user is stopped with an error saying
//! why. Between two measurements a tool can still write more files than is left: the
//! overshoot is what it writes in that interval. A filesystem quota on the tools' uids is
//! the hard limit for an operator who needs one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::layout;
use super::usage::{self, Bounds, Cut, Usage};
use crate::SandboxError;

/// The shortest and longest time between two measurements of a home in use; in between,
/// a walk may take a twentieth of the time.
const EVERY: Duration = Duration::from_secs(1);
const AT_MOST_EVERY: Duration = Duration::from_secs(60);
/// How long a measurement stands for a home no sandbox wrote since: what the host (or
/// the operator) did to the home meanwhile shows after this.
const TRUSTED_FOR: Duration = Duration::from_secs(30);
/// Folders nested deeper than this make the home unmeasurable, hence over its quota.
const MAX_DEPTH: usize = 128;
/// Without `home_files`, the walk still stops somewhere: a home with more entries than
/// this is unmeasurable, hence over its quota.
const MAX_ENTRIES: u64 = 10_000_000;

#[derive(Debug)]
pub(crate) struct HomeQuota {
    /// In bytes; `None`: no quota.
    bytes: Option<u64>,
    /// Entries; `None`: no limit (the walk still stops somewhere).
    entries: Option<u64>,
    homes: Mutex<HashMap<PathBuf, Arc<Home>>>,
}

#[derive(Debug)]
struct Home {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The last measurement and when it began.
    last: Option<(Usage, Instant)>,
    /// Bumped whenever a sandbox of this home starts or ends: a measurement begun at an
    /// older generation may have missed what that sandbox wrote.
    generation: u64,
    measured: u64,
    /// The user's own tool root inside the home, which tools cannot write.
    skip: Vec<PathBuf>,
    running: Vec<Arc<Running>>,
    /// Whether a task is measuring this home periodically.
    watched: bool,
    interval: Duration,
}

/// One sandbox of the user, by its process group.
#[derive(Debug)]
struct Running {
    pgid: i32,
    stopped: OnceLock<String>,
}

/// A sandbox under the quota's watch. Drop it once the sandbox is gone.
#[derive(Debug)]
pub struct Watched {
    home: Arc<Home>,
    running: Arc<Running>,
}

impl Watched {
    /// Why the quota stopped the sandbox, if it did: the error its calls end with.
    pub fn stopped(&self) -> Option<&str> {
        self.running.stopped.get().map(String::as_str)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let mut st = self.home.state();
        st.running.retain(|r| !Arc::ptr_eq(r, &self.running));
        st.generation += 1;
    }
}

impl Home {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl HomeQuota {
    pub(crate) fn new(home_mb: u64, home_files: u64) -> HomeQuota {
        HomeQuota {
            bytes: (home_mb > 0).then(|| home_mb.saturating_mul(1024 * 1024)),
            entries: (home_files > 0).then_some(home_files),
            homes: Mutex::default(),
        }
    }

    fn enabled(&self) -> bool {
        self.bytes.is_some() || self.entries.is_some()
    }

    fn home(&self, path: &Path) -> Arc<Home> {
        let mut homes = self.homes.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(homes.entry(path.to_path_buf()).or_insert_with(|| {
            Arc::new(Home {
                path: path.to_path_buf(),
                state: Mutex::new(State {
                    interval: EVERY,
                    ..State::default()
                }),
            })
        }))
    }

    /// Whether a sandbox may start for the home `path`: `Err` says why not (the home is
    /// full), `Ok` how many bytes are left, if there is a byte quota. `roots`
    /// are the tool roots the sandbox shows; those inside the home are not counted.
    pub(crate) async fn admit(
        &self,
        path: &Path,
        roots: &[PathBuf],
    ) -> Result<Option<u64>, SandboxError> {
        if !self.enabled() {
            return Ok(None);
        }
        let home = self.home(path);
        let cached = {
            let mut st = home.state();
            st.skip = roots
                .iter()
                .filter(|r| r.starts_with(path) && *r != path)
                .cloned()
                .collect();
            match &st.last {
                Some((u, at))
                    if st.running.is_empty()
                        && st.measured == st.generation
                        && at.elapsed() < TRUSTED_FOR =>
                {
                    Some(u.clone())
                }
                // Within the interval, a measurement stands while sandboxes write (the
                // periodic one keeps it fresh), and for a home whose walk is costly
                // (over a twentieth of a second): such a home is walked at most once an
                // interval, whatever the rate of calls.
                Some((u, at))
                    if at.elapsed() < st.interval
                        && (!st.running.is_empty() || st.interval > EVERY) =>
                {
                    Some(u.clone())
                }
                _ => None,
            }
        };
        let usage = match cached {
            Some(u) => u,
            None => self.measure(&home).await?,
        };
        // A full home leaves a new sandbox no byte to write: refused as well.
        if let Some(over) = self.over(&usage, 0) {
            return Err(SandboxError::Quota(format!(
                "refused: {over}. No tool runs for this user until files are removed from \
                 the home or the quota is raised"
            )));
        }
        Ok(self.bytes.map(|b| b.saturating_sub(usage.bytes)))
    }

    /// Watches the sandbox whose process group is `pgid`, which runs with the home
    /// `path` mounted, until the returned handle is dropped. Needs a Tokio runtime to
    /// measure periodically; without one the sandbox is only checked at its start.
    pub(crate) fn watch(self: &Arc<Self>, path: &Path, pgid: i32) -> Option<Watched> {
        if !self.enabled() {
            return None;
        }
        let home = self.home(path);
        let running = Arc::new(Running {
            pgid,
            stopped: OnceLock::new(),
        });
        let start = {
            let mut st = home.state();
            st.running.push(Arc::clone(&running));
            st.generation += 1;
            !std::mem::replace(&mut st.watched, true)
        };
        if start {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(Arc::clone(self).patrol(Arc::clone(&home)));
                }
                Err(_) => home.state().watched = false,
            }
        }
        Some(Watched { home, running })
    }

    /// Measures `home` while any of its sandboxes runs; stops them all once it is over.
    async fn patrol(self: Arc<Self>, home: Arc<Home>) {
        loop {
            let interval = {
                let mut st = home.state();
                if st.running.is_empty() {
                    st.watched = false;
                    return;
                }
                st.interval
            };
            tokio::time::sleep(interval).await;
            if home.state().running.is_empty() {
                continue;
            }
            let usage = match self.measure(&home).await {
                Ok(u) => u,
                Err(e) => {
                    tracing::warn!(home = %home.path.display(), "cannot measure a home: {e}");
                    continue;
                }
            };
            // A sandbox that wrote exactly what was left may go on; one past it may not.
            let Some(over) = self.over(&usage, 1) else {
                continue;
            };
            let why = format!("stopped: {over}");
            let running = home.state().running.clone();
            for r in running {
                if r.stopped.set(why.clone()).is_ok() {
                    tracing::warn!(home = %home.path.display(), pgid = r.pgid, "{why}");
                    if let Some(pid) = rustix::process::Pid::from_raw(r.pgid) {
                        // Gone already is as good.
                        let _ =
                            rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                    }
                }
            }
        }
    }

    async fn measure(&self, home: &Arc<Home>) -> Result<Usage, SandboxError> {
        let (generation, skip) = {
            let st = home.state();
            (st.generation, st.skip.clone())
        };
        let bounds = Bounds {
            // One past the limit tells "over" from "at".
            entries: self.entries.map_or(MAX_ENTRIES, |n| n.saturating_add(1)),
            depth: MAX_DEPTH,
        };
        let began = Instant::now();
        let path = home.path.clone();
        let usage = tokio::task::spawn_blocking(move || usage::measure(&path, &skip, bounds))
            .await
            .map_err(|e| SandboxError::Quota(format!("measuring the home failed: {e}")))?
            .map_err(|e| {
                tracing::warn!(home = %home.path.display(), "cannot measure a home: {e}");
                SandboxError::Quota(format!(
                    "cannot measure the home ({}) for its quota: {e}",
                    layout::USER
                ))
            })?;
        let took = began.elapsed();
        let mut st = home.state();
        st.last = Some((usage.clone(), began));
        st.measured = generation;
        st.interval = (took * 20).clamp(EVERY, AT_MOST_EVERY);
        Ok(usage)
    }

    /// What is wrong with a home of this usage, in the sandbox's terms, when it holds at
    /// least `beyond` bytes more than its quota; `None` if nothing.
    fn over(&self, usage: &Usage, beyond: u64) -> Option<String> {
        let home = layout::USER;
        match &usage.cut {
            Some(Cut::Entries) => {
                return Some(format!(
                    "the home ({home}) holds more than {} files and folders, its quota \
                     ([sandbox] home_files)",
                    self.entries.unwrap_or(MAX_ENTRIES)
                ));
            }
            Some(Cut::Depth(at)) => {
                return Some(format!(
                    "the home ({home}) nests folders more than {MAX_DEPTH} deep, which its \
                     quota cannot measure ({})",
                    Path::new(home).join(at).display()
                ));
            }
            Some(Cut::Unreadable(at)) => {
                return Some(format!(
                    "the home ({home}) has a folder its quota cannot measure ({}: \
                     permission denied)",
                    Path::new(home).join(at).display()
                ));
            }
            None => {}
        }
        let quota = self.bytes?;
        (usage.bytes >= quota.saturating_add(beyond)).then(|| {
            format!(
                "the home ({home}) is full: {} used of its quota of {} ([sandbox] home_mb)",
                mib(usage.bytes),
                mib(quota)
            )
        })
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_home_over_its_quota_is_refused_and_one_under_gets_what_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let quota = Arc::new(HomeQuota::new(1, 0));
        let left = quota.admit(&home, &[]).await.unwrap().unwrap();
        assert!(left > 1000 * 1024 && left < 1024 * 1024, "{left}");
        // A sandbox ran and wrote: the next admission measures again.
        let watched = quota.watch(&home, 0).unwrap();
        std::fs::write(home.join("big"), vec![1u8; 2 << 20]).unwrap();
        drop(watched);
        let why = quota.admit(&home, &[]).await.unwrap_err().to_string();
        assert!(why.contains("is full: 2.0 MiB used"), "{why}");
        assert!(
            why.contains("of its quota of 1.0 MiB ([sandbox] home_mb)"),
            "{why}"
        );
        assert!(why.contains("/officer/user"), "{why}");
        assert!(!why.contains(&*tmp.path().to_string_lossy()), "{why}");
        std::fs::remove_file(home.join("big")).unwrap();
        // What the host did outside any sandbox shows once the measurement is old;
        // a fresh quota sees it at once.
        let quota = HomeQuota::new(1, 0);
        assert!(quota.admit(&home, &[]).await.is_ok());
    }

    #[tokio::test]
    async fn too_many_files_are_over_the_quota_too() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::write(tmp.path().join(format!("f{i}")), "").unwrap();
        }
        let why = HomeQuota::new(0, 4)
            .admit(tmp.path(), &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(why.contains("more than 4 files and folders"), "{why}");
        assert_eq!(
            HomeQuota::new(0, 6).admit(tmp.path(), &[]).await.unwrap(),
            None
        );
        assert_eq!(
            HomeQuota::new(0, 0).admit(tmp.path(), &[]).await.unwrap(),
            None
        );
    }
}
