//! Answers of the store remembered for a while: so a gateway's hot path does not ask the
//! database for the same token on every request, and so the callers and agents it knows
//! keep working while the database restarts.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most answers kept; past it, the oldest half is forgotten.
const MAX_KEPT: usize = 10_000;

/// How long answers are trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remember {
    /// An answer this fresh is used without asking the store (`ZERO`: always ask).
    pub fresh_for: Duration,
    /// While the store fails, an answer this fresh is used instead (`ZERO`: never).
    pub stale_for: Duration,
}

impl Remember {
    /// Always ask the store, and fail with it: one server, where a revocation must count
    /// at once.
    pub const NEVER: Remember = Remember {
        fresh_for: Duration::ZERO,
        stale_for: Duration::ZERO,
    };

    /// A fleet's gateways: tokens trusted for 30 s (a revocation made through a gateway
    /// is forgotten at once by all of them; one made in the database by hand counts
    /// within 30 s), and tokens and agents for 10 minutes while the store is unreachable.
    pub const FLEET: Remember = Remember {
        fresh_for: Duration::from_secs(30),
        stale_for: Duration::from_secs(600),
    };
}

/// Answers by key.
pub(crate) struct Remembered<V> {
    how: Remember,
    kept: Mutex<HashMap<String, (V, Instant)>>,
}

impl<V: Clone> Remembered<V> {
    pub(crate) fn new(how: Remember) -> Remembered<V> {
        Remembered {
            how,
            kept: Mutex::default(),
        }
    }

    fn within(&self, key: &str, age: Duration) -> Option<V> {
        if age.is_zero() {
            return None;
        }
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(key)
            .filter(|(_, at)| at.elapsed() < age)
            .map(|(v, _)| v.clone())
    }

    /// The answer for `key`, if fresh enough to use without asking.
    pub(crate) fn fresh(&self, key: &str) -> Option<V> {
        self.within(key, self.how.fresh_for)
    }

    /// The answer for `key` to use while the store fails, if any.
    pub(crate) fn stale(&self, key: &str) -> Option<V> {
        self.within(key, self.how.stale_for)
    }

    /// Forgets every answer.
    pub(crate) fn clear(&self) {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Remembers the store's answer for `key`.
    pub(crate) fn put(&self, key: &str, value: V) {
        if self.how.fresh_for.is_zero() && self.how.stale_for.is_zero() {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= MAX_KEPT {
            let mut ages: Vec<Instant> = kept.values().map(|(_, at)| *at).collect();
            ages.sort();
            let cut = ages[ages.len() / 2];
            kept.retain(|_, (_, at)| *at > cut);
        }
        kept.insert(key.to_string(), (value, Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_answers_are_used_and_stale_ones_only_as_a_fallback() {
        let r = Remembered::new(Remember {
            fresh_for: Duration::from_millis(50),
            stale_for: Duration::from_secs(60),
        });
        assert_eq!(r.fresh("a"), None);
        r.put("a", 1);
        assert_eq!(r.fresh("a"), Some(1));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(r.fresh("a"), None);
        assert_eq!(r.stale("a"), Some(1));
        let never: Remembered<i32> = Remembered::new(Remember::NEVER);
        never.put("a", 1);
        assert_eq!(never.fresh("a"), None);
        assert_eq!(never.stale("a"), None);
    }
}
