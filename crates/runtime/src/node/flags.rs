//! What Node.js is told besides the harness: the flags that make the Node.js a tool finds
//! the same across versions. Node.js 20 and 21 have a `WebSocket` class but keep it off the
//! global object unless `--experimental-websocket` is given (22 has it by default); seed
//! tools (the browser tool's CDP client) use the global, with no package to bring one.

use std::path::Path;

/// The flags for `node` at `program`, from its `--version`.
pub(crate) fn node_flags(program: &Path) -> Vec<String> {
    flags_for(&crate::launch::version_of(program).unwrap_or_default())
}

/// The flags for a `node --version` of `version` (`v20.11.1`).
fn flags_for(version: &str) -> Vec<String> {
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let major: u32 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let mut flags = Vec::new();
    if matches!(major, 20 | 21) {
        flags.push("--experimental-websocket".to_string());
        // The flag's warning would land in the worker's log at every start.
        if (major == 20 && minor >= 11) || (major == 21 && minor >= 3) {
            flags.push("--disable-warning=ExperimentalWarning".to_string());
        }
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websocket_is_switched_on_where_it_is_not_global() {
        assert_eq!(
            flags_for("v20.20.2\n"),
            [
                "--experimental-websocket",
                "--disable-warning=ExperimentalWarning"
            ]
        );
        assert_eq!(flags_for("v20.5.0"), ["--experimental-websocket"]);
        assert_eq!(flags_for("v21.1.0"), ["--experimental-websocket"]);
        assert!(flags_for("v22.3.0").is_empty());
        assert!(flags_for("v18.19.0").is_empty());
        assert!(flags_for("").is_empty());
    }
}
