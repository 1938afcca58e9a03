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

/// The pages there are, in the navigation's order (the others of issue 16 join as they
/// are built: Agents, Playground, Chat, History, MCP servers, Tokens, Plugins, Audit,
/// Settings).
const NAV: &[(&str, &str, &str)] = &[
    ("/", "Overview", "layout-dashboard"),
    ("/catalog", "Catalog", "library"),
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
                current: *href == current,
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
