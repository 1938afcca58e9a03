//! `utilities`: always on. Pure tools no operator would deny: time and unit conversions.

mod time;
mod units;

use toolhost_toolsets::{
    LoadError, PLUGIN_API_VERSION, Plugin, PluginSettings, ToolMap, ToolSet, Tools,
};

/// The plugin's name.
pub const NAME: &str = "utilities";

/// `[plugins.utilities]`: nothing to set yet. Keys are ignored, as they always were (an
/// operator's file that sets some must keep booting).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct UtilitiesSettings {}

/// The loader: the `time` and `units` tool sets.
pub fn load(settings: &PluginSettings) -> Result<Plugin, LoadError> {
    let UtilitiesSettings {} = toolhost_toolsets::settings(NAME, settings)?;
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
