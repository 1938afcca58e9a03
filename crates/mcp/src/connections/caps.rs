//! The caps on connections: how many are open, overall and per client address, and which
//! one gives way to a newcomer.

use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::ConnectionLimits;
use super::deadlines::Watch;
use crate::throttle::Throttle;

struct Open {
    client: IpAddr,
    watch: Arc<Watch>,
    close: CancellationToken,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    open: HashMap<u64, Open>,
    per_client: HashMap<IpAddr, usize>,
    evicted: Throttle,
    refused: Throttle,
}

impl Table {
    fn remove(&mut self, id: u64) -> Option<Open> {
        let open = self.open.remove(&id)?;
        if let Some(n) = self.per_client.get_mut(&open.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_client.remove(&open.client);
            }
        }
        Some(open)
    }

    /// Closes the connection (of `client`, or of anyone) idle the longest; false if every
    /// one is in a request.
    fn evict_idlest(&mut self, client: Option<IpAddr>) -> bool {
        let idlest = self
            .open
            .iter()
            .filter(|(_, o)| client.is_none_or(|c| o.client == c))
            .filter_map(|(id, o)| o.watch.idle_since().map(|since| (since, *id)))
            .min();
        let Some((_, id)) = idlest else {
            return false;
        };
        if let Some(open) = self.remove(id) {
            open.close.cancel();
        }
        true
    }
}

/// Every open connection, by client address, and the caps on them.
pub(super) struct Registry {
    limits: ConnectionLimits,
    table: Mutex<Table>,
    emptied: Notify,
}

impl Registry {
    pub(super) fn new(mut limits: ConnectionLimits) -> Registry {
        limits.max_connections = limits.max_connections.max(1);
        limits.max_connections_per_ip = limits
            .max_connections_per_ip
            .clamp(1, limits.max_connections);
        Registry {
            limits,
            table: Mutex::new(Table::default()),
            emptied: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Room for a connection from `client`, made by evicting idle ones if need be; `None`
    /// (the newcomer is to be closed) when every connection it competes with is in a
    /// request.
    pub(super) fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Admitted> {
        let mut t = self.lock();
        let now = Instant::now();
        let client_full =
            t.per_client.get(&client).copied().unwrap_or(0) >= self.limits.max_connections_per_ip;
        let mut evicted = false;
        let mut room = true;
        if client_full {
            room = t.evict_idlest(Some(client));
            evicted = room;
        }
        if room && t.open.len() >= self.limits.max_connections {
            room = t.evict_idlest(None);
            evicted |= room;
        }
        if !room {
            if let Some(n) = t.refused.note(now) {
                tracing::warn!(
                    "closed {n} new connection(s) at once: every open connection they compete with was in a request ([serve] max_connections = {}, max_connections_per_ip = {})",
                    self.limits.max_connections,
                    self.limits.max_connections_per_ip
                );
            }
            return None;
        }
        if evicted && let Some(n) = t.evicted.note(now) {
            tracing::warn!(
                "closed {n} idle connection(s) to make room for new ones ([serve] max_connections = {}, max_connections_per_ip = {})",
                self.limits.max_connections,
                self.limits.max_connections_per_ip
            );
        }
        let id = t.next_id;
        t.next_id += 1;
        let watch = Arc::new(Watch::new(self.limits.clone()));
        let close = CancellationToken::new();
        t.open.insert(
            id,
            Open {
                client,
                watch: Arc::clone(&watch),
                close: close.clone(),
            },
        );
        *t.per_client.entry(client).or_insert(0) += 1;
        Some(Admitted {
            registry: Arc::clone(self),
            id,
            watch,
            close,
        })
    }

    pub(super) fn evict_idlest(&self) -> bool {
        self.lock().evict_idlest(None)
    }

    pub(super) fn close_all(&self) {
        for open in self.lock().open.values() {
            open.close.cancel();
        }
    }

    pub(super) async fn all_closed(&self) {
        loop {
            let mut emptied = pin!(self.emptied.notified());
            emptied.as_mut().enable();
            if self.lock().open.is_empty() {
                return;
            }
            emptied.await;
        }
    }
}

/// A connection's place in the registry, given back when its task ends.
pub(super) struct Admitted {
    registry: Arc<Registry>,
    id: u64,
    pub(super) watch: Arc<Watch>,
    pub(super) close: CancellationToken,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut t = self.registry.lock();
        t.remove(self.id);
        if t.open.is_empty() {
            self.registry.emptied.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::connections::deadlines::InRequest;

    #[test]
    fn a_newcomer_evicts_the_idlest_or_is_refused_when_all_are_busy() {
        let r = Arc::new(Registry::new(ConnectionLimits {
            max_connections: 3,
            max_connections_per_ip: 2,
            ..ConnectionLimits::default()
        }));
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let a1 = r.admit(a).unwrap();
        let a2 = r.admit(a).unwrap();
        let _a2_busy = InRequest::start(Arc::clone(&a2.watch));
        // a is at its cap of 2: its idle a1 makes room, not b's connections.
        let a3 = r.admit(a).unwrap();
        assert!(a1.close.is_cancelled());
        let b1 = r.admit(b).unwrap();
        // Full (3): b2 takes the place of the idlest overall (a3), never of busy a2.
        let b2 = r.admit(b).unwrap();
        assert!(a3.close.is_cancelled() && !a2.close.is_cancelled());
        let _b1_busy = InRequest::start(Arc::clone(&b1.watch));
        let _b2_busy = InRequest::start(Arc::clone(&b2.watch));
        assert!(r.admit(a).is_none(), "every connection is in a request");
        drop(a1);
        drop(a3);
        assert_eq!(r.lock().open.len(), 3);
    }
}
