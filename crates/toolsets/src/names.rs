//! Naming rules of tool sets and claimed tool names.

pub use toolhost_spec::names::is_valid_tool_name;

/// The pattern a claimed tool name must match, for messages.
pub const TOOL_NAME_RULE: &str = "^[a-zA-Z0-9_-]{1,64}$";

/// A tool-set id: kebab-case (`^[a-z0-9]+(-[a-z0-9]+)*$`), at most 64 characters. Agents
/// persist granted ids, so they are stable identifiers, checked strictly at boot.
pub(crate) fn is_valid_set_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && !id.starts_with('-')
        && !id.ends_with('-')
        && !id.contains("--")
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Best-effort kebab-case spelling, for defaults (folder roots) and suggestions.
pub(crate) fn to_kebab_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower && !out.ends_with('-') {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            prev_lower = true;
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
            prev_lower = false;
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out.truncate(64);
    while out.ends_with('-') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_ids_are_kebab_case() {
        for ok in ["time", "web-fetch", "a1", "x-2-y"] {
            assert!(is_valid_set_id(ok), "{ok}");
        }
        for bad in [
            "",
            "Time",
            "web_fetch",
            "-a",
            "a-",
            "a--b",
            "a b",
            &"a".repeat(65),
        ] {
            assert!(!is_valid_set_id(bad), "{bad}");
        }
        assert_eq!(to_kebab_case("My Tools_dir"), "my-tools-dir");
        assert_eq!(to_kebab_case("fooBar"), "foo-bar");
        assert_eq!(to_kebab_case("--"), "");
    }
}
