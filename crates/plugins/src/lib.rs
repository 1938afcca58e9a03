//! Toolhost's core plugins, on the tool-set framework's public API only, and the loader
//! map that makes them core ([`builtin`]).
//!
//! - [`utilities`]: always on; time and unit conversions.
//! - [`web`]: gated (name it in `TOOLHOST_PLUGINS`); `web_fetch` behind an egress guard.
#![warn(missing_docs, unreachable_pub)]

pub mod utilities;
pub mod web;

use toolhost_toolsets::CorePlugins;

/// Toolhost's loader map (the allowlist) and its always-on list.
pub fn builtin() -> CorePlugins {
    CorePlugins::new()
        .always_on(utilities::NAME, utilities::load)
        .gated(web::NAME, web::load)
}
