//! `utilities`: always on. Pure tools no operator would deny: time and unit conversions.

mod time;
mod units;

use crate::plugin::{PLUGIN_API_VERSION, Plugin, PluginSettings};
use crate::tool::ToolMap;
use crate::toolset::{ToolSet, Tools};

pub const NAME: &str = "utilities";

pub fn load(_settings: &PluginSettings) -> Result<Plugin, String> {
    Ok(Plugin {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        api_version: PLUGIN_API_VERSION,
        tool_sets: vec![
            ToolSet::new(
                "time",
                "Time",
                "Utilities",
                "Tools for getting the current time and converting between time zones",
                Tools::Static(
                    ToolMap::new()
                        .with(time::current_time())
                        .with(time::convert_timezone()),
                ),
            )
            .with_icon("clock"),
            ToolSet::new(
                "units",
                "Unit conversion",
                "Utilities",
                "Convert temperatures, distances, weights and volumes between units",
                Tools::Static(
                    ToolMap::new()
                        .with(units::temperature())
                        .with(units::distance())
                        .with(units::weight())
                        .with(units::volume()),
                ),
            )
            .with_icon("ruler"),
        ],
    })
}
