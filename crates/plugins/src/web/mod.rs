//! `web`: gated (an operator may well deny egress). A URL fetch tool that converts HTML
//! to Markdown, slices long pages, honours robots.txt and guards egress.

mod egress;
mod fetch;
mod robots;

use std::time::Duration;

use serde::Deserialize;

use crate::plugin::{PLUGIN_API_VERSION, Plugin, PluginSettings};
use crate::tool::ToolMap;
use crate::toolset::{ToolSet, Tools};

pub use egress::Egress;

pub const NAME: &str = "web";

/// `[plugins.web]` in toolhost.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebSettings {
    /// Honour robots.txt (default true).
    pub respect_robots: bool,
    /// Let fetches reach private addresses (RFC 1918, unique local, CGNAT). Default false.
    pub allow_private: bool,
    /// Let fetches reach loopback addresses. Default false; for tests and local development.
    pub allow_loopback: bool,
    /// The User-Agent header; its first word is the robots.txt product token.
    pub user_agent: String,
    /// Most bytes of a response body read.
    pub max_bytes: usize,
    /// Deadline of one fetch, redirects included (seconds).
    #[serde(with = "crate::config::secs")]
    pub timeout: Duration,
    pub max_redirects: usize,
}

impl Default for WebSettings {
    fn default() -> Self {
        WebSettings {
            respect_robots: true,
            allow_private: false,
            allow_loopback: false,
            user_agent: format!("Toolhost/{} (+web_fetch)", env!("CARGO_PKG_VERSION")),
            max_bytes: 5 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_redirects: 5,
        }
    }
}

pub fn load(settings: &PluginSettings) -> Result<Plugin, String> {
    let settings: WebSettings = if settings.is_null() {
        WebSettings::default()
    } else {
        serde_json::from_value(settings.clone()).map_err(|e| format!("[plugins.web]: {e}"))?
    };
    let fetcher = fetch::Fetcher::new(settings)?;
    Ok(Plugin {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        api_version: PLUGIN_API_VERSION,
        tool_sets: vec![
            ToolSet::new(
                "web",
                "Web",
                "Web",
                "Fetch web pages as Markdown",
                Tools::Static(ToolMap::new().with(fetch::tool(fetcher))),
            )
            .with_icon("globe"),
        ],
    })
}
