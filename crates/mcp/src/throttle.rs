//! Reports of events that may come in floods (connections refused, sessions ended at a
//! cap): at most one log line per interval, counting what happened since the last one.

use std::time::{Duration, Instant};

/// How often a flood is reported.
pub(crate) const INTERVAL: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
pub(crate) struct Throttle {
    last: Option<Instant>,
    pending: u64,
}

impl Throttle {
    /// Counts one event; returns how many to report (this one included) when a line is
    /// due, `None` while the last line is too recent.
    pub(crate) fn note(&mut self, now: Instant) -> Option<u64> {
        self.pending += 1;
        if self
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < INTERVAL)
        {
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.pending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_interval_with_the_count_since_the_last() {
        let mut t = Throttle::default();
        let start = Instant::now();
        assert_eq!(t.note(start), Some(1));
        assert_eq!(t.note(start + Duration::from_secs(1)), None);
        assert_eq!(t.note(start + Duration::from_secs(2)), None);
        assert_eq!(t.note(start + INTERVAL), Some(3));
    }
}
