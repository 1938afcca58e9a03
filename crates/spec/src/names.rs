//! Naming rules shared by tools, inputs and (later) tool sets.

/// `^[a-zA-Z0-9_-]{1,64}$`: what MCP clients and model providers accept as a tool name.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `^[a-zA-Z0-9_.-]{1,64}$`: what model providers accept as a property name.
pub fn is_valid_input_name(name: &str) -> bool {
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

/// Best-effort snake_case spelling of a name, for suggestions.
pub fn to_snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c == '-' || c == ' ' || c == '.' {
            out.push('_');
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(to_snake_case("HTTPGet"), "httpget");
    }
}
