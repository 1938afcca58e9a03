//! Toolhost's core plugins and the loader map that makes them core.

pub mod utilities;
pub mod web;

use crate::plugin::CorePlugins;

/// The loader map (the allowlist) and the always-on list.
pub(crate) fn builtin() -> CorePlugins {
    CorePlugins::new()
        .always_on(utilities::NAME, utilities::load)
        .gated(web::NAME, web::load)
}
