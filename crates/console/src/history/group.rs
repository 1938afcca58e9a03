//! Adjacent calls to the same tool, as one group: an agent that calls `search` ten times in
//! a row is one line of the history to skim past, not ten.

/// `items` (in their order) cut into runs of equal `key`.
pub(crate) fn runs<T>(items: Vec<T>, key: impl Fn(&T) -> &str) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = Vec::new();
    for item in items {
        match out.last_mut() {
            Some(run) if run.last().is_some_and(|last| key(last) == key(&item)) => run.push(item),
            _ => out.push(vec![item]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_adjacent_calls_to_the_same_tool_are_grouped() {
        let calls = vec!["slow", "slow", "echo", "slow", "echo", "echo", "echo"];
        let grouped = runs(calls, |t| t);
        assert_eq!(
            grouped,
            vec![
                vec!["slow", "slow"],
                vec!["echo"],
                vec!["slow"],
                vec!["echo", "echo", "echo"]
            ]
        );
        assert!(runs(Vec::<&str>::new(), |t| t).is_empty());
    }
}
