//! How many chat turns each user has running: a few at a time, so that one user's tabs
//! cannot hold every worker and model connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Turns one user may run at once.
pub(crate) const MAX_PER_USER: usize = 4;

/// The running turns, per user.
#[derive(Default)]
pub(crate) struct Running {
    users: Mutex<HashMap<String, usize>>,
}

/// One running turn; dropping it ends it.
pub(crate) struct Slot {
    running: Arc<Running>,
    user: String,
}

impl Running {
    /// A slot for `user`, unless they run [`MAX_PER_USER`] turns already.
    pub(crate) fn begin(self: &Arc<Self>, user: &str) -> Option<Slot> {
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        let n = users.entry(user.to_string()).or_default();
        if *n >= MAX_PER_USER {
            return None;
        }
        *n += 1;
        Some(Slot {
            running: Arc::clone(self),
            user: user.to_string(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut users = self.running.users.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = users.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                users.remove(&self.user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_gets_a_few_slots_and_them_back() {
        let running = Arc::new(Running::default());
        let slots: Vec<Slot> = (0..MAX_PER_USER)
            .map(|_| running.begin("ann").unwrap())
            .collect();
        assert!(running.begin("ann").is_none());
        assert!(running.begin("bob").is_some());
        drop(slots);
        assert!(running.begin("ann").is_some());
        assert!(running.users.lock().unwrap().get("ann").is_none());
    }
}
