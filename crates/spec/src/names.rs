//! Naming rules shared by tools, inputs and (later) tool sets.

/// `^[a-zA-Z0-9_-]{1,64}$`: what MCP clients and model providers accept as a tool name.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `^[a-zA-Z0-9_.-]{1,64}$`: what model providers accept as a property name.
pub(crate) fn is_valid_input_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// `^[a-z][a-z0-9_]*$`, the seed's recommended style.
pub fn is_snake_case(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A snake_case spelling of a name, for suggestions: it always passes [`is_snake_case`]
/// and [`is_valid_tool_name`] (characters that have no place in a name are dropped, so
/// `../evil` suggests `evil`; a name with nothing usable suggests `my_tool`).
pub fn to_snake_case(name: &str) -> String {
    let mut words = String::with_capacity(name.len() + 4);
    let (mut prev_lower, mut prev_upper) = (false, false);
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_uppercase() {
            // A word starts after a lowercase letter or digit (`webSearch`), and at the
            // last capital of an acronym that a word follows (`HTTPGet` is `http_get`).
            let next_lower = chars.peek().is_some_and(char::is_ascii_lowercase);
            if prev_lower || (prev_upper && next_lower) {
                words.push('_');
            }
            words.push(c.to_ascii_lowercase());
            (prev_lower, prev_upper) = (false, true);
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
            words.push(c);
            (prev_lower, prev_upper) = (true, false);
        } else if matches!(c, '-' | ' ' | '.' | '_') {
            words.push('_');
            (prev_lower, prev_upper) = (false, false);
        }
    }
    let mut out = String::with_capacity(words.len());
    for part in words.split('_').filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(part);
    }
    let out = out.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_');
    let mut out: String = out.chars().take(64).collect();
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        return "my_tool".into();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn suggestions_are_always_valid_names(name in "(\\PC|[A-Z]){0,80}") {
            let s = to_snake_case(&name);
            prop_assert!(is_snake_case(&s) && is_valid_tool_name(&s), "{:?} -> {:?}", name, s);
        }
    }

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("web_search"));
        assert!(is_valid_tool_name("Web-Search2"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name("dot.ted"));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
        assert!(is_valid_tool_name(&"a".repeat(64)));
    }

    #[test]
    fn snake_case() {
        assert!(is_snake_case("web_search"));
        assert!(is_snake_case("a1"));
        assert!(!is_snake_case("webSearch"));
        assert!(!is_snake_case("web-search"));
        assert!(!is_snake_case("1abc"));
        assert_eq!(to_snake_case("webSearch"), "web_search");
        assert_eq!(to_snake_case("web-search"), "web_search");
        assert_eq!(to_snake_case("HTTPGet"), "http_get");
        assert_eq!(to_snake_case("getHTTPResponse"), "get_http_response");
        assert_eq!(to_snake_case("parseURL"), "parse_url");
        assert_eq!(to_snake_case("HTTP2Get"), "http2_get");
        assert_eq!(to_snake_case("ID"), "id");
        // Suggestions are always valid names (review row 72 suggested "__/evilnew").
        assert_eq!(to_snake_case("../evilnew"), "evilnew");
        assert_eq!(to_snake_case("a/b c"), "ab_c");
        assert_eq!(to_snake_case("42 Tools"), "tools");
        assert_eq!(to_snake_case("///"), "my_tool");
        for odd in [
            "../evilnew",
            "héllo wörld",
            "__x__",
            &"Ab".repeat(80),
            &"AB".repeat(40),
            "A_B-C.D",
        ] {
            let s = to_snake_case(odd);
            assert!(
                is_snake_case(&s) && is_valid_tool_name(&s),
                "{odd:?} -> {s:?}"
            );
        }
    }
}
