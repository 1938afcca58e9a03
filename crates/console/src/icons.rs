//! Lucide icons by name. Every icon is embedded (a tool set may name any), from the
//! vendored `lucide-icons.txt` (`NAME<TAB>INNER ELEMENTS` a line); a page carries only the
//! icons it uses, as an inline sprite of `<symbol>`s that `<svg><use href="#i-NAME">`
//! shows: no request per icon, and a few hundred bytes per distinct icon.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

/// The icon of anything that names none, or a name Lucide does not have.
pub(crate) const FALLBACK: &str = "wrench";

static TEXT: &str = include_str!("../assets/vendor/lucide-icons.txt");

fn all() -> &'static HashMap<&'static str, &'static str> {
    static MAP: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    MAP.get_or_init(|| {
        TEXT.lines()
            .filter_map(|line| line.split_once('\t'))
            .collect()
    })
}

/// Whether Lucide has an icon called `name`.
pub(crate) fn exists(name: &str) -> bool {
    all().contains_key(name)
}

/// The icons a page uses.
#[derive(Debug, Default)]
pub(crate) struct Icons {
    used: BTreeSet<&'static str>,
}

impl Icons {
    /// Uses the icon `name` (the wrench when it is `None` or unknown); the name to put in
    /// `<use href="#i-NAME">`.
    pub(crate) fn take(&mut self, name: Option<&str>) -> &'static str {
        let found = name.and_then(|n| all().get_key_value(n)).map(|(k, _)| *k);
        let name = found.unwrap_or(FALLBACK);
        self.used.insert(name);
        name
    }

    /// The inline sprite: one `<symbol>` per icon used. Built from the vendored file only
    /// (no name reaches it unless it is a key of that file).
    pub(crate) fn sprite(&self) -> String {
        self.sprite_with("i-")
    }

    /// The sprite with its symbols' ids under `prefix` (`<use href="#PREFIXNAME">`): for a
    /// fragment swapped into a page that has a sprite of its own.
    pub(crate) fn sprite_with(&self, prefix: &str) -> String {
        let mut out = String::from(
            "<svg class=\"sprite\" xmlns=\"http://www.w3.org/2000/svg\" aria-hidden=\"true\" focusable=\"false\">",
        );
        for name in &self.used {
            if let Some(inner) = all().get(name) {
                out.push_str("<symbol id=\"");
                out.push_str(prefix);
                out.push_str(name);
                out.push_str(
                    "\" viewBox=\"0 0 24 24\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"2\" \
                     stroke-linecap=\"round\" stroke-linejoin=\"round\">",
                );
                out.push_str(inner);
                out.push_str("</symbol>");
            }
        }
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_icon_is_there_and_an_unknown_one_is_the_wrench() {
        assert!(all().len() > 1500, "{}", all().len());
        assert!(exists("wrench") && exists("book-open") && !exists("nope"));
        let mut icons = Icons::default();
        assert_eq!(icons.take(Some("book-open")), "book-open");
        assert_eq!(icons.take(Some("\"><script>")), "wrench");
        assert_eq!(icons.take(None), "wrench");
        let sprite = icons.sprite();
        assert_eq!(sprite.matches("<symbol").count(), 2, "{sprite}");
        assert!(sprite.contains("id=\"i-book-open\"") && !sprite.contains("script"));
    }
}
