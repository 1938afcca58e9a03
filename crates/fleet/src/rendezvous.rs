//! Which runner is a user's home: rendezvous (highest random weight) hashing over the live
//! runners. Every gateway computes the same answer from the same set of runners, with no
//! shared table; a runner joining takes only the users it now scores highest for, and a
//! runner leaving gives away only its own users. Warm workers are per user, so keeping a
//! user on one runner keeps their calls warm (a cold call costs tens of milliseconds, a
//! warm one a fraction of one).

/// A user's score on a runner: the first 8 bytes of BLAKE3 over both names, separated so
/// that no two different pairs hash the same input.
fn score(runner: &str, user: &str) -> u64 {
    let mut h = blake3::Hasher::new();
    h.update(&(runner.len() as u64).to_le_bytes());
    h.update(runner.as_bytes());
    h.update(user.as_bytes());
    let digest = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// `user`'s home among `runners`: the one scoring highest (ties, which need a hash
/// collision, go to the smaller name). `None` when there is no runner.
pub fn home<'a>(user: &str, runners: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    runners
        .into_iter()
        .map(|r| (score(r, user), r))
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, r)| r)
}

/// Every runner in `user`'s order of preference: the home first, then the runner that
/// becomes home should the first go away, and so on. A call not yet accepted by one may go
/// to the next.
pub fn ranked<'a>(user: &str, runners: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut scored: Vec<(u64, &str)> = runners.into_iter().map(|r| (score(r, user), r)).collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn users(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("user-{i}@example.com")).collect()
    }

    fn homes<'a>(users: &'a [String], runners: &[&'a str]) -> HashMap<&'a str, &'a str> {
        users
            .iter()
            .map(|u| (u.as_str(), home(u, runners.iter().copied()).unwrap()))
            .collect()
    }

    #[test]
    fn every_gateway_agrees_whatever_order_it_lists_runners_in() {
        let a = ["r1", "r2", "r3", "r4"];
        let b = ["r3", "r1", "r4", "r2"];
        for u in users(500) {
            assert_eq!(home(&u, a), home(&u, b), "{u}");
            assert_eq!(ranked(&u, a), ranked(&u, b), "{u}");
            assert_eq!(ranked(&u, a)[0], home(&u, a).unwrap());
        }
        assert_eq!(home("x", std::iter::empty::<&str>()), None);
    }

    #[test]
    fn users_spread_evenly() {
        let all = users(30_000);
        let runners = ["runner-a", "runner-b", "runner-c"];
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for h in homes(&all, &runners).values() {
            *counts.entry(h).or_default() += 1;
        }
        for r in runners {
            let share = counts[r] as f64 / all.len() as f64;
            assert!((share - 1.0 / 3.0).abs() < 0.02, "{r}: {share}");
        }
    }

    #[test]
    fn a_joining_runner_takes_only_its_own_share() {
        let all = users(20_000);
        let before = homes(&all, &["r1", "r2", "r3"]);
        let after = homes(&all, &["r1", "r2", "r3", "r4"]);
        let moved: Vec<_> = all
            .iter()
            .filter(|u| before[u.as_str()] != after[u.as_str()])
            .collect();
        // Everyone who moved moved to the newcomer, and about a quarter moved.
        assert!(moved.iter().all(|u| after[u.as_str()] == "r4"));
        let share = moved.len() as f64 / all.len() as f64;
        assert!((share - 0.25).abs() < 0.02, "{share}");
    }

    #[test]
    fn a_leaving_runner_gives_away_only_its_own_users() {
        let all = users(20_000);
        let before = homes(&all, &["r1", "r2", "r3", "r4"]);
        let after = homes(&all, &["r1", "r3", "r4"]);
        for u in &all {
            let (b, a) = (before[u.as_str()], after[u.as_str()]);
            if b == "r2" {
                assert_ne!(a, "r2");
                // The next in the user's ranking takes over, as `ranked` promised.
                assert_eq!(a, ranked(u, ["r1", "r2", "r3", "r4"])[1]);
            } else {
                assert_eq!(a, b, "{u} moved though its home stayed");
            }
        }
    }
}
