//! `web`: gated (an operator may well deny egress). A URL fetch tool that converts HTML
//! to Markdown, slices long pages, honours robots.txt and guards egress.

mod egress;
mod fetch;
mod robots;

use std::time::Duration;

use serde::Deserialize;

use toolhost_toolsets::{
    LoadError, PLUGIN_API_VERSION, Plugin, PluginSettings, SettingsError, ToolMap, ToolSet, Tools,
};

/// The plugin's name.
pub const NAME: &str = "web";

/// Why the web plugin could not load.
#[derive(Debug, thiserror::Error)]
pub enum WebLoadError {
    /// `[plugins.web]` does not fit [`WebSettings`].
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The HTTP client could not be built (its TLS setup, as a rule).
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
}

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
    #[serde(with = "toolhost_spec::seconds::secs")]
    pub timeout: Duration,
    /// Most redirects followed (each hop passes the egress guard again).
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

/// The loader: the `web` tool set. Its errors are [`WebLoadError`]s.
pub fn load(settings: &PluginSettings) -> Result<Plugin, LoadError> {
    Ok(plugin(settings)?)
}

fn plugin(settings: &PluginSettings) -> Result<Plugin, WebLoadError> {
    let settings: WebSettings = toolhost_toolsets::settings(NAME, settings)?;
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
