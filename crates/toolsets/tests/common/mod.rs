//! Test plugins and tools.
#![allow(dead_code, clippy::unwrap_used)]

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_toolsets::{
    Annotations, BootOptions, CorePlugins, Grant, PLUGIN_API_VERSION, Plugin, Registry, Tool,
    ToolMap, ToolSet, Tools, ToolsetsConfig, typed_tool,
};

#[derive(Deserialize, JsonSchema)]
pub struct EchoArgs {
    /// The text to echo back.
    pub text: String,
}

/// A native tool named `name` whose description is `description`.
pub fn echo(name: &str, description: &str) -> Tool {
    typed_tool(
        name,
        description,
        Annotations::read_only(),
        |a: EchoArgs, _ctx| async move { Ok(json!({ "echo": a.text })) },
    )
}

pub fn plugin(name: &str, sets: Vec<ToolSet>) -> Plugin {
    Plugin {
        name: name.into(),
        version: "0.1.0".into(),
        api_version: PLUGIN_API_VERSION,
        tool_sets: sets,
    }
}

pub fn set(id: &str, tools: ToolMap) -> ToolSet {
    ToolSet::new(id, id, "Tests", "a test set", Tools::Static(tools))
}

pub fn boot_with(core: CorePlugins, config: ToolsetsConfig, extra: Vec<ToolSet>) -> Registry {
    Registry::boot(
        core,
        BootOptions {
            enabled: None,
            config,
            extra_sets: extra
                .into_iter()
                .map(|s| {
                    (
                        s,
                        toolhost_toolsets::Owner::Plugin {
                            name: "extra".into(),
                        },
                    )
                })
                .collect(),
            external: Vec::new(),
            third_party: Vec::new(),
        },
    )
    .unwrap()
}

pub fn agent(config: &mut ToolsetsConfig, id: &str, grants: Vec<Grant>) {
    config.agents.insert(
        id.into(),
        toolhost_toolsets::AgentConfig {
            grants,
            ..Default::default()
        },
    );
}
