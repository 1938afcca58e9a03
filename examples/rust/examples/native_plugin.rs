//! A native plugin: tools written in Rust, contributed as a tool set, granted to an agent,
//! resolved for a turn and called through the runtime like any other tool.
//!
//! ```sh
//! cargo run -p toolhost-examples --example native_plugin -- "Hello, World"
//! ```
//!
//! A plugin is a loader: given its `[plugins.NAME]` settings, it returns its tool sets. The
//! host boots every loader of its map (`CorePlugins`); an agent's grants then decide which
//! tool sets it sees in each turn.

use std::process::ExitCode;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_runtime::{CallEvent, Runtime, RuntimeConfig, ToolEnv, UserSpace};
use toolhost_toolsets::{
    AgentConfig, Annotations, BootOptions, CorePlugins, Grant, LoadError, PLUGIN_API_VERSION,
    Plugin, PluginSettings, Registry, ToolError, ToolMap, ToolSet, Tools, ToolsetsConfig,
    TurnRequest, typed_tool,
};

/// The plugin's settings (`[plugins.text]` in toolhost.toml): typed, with defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TextSettings {
    /// Longest text the tools accept, in characters (0: the default, 10,000).
    max_chars: usize,
}

/// The arguments of `shout`; the doc comments become the schema's descriptions.
#[derive(Deserialize, JsonSchema)]
struct ShoutArgs {
    /// The text to shout.
    text: String,
    /// How many exclamation marks to add.
    #[serde(default)]
    emphasis: Option<u8>,
}

/// The loader: reads its settings, returns its tool sets.
fn load(settings: &PluginSettings) -> Result<Plugin, LoadError> {
    let TextSettings { max_chars } = toolhost_toolsets::settings("text", settings)?;
    let max_chars = if max_chars == 0 { 10_000 } else { max_chars };
    let shout = typed_tool(
        "shout",
        "Repeat a text in capitals, with emphasis.",
        Annotations::read_only(),
        move |a: ShoutArgs, ctx| async move {
            if a.text.chars().count() > max_chars {
                // A typed error: the model reads "invalid arguments: …" and can recover.
                return Err(ToolError::InvalidArguments(format!(
                    "the text is longer than {max_chars} characters"
                )));
            }
            ctx.progress("shouting");
            let marks = "!".repeat(usize::from(a.emphasis.unwrap_or(1)));
            Ok(json!(format!("{}{marks}", a.text.to_uppercase())))
        },
    );
    Ok(Plugin {
        name: "text".into(),
        version: "1.0.0".into(),
        api_version: PLUGIN_API_VERSION,
        tool_sets: vec![
            ToolSet::new(
                "text-tools",
                "Text tools",
                "Writing",
                "Tools that transform text",
                Tools::Static(ToolMap::new().with(shout)),
            )
            .with_icon("type"),
        ],
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let text = std::env::args().nth(1).unwrap_or_else(|| "hello".into());
    match run(&text).await {
        Ok(out) => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(text: &str) -> Result<String, Box<dyn std::error::Error>> {
    // The plugin is always on here; `gated` would need it named in TOOLHOST_PLUGINS.
    let plugins = CorePlugins::new().always_on("text", load);
    let mut config = ToolsetsConfig::default();
    config.agents.insert(
        "writer".into(),
        AgentConfig {
            name: Some("Writer".into()),
            grants: vec![Grant::tool_set("text-tools")],
            ..AgentConfig::default()
        },
    );
    config
        .plugins
        .insert("text".into(), json!({ "max_chars": 100 }));
    let registry = Registry::boot(
        plugins,
        BootOptions {
            enabled: None,
            config,
            extra_sets: Vec::new(),
            external: Vec::new(),
            third_party: Vec::new(),
        },
    )?;

    // One turn of the agent: what its model sees now.
    let turn = registry.resolve("writer", &TurnRequest::default()).await?;
    let names: Vec<&str> = turn.tools.iter().map(|t| t.name.as_str()).collect();
    eprintln!("the writer sees: {names:?}");
    let shout = turn.tool("shout").ok_or("the turn has no `shout`")?;

    // Native tools run in this process: no sandbox needed.
    let mut runtime_config = RuntimeConfig::default();
    runtime_config.sandbox.enabled = false;
    let runtime = Runtime::new(runtime_config, ToolEnv::default())?;
    let user = UserSpace::in_homes(&std::env::temp_dir().join("native-plugin-homes"), "writer")?;
    let mut call = shout.call(&runtime, json!({ "text": text, "emphasis": 3 }), user);
    let result = loop {
        match call.next().await {
            Some(CallEvent::Progress(p)) => eprintln!("progress: {}", p.text()),
            Some(CallEvent::Done(r)) => break r,
            None => return Err("the call ended without a result".into()),
        }
    };
    runtime.shutdown().await;
    turn.end().await;
    registry.shutdown().await;
    if result.is_error {
        return Err(result.joined_text().into());
    }
    Ok(result.joined_text())
}
