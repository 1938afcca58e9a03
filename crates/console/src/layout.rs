//! What every signed-in page shares: the navigation, who is signed in, the icon sprite.

use toolhost_host::Caller;

use crate::assets;
use crate::icons::Icons;

/// One entry of the navigation.
pub(crate) struct Nav {
    pub(crate) href: &'static str,
    pub(crate) label: &'static str,
    pub(crate) icon: &'static str,
    pub(crate) current: bool,
}

/// The pages there are, in the navigation's order.
const NAV: &[(&str, &str, &str)] = &[
    ("/", "Overview", "layout-dashboard"),
    ("/catalog", "Catalog", "library"),
    ("/agents", "Agents", "bot"),
    ("/playground", "Playground", "flask-conical"),
    ("/chat", "Chat", "messages-square"),
    ("/history", "History", "history"),
    ("/mcp-servers", "MCP servers", "server"),
    ("/tokens", "Tokens and users", "key-round"),
    ("/plugins", "Plugins and sources", "puzzle"),
    ("/audit", "Audit log", "scroll-text"),
    ("/settings", "Settings", "settings"),
];

/// The frame of a signed-in page.
pub(crate) struct Layout {
    pub(crate) title: String,
    pub(crate) user: String,
    pub(crate) role: &'static str,
    pub(crate) nav: Vec<Nav>,
    pub(crate) sprite: String,
    pub(crate) css: &'static str,
    pub(crate) js: &'static str,
}

impl Layout {
    /// The frame of the page `current` (a navigation href) titled `title`, for `caller`,
    /// with the icons the page used (`icons`) and the navigation's.
    pub(crate) fn new(
        caller: &Caller,
        current: &str,
        title: impl Into<String>,
        mut icons: Icons,
    ) -> Layout {
        let nav = NAV
            .iter()
            .map(|(href, label, icon)| Nav {
                href,
                label,
                icon: icons.take(Some(icon)),
                current: *href == current || (*href != "/" && current.starts_with(href)),
            })
            .collect();
        icons.take(Some("log-out"));
        icons.take(Some("wrench"));
        Layout {
            title: title.into(),
            user: caller.user().to_string(),
            role: caller.role.as_str(),
            nav,
            sprite: icons.sprite(),
            css: assets::css_version(),
            js: assets::js_version(),
        }
    }
}
