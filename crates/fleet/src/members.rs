//! Who is in the fleet: the runners and gateways heard announcing themselves lately.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::wire::Announcement;

/// How often a node announces itself.
pub const ANNOUNCE_EVERY: Duration = Duration::from_secs(1);

/// A node not heard from for this long has left.
pub const SILENCE: Duration = Duration::from_secs(3);

/// The nodes of one role heard lately, by id.
#[derive(Default)]
pub struct Members {
    heard: Mutex<BTreeMap<String, (Announcement, Instant)>>,
}

impl Members {
    /// Records an announcement.
    pub fn heard(&self, announcement: Announcement) {
        let mut heard = self.heard.lock().unwrap_or_else(|e| e.into_inner());
        heard.insert(announcement.node.clone(), (announcement, Instant::now()));
    }

    /// Forgets a node at once (its process is known gone).
    pub fn forget(&self, node: &str) {
        self.heard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(node);
    }

    /// The ids of the nodes heard within [`SILENCE`], sorted.
    pub fn live(&self) -> Vec<String> {
        let mut heard = self.heard.lock().unwrap_or_else(|e| e.into_inner());
        heard.retain(|_, (_, at)| at.elapsed() < SILENCE);
        heard.keys().cloned().collect()
    }

    /// The latest announcement of each live node, sorted by id.
    pub fn announcements(&self) -> Vec<Announcement> {
        let mut heard = self.heard.lock().unwrap_or_else(|e| e.into_inner());
        heard.retain(|_, (_, at)| at.elapsed() < SILENCE);
        heard.values().map(|(a, _)| a.clone()).collect()
    }
}
