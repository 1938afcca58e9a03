//! The bounded pool of Node.js workers, keyed by user.
//!
//! A worker serves one user only, in that user's sandbox; a tool that has the network
//! runs in a worker whose sandbox has it too, never in one shared with tools that don't. Calls share a worker up to `max_calls_per_worker`; the pool never holds more
//! than `max_workers` processes, counting those still starting; idle workers are retired.
//! No lock is held while a worker starts, so one slow start delays nobody else.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;

use super::worker::{Worker, WorkerSpawn};
use crate::RuntimeError;
use crate::config::{ToolEnv, UserSpace};

#[derive(Default)]
struct State {
    workers: Vec<Arc<Worker>>,
    /// Users (and whether with the network) whose worker is starting; each entry holds
    /// a pool slot.
    starting: Vec<(String, bool)>,
}

pub(crate) struct NodePool {
    spawn: WorkerSpawn,
    env: ToolEnv,
    max_workers: usize,
    max_calls_per_worker: usize,
    state: Mutex<State>,
    /// Signalled when a call ends or a worker starts, so waiting callers look again.
    changed: Notify,
}

enum Next {
    Use(Arc<Worker>),
    Start,
    Wait,
}

impl NodePool {
    pub fn new(
        spawn: WorkerSpawn,
        env: ToolEnv,
        max_workers: usize,
        max_calls_per_worker: usize,
    ) -> Self {
        NodePool {
            spawn,
            env,
            max_workers: max_workers.max(1),
            max_calls_per_worker: max_calls_per_worker.max(1),
            state: Mutex::new(State::default()),
            changed: Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A live worker for `space`, started if needed, with one call reserved on it.
    pub async fn acquire(
        &self,
        space: &UserSpace,
        network: bool,
    ) -> Result<Arc<Worker>, RuntimeError> {
        loop {
            // Created before looking, so a change made meanwhile is not missed.
            let changed = self.changed.notified();
            match self.next(space, network) {
                Next::Use(w) => return Ok(w),
                Next::Wait => changed.await,
                Next::Start => {
                    let slot = Starting {
                        pool: self,
                        key: (space.user.clone(), network),
                    };
                    let started = Worker::spawn(&self.spawn, space, &self.env, network).await;
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

    fn next(&self, space: &UserSpace, network: bool) -> Next {
        let mut st = self.state();
        st.workers.retain(|w| w.is_alive());
        let mine = st
            .workers
            .iter()
            .filter(|w| w.user == space.user && w.network == network)
            .min_by_key(|w| w.in_flight())
            .cloned();
        if let Some(w) = &mine
            && w.in_flight() < self.max_calls_per_worker
        {
            w.reserve();
            return Next::Use(Arc::clone(w));
        }
        let key = (space.user.clone(), network);
        if st.starting.contains(&key) {
            return Next::Wait;
        }
        if st.workers.len() + st.starting.len() >= self.max_workers {
            // Make room by retiring an idle worker (another user's, or ours).
            if let Some(i) = st.workers.iter().position(|w| w.in_flight() == 0) {
                let idle = st.workers.remove(i);
                idle.kill("retired to make room in the worker pool");
            }
        }
        if st.workers.len() + st.starting.len() < self.max_workers {
            st.starting.push(key);
            return Next::Start;
        }
        // Full of busy workers: share ours beyond the soft limit, or wait for a slot.
        match mine {
            Some(w) => {
                w.reserve();
                Next::Use(w)
            }
            None => Next::Wait,
        }
    }

    pub fn call_ended(&self) {
        self.changed.notify_waiters();
    }

    /// Retires workers idle for longer than `after`.
    pub fn retire_idle(&self, after: Duration) {
        self.state().workers.retain(|w| {
            let retire = w.is_alive() && w.in_flight() == 0 && w.idle_for() >= after;
            if retire {
                w.kill("idle");
            }
            w.is_alive()
        });
    }

    /// Number of live workers (for tests and status).
    pub fn len(&self) -> usize {
        self.state().workers.iter().filter(|w| w.is_alive()).count()
    }

    pub fn shutdown(&self) {
        for w in self.state().workers.drain(..) {
            w.kill("shutting down");
        }
    }
}

/// A pool slot held by a starting worker; released (and waiters woken) however the start ends.
struct Starting<'a> {
    pool: &'a NodePool,
    key: (String, bool),
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
