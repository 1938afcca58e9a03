//! A node's fleet counters, in Prometheus's text format (a gateway adds them to its
//! `/api/v1/metrics`; a runner serves them at its own `/metrics`).

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of what happened to calls at this node.
#[derive(Default)]
pub struct Counters {
    /// Calls a runner accepted (a gateway: offered and accepted; a runner: taken).
    pub accepted: AtomicU64,
    /// `busy` answers (given or received).
    pub busy: AtomicU64,
    /// Calls that failed fast because every runner tried was busy (a gateway).
    pub overloaded: AtomicU64,
    /// Calls whose runner was lost after accepting them: outcome unknown (a gateway).
    pub lost: AtomicU64,
    /// Tries of a runner that was gone or silent (a gateway), or calls too old to take
    /// (a runner).
    pub not_delivered: AtomicU64,
    /// Bundles fetched (a runner) or served (a gateway).
    pub bundles: AtomicU64,
    /// Calls stopped because their gateway is gone (a runner).
    pub orphaned: AtomicU64,
}

impl Counters {
    /// Adds one to `counter`.
    pub fn note(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters as Prometheus text, named `toolhost_fleet_*`.
    pub fn render(&self, out: &mut String) {
        let rows: [(&str, &str, &AtomicU64); 7] = [
            ("accepted", "Calls accepted by a runner.", &self.accepted),
            (
                "busy",
                "Busy answers from runners at their slots.",
                &self.busy,
            ),
            (
                "overloaded",
                "Calls refused at once: every runner tried was busy.",
                &self.overloaded,
            ),
            (
                "lost",
                "Calls whose runner was lost after accepting them (outcome unknown).",
                &self.lost,
            ),
            (
                "not_delivered",
                "Offers to runners that were gone or silent, or calls too old to take.",
                &self.not_delivered,
            ),
            ("bundles", "Tool bundles fetched or served.", &self.bundles),
            (
                "orphaned",
                "Calls stopped because their gateway was gone.",
                &self.orphaned,
            ),
        ];
        for (name, help, value) in rows {
            let _ = writeln!(out, "# HELP toolhost_fleet_{name}_total {help}");
            let _ = writeln!(out, "# TYPE toolhost_fleet_{name}_total counter");
            let _ = writeln!(
                out,
                "toolhost_fleet_{name}_total {}",
                value.load(Ordering::Relaxed)
            );
        }
    }
}

/// Gauges of a node as it announces itself: calls running, slots, workers.
pub fn render_node(out: &mut String, role: &str, running: usize, slots: usize, workers: usize) {
    let _ = writeln!(out, "# HELP toolhost_fleet_running Calls running ({role}).");
    let _ = writeln!(out, "# TYPE toolhost_fleet_running gauge");
    let _ = writeln!(out, "toolhost_fleet_running {running}");
    if role == "runner" {
        let _ = writeln!(
            out,
            "# HELP toolhost_fleet_slots Calls at once this runner takes."
        );
        let _ = writeln!(out, "# TYPE toolhost_fleet_slots gauge");
        let _ = writeln!(out, "toolhost_fleet_slots {slots}");
        let _ = writeln!(out, "# HELP toolhost_workers Live Node.js workers.");
        let _ = writeln!(out, "# TYPE toolhost_workers gauge");
        let _ = writeln!(out, "toolhost_workers {workers}");
    }
}
