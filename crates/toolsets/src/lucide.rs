//! The names of Lucide's icons (lucide-static, the version the console vendors), so that a
//! tool set's or tool's `icon` can be checked where it is declared: an unknown name shows
//! as the wrench, which `toolhost check` and `doctor` say. `scripts/vendor-assets.mjs`
//! writes `lucide-names.txt` beside the console's icons, one name per line, sorted.

/// Every icon name, sorted.
static NAMES: &str = include_str!("lucide-names.txt");

/// Whether `name` is one of Lucide's icons.
pub fn is_lucide_icon(name: &str) -> bool {
    static SORTED: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    SORTED
        .get_or_init(|| NAMES.lines().collect())
        .binary_search(&name)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_names() {
        for name in ["wrench", "bot", "calculator", "flask-conical"] {
            assert!(is_lucide_icon(name), "{name}");
        }
        for name in ["", "Wrench", "no-such-icon", "calculator "] {
            assert!(!is_lucide_icon(name), "{name:?}");
        }
    }
}
