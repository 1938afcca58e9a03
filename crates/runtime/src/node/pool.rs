//! The bounded pool of Node.js workers, with a fair share per user.
//!
//! A worker is dedicated to one [`WorkerKey`]: one user, one tool folder (unless the
//! operator chose `worker_scope = "user"`), and one network setting. So a tool never
//! shares its process, and with it its arguments and secrets, with another user's tools,
//! with another tool (by default), or with tools of another network setting.
//!
//! Calls share a worker up to `max_calls_per_worker`. The pool never holds more than
//! `max_workers` processes, and one user never more than `per_user`, counting those still
//! starting. A user under its share that finds the pool full retires anyone's idle
//! worker to make room; a user at its share makes room among its own workers only, or
//! waits for one of them to go idle: it never holds the slots other users need. When no
//! worker can start, a call that has a worker for its key shares it beyond
//! `max_calls_per_worker`; one that has none waits, for at most its deadline.
//! No lock is held while a worker starts, so one slow start delays nobody else.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;

use super::worker::{Worker, WorkerSpawn};
use crate::RuntimeError;
use crate::config::{ToolEnv, UserSpace};
use crate::executor::Waiting;

/// What one worker serves, and only that.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct WorkerKey {
    pub user: String,
    /// The tool folder; `None` when a worker serves all of its user's tools.
    pub tool: Option<PathBuf>,
    /// Whether its sandbox has the network.
    pub network: bool,
    /// Set for a worker that runs a Platypus plugin (`tool` is its package folder).
    pub plugin: Option<PluginKey>,
}

/// What makes a plugin's worker its own: the code version it loaded (an edit needs a fresh
/// worker) and the folders its sandbox shows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PluginKey {
    pub version: String,
    pub mounts: Arc<[PathBuf]>,
}

#[derive(Default)]
struct State {
    workers: Vec<Arc<Worker>>,
    /// Workers being started; each entry holds a slot in the pool and in its user's share.
    starting: Vec<WorkerKey>,
}

impl State {
    fn total(&self) -> usize {
        self.workers.len() + self.starting.len()
    }

    fn held_by(&self, user: &str) -> usize {
        self.workers.iter().filter(|w| w.key.user == user).count()
            + self.starting.iter().filter(|k| k.user == user).count()
    }

    /// Retires the idle worker among those `eligible` that has been idle longest.
    fn retire_one(&mut self, eligible: impl Fn(&Worker) -> bool, why: &str) {
        let oldest = self
            .workers
            .iter()
            .enumerate()
            .filter(|(_, w)| w.in_flight() == 0 && eligible(w))
            .max_by_key(|(_, w)| w.idle_for())
            .map(|(i, _)| i);
        if let Some(i) = oldest {
            self.workers.remove(i).kill(why);
        }
    }
}

/// The pool's limits.
pub(crate) struct Limits {
    pub max_workers: usize,
    pub per_user: usize,
    pub max_calls_per_worker: usize,
}

pub(crate) struct NodePool {
    spawn: WorkerSpawn,
    env: ToolEnv,
    max_workers: usize,
    per_user: usize,
    max_calls_per_worker: usize,
    state: Mutex<State>,
    /// Signalled when a call ends, a worker starts or retires, so waiting callers look again.
    changed: Arc<Notify>,
}

enum Next {
    Use(Arc<Worker>),
    Start,
    /// Nothing to use or start yet; why, for the error should the call give up.
    Wait(String),
}

impl NodePool {
    pub(crate) fn new(spawn: WorkerSpawn, env: ToolEnv, limits: Limits) -> Self {
        let max_workers = limits.max_workers.max(1);
        NodePool {
            spawn,
            env,
            max_workers,
            per_user: limits.per_user.clamp(1, max_workers),
            max_calls_per_worker: limits.max_calls_per_worker.max(1),
            state: Mutex::new(State::default()),
            changed: Arc::default(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A live worker for `key` (running in `space`), started if needed, with one call
    /// reserved on it. While it waits for room, `waiting` says why (the caller's
    /// deadline and cancellation end the wait, and name it).
    pub(crate) async fn acquire(
        &self,
        space: &UserSpace,
        key: WorkerKey,
        waiting: &Waiting,
    ) -> Result<Arc<Worker>, RuntimeError> {
        loop {
            // Created before looking, so a change made meanwhile is not missed.
            let changed = self.changed.notified();
            match self.next(&key) {
                Next::Use(w) => {
                    waiting.set(None);
                    return Ok(w);
                }
                Next::Wait(why) => {
                    waiting.set(Some(format!("a Node.js worker: {why}")));
                    changed.await;
                }
                Next::Start => {
                    let slot = Starting {
                        pool: self,
                        key: key.clone(),
                    };
                    let started = Worker::spawn(
                        &self.spawn,
                        space,
                        &self.env,
                        key,
                        Arc::clone(&self.changed),
                    )
                    .await;
                    let mut st = self.state();
                    if let Ok(w) = &started {
                        w.reserve();
                        st.workers.push(Arc::clone(w));
                    }
                    drop(st);
                    drop(slot);
                    return started;
                }
            }
        }
    }

    fn next(&self, key: &WorkerKey) -> Next {
        let mut st = self.state();
        st.workers.retain(|w| w.is_alive());
        let mine = st
            .workers
            .iter()
            .filter(|w| w.key == *key)
            .min_by_key(|w| w.in_flight())
            .cloned();
        if let Some(w) = &mine
            && w.in_flight() < self.max_calls_per_worker
        {
            w.reserve();
            return Next::Use(Arc::clone(w));
        }
        if st.starting.contains(key) {
            return Next::Wait("its worker is still starting".into());
        }
        let user = key.user.as_str();
        if st.held_by(user) >= self.per_user {
            st.retire_one(
                |w| w.key.user == user,
                "retired to make room for another of its user's tools",
            );
        }
        let at_share = st.held_by(user) >= self.per_user;
        if !at_share {
            if st.total() >= self.max_workers {
                st.retire_one(|_| true, "retired to make room in the worker pool");
            }
            if st.total() < self.max_workers {
                st.starting.push(key.clone());
                return Next::Start;
            }
        }
        // No room: share ours beyond the soft limit, or wait for room.
        match mine {
            Some(w) => {
                w.reserve();
                Next::Use(w)
            }
            None if at_share => Next::Wait(format!(
                "all {} of this user's workers are busy (max_workers_per_user)",
                self.per_user
            )),
            None => Next::Wait(format!(
                "all {} workers are busy (max_workers)",
                self.max_workers
            )),
        }
    }

    /// Retires workers idle for longer than `after`, and forgets dead ones.
    pub(crate) fn retire_idle(&self, after: Duration) {
        let mut st = self.state();
        let before = st.workers.len();
        st.workers.retain(|w| {
            let retire = w.is_alive() && w.in_flight() == 0 && w.idle_for() >= after;
            if retire {
                w.kill("idle");
            }
            w.is_alive()
        });
        let freed = st.workers.len() < before;
        drop(st);
        if freed {
            self.changed.notify_waiters();
        }
    }

    /// Number of live workers (for tests and status).
    pub(crate) fn len(&self) -> usize {
        self.state().workers.iter().filter(|w| w.is_alive()).count()
    }

    /// Process groups of the live workers (for measurements).
    pub(crate) fn process_groups(&self) -> Vec<i32> {
        self.state()
            .workers
            .iter()
            .filter(|w| w.is_alive())
            .map(|w| w.pid)
            .collect()
    }

    pub(crate) fn shutdown(&self) {
        for w in self.state().workers.drain(..) {
            w.kill("shutting down");
        }
    }
}

/// A pool slot held by a starting worker; released (and waiters woken) however the start ends.
struct Starting<'a> {
    pool: &'a NodePool,
    key: WorkerKey,
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        let mut st = self.pool.state();
        if let Some(i) = st.starting.iter().position(|k| *k == self.key) {
            st.starting.remove(i);
        }
        drop(st);
        self.pool.changed.notify_waiters();
    }
}
