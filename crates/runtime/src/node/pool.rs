//! The bounded pool of Node.js workers, keyed by user.
//!
//! A worker serves one user only (later, each user's workers run under that user's
//! sandbox). Calls share a worker up to `max_calls_per_worker`; the pool never holds more
//! than `max_workers` processes; idle workers are retired.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, Notify};

use super::worker::{Worker, WorkerSpawn};
use crate::RuntimeError;
use crate::config::{ToolEnv, UserSpace};

pub(crate) struct NodePool {
    spawn: WorkerSpawn,
    env: ToolEnv,
    max_workers: usize,
    max_calls_per_worker: usize,
    workers: Mutex<Vec<Arc<Worker>>>,
    /// Signalled when a call ends, so a caller waiting for a worker slot can retry.
    freed: Notify,
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
            workers: Mutex::new(Vec::new()),
            freed: Notify::new(),
        }
    }

    /// A live worker for `space`, started if needed.
    pub async fn acquire(&self, space: &UserSpace) -> Result<Arc<Worker>, RuntimeError> {
        loop {
            let notified = self.freed.notified();
            {
                let mut workers = self.workers.lock().await;
                workers.retain(|w| w.is_alive());
                let mine = workers
                    .iter()
                    .filter(|w| w.user == space.user)
                    .min_by_key(|w| w.in_flight());
                if let Some(w) = mine
                    && w.in_flight() < self.max_calls_per_worker
                {
                    return Ok(Arc::clone(w));
                }
                if workers.len() >= self.max_workers {
                    // Make room by retiring an idle worker (another user's, or ours).
                    if let Some(i) = workers.iter().position(|w| w.in_flight() == 0) {
                        let idle = workers.remove(i);
                        idle.kill("retired to make room in the worker pool");
                    }
                }
                if workers.len() < self.max_workers {
                    let w = Worker::spawn(&self.spawn, space, self.env.for_user(space)).await?;
                    workers.push(Arc::clone(&w));
                    return Ok(w);
                }
                // The pool is full of busy workers: share ours beyond the soft limit, or wait.
                if let Some(w) = workers
                    .iter()
                    .filter(|w| w.user == space.user)
                    .min_by_key(|w| w.in_flight())
                {
                    return Ok(Arc::clone(w));
                }
            }
            notified.await;
        }
    }

    pub fn call_ended(&self) {
        self.freed.notify_waiters();
    }

    /// Retires workers idle for longer than `after`.
    pub async fn retire_idle(&self, after: Duration) {
        let mut workers = self.workers.lock().await;
        workers.retain(|w| {
            let retire = w.is_alive() && w.in_flight() == 0 && w.idle_for() >= after;
            if retire {
                tracing::debug!(pid = w.pid, user = %w.user, "retiring idle Node.js worker");
                w.kill("idle");
            }
            w.is_alive()
        });
    }

    /// Number of live workers (for tests and status).
    pub async fn len(&self) -> usize {
        self.workers
            .lock()
            .await
            .iter()
            .filter(|w| w.is_alive())
            .count()
    }

    pub async fn shutdown(&self) {
        for w in self.workers.lock().await.drain(..) {
            w.kill("shutting down");
        }
    }
}
