//! A custom tool source served over MCP on stdio.
//!
//! Toolhost's surfaces serve any `ToolSource`: the catalog of tool folders and an agent's
//! tool sets are two; this one serves a single tool written in Rust (`roll_dice`). Calls
//! still go through the runtime, so arguments are validated against the schema, and
//! deadlines, cancellation and progress work as for every other tool.
//!
//! Try it with any MCP client, or by hand:
//!
//! ```sh
//! cargo run -p toolhost-examples --example custom_source
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roll_dice","arguments":{"sides":6,"count":3}}}
//! ```

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use toolhost_host::{Caller, Change, ToolInfo, ToolSource, homes_dir, user_space};
use toolhost_mcp::McpServer;
use toolhost_runtime::{
    NativeContext, NativeOutput, NativeTool, Runtime, RuntimeConfig, Target, ToolEnv, ToolRef,
};

/// Rolls dice with a small deterministic generator, so that the example's output can be
/// checked: the same `seed` gives the same rolls.
struct RollDice;

impl NativeTool for RollDice {
    fn name(&self) -> &str {
        "roll_dice"
    }

    fn description(&self) -> &str {
        "Roll `count` dice with `sides` sides each and return the rolls and their sum."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "sides": {"type": "integer", "minimum": 2, "maximum": 1000, "description": "Sides per die."},
                "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 1, "description": "How many dice."},
                "seed": {"type": "integer", "default": 1, "description": "Same seed, same rolls."}
            },
            "required": ["sides"],
            "additionalProperties": false
        })
    }

    fn call(&self, args: Value, ctx: NativeContext) -> NativeOutput {
        Box::pin(async move {
            // The runtime validated the arguments against the schema (and applied its
            // defaults) before this runs.
            let sides = args["sides"].as_u64().unwrap_or(6);
            let count = args["count"].as_u64().unwrap_or(1);
            let mut state = args["seed"].as_u64().unwrap_or(1).max(1);
            ctx.progress(format!("rolling {count}d{sides}"));
            let rolls: Vec<u64> = (0..count)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state % sides + 1
                })
                .collect();
            let sum: u64 = rolls.iter().sum();
            Ok(json!(format!("rolled {rolls:?}, sum {sum}")))
        })
    }
}

/// The source: the same one tool for every caller, and no changes ever.
struct Dice {
    tool: Arc<dyn NativeTool>,
    changes: broadcast::Sender<Change>,
}

#[async_trait::async_trait]
impl ToolSource for Dice {
    async fn tools(&self, _caller: &Caller) -> Vec<ToolInfo> {
        let schema = match self.tool.input_schema() {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        vec![ToolInfo {
            name: self.tool.name().to_string(),
            title: "Roll dice".to_string(),
            description: self.tool.description().to_string(),
            input_schema: Arc::new(schema),
            hints: None,
        }]
    }

    async fn resolve(&self, _caller: &Caller, name: &str) -> Option<Target> {
        (name == self.tool.name()).then(|| Target::new(ToolRef::Native(Arc::clone(&self.tool))))
    }

    fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Native tools run in this process: no tool process, so no sandbox to start.
    let mut config = RuntimeConfig::default();
    config.sandbox.enabled = false;
    let runtime = Runtime::new(config, ToolEnv::default())?;
    let caller = Caller::new(user_space(None, None)?);
    let source = Arc::new(Dice {
        tool: Arc::new(RollDice),
        changes: broadcast::channel(1).0,
    });
    eprintln!(
        "serving roll_dice on stdio (homes in {})",
        homes_dir(None).display()
    );
    let server = McpServer::new(source, runtime.clone(), caller);
    toolhost_mcp::serve_stdio(server, CancellationToken::new()).await?;
    runtime.shutdown().await;
    Ok(())
}
