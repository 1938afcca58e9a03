//! The runtime embedded in a program of your own: scan a folder of tools, call one, show
//! its progress and result.
//!
//! ```sh
//! cargo run -p toolhost-examples --example embed_runtime -- examples/tools hash text=hello
//! ```
//!
//! Tool processes run in the embedded sandbox, which needs a helper process: the
//! embedding binary is that helper, so `main` hands over to it first thing (before any
//! thread starts). With the sandbox disabled (`[sandbox] enabled = false`) that line is
//! harmless.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value};
use toolhost_catalog::{Catalog, Root, RootOrigin};
use toolhost_runtime::{CallEvent, Runtime, RuntimeConfig, Target, ToolEnv, ToolRef, UserSpace};

fn main() -> ExitCode {
    if let Some(code) = toolhost_sandbox::helper_main() {
        return code;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, name, params @ ..] = args.as_slice() else {
        eprintln!("usage: embed_runtime TOOL_ROOT TOOL_NAME [KEY=VALUE ...]");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start Tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(call(root.into(), name, params)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Calls `name` from the tools in `root` with `KEY=VALUE` parameters; `Ok(false)` when the
/// tool answered with an error result.
async fn call(
    root: PathBuf,
    name: &str,
    params: &[String],
) -> Result<bool, Box<dyn std::error::Error>> {
    let root = std::path::absolute(root)?;
    let catalog = Catalog::scan(vec![Root {
        path: root.clone(),
        origin: RootOrigin::Flag,
    }]);
    let tool = catalog
        .get(name)
        .ok_or_else(|| format!("no tool `{name}` in {}", root.display()))?;
    let target = Target::new(ToolRef::Folder(Arc::clone(&tool.tool)));

    // Where users' homes live; each call runs in its user's home.
    let homes = std::env::temp_dir().join("embed-runtime-homes");
    let runtime = Runtime::new(
        RuntimeConfig::default(),
        ToolEnv {
            tools_dirs: vec![root],
            homes: Some(homes.clone()),
            ..ToolEnv::default()
        },
    )?;
    let user = UserSpace::in_homes(&homes, "example")?;

    // Strings are coerced to the schema's types by the runtime's validation.
    let mut args = Map::new();
    for p in params {
        let (key, value) = p.split_once('=').ok_or("parameters are KEY=VALUE")?;
        args.insert(key.to_string(), Value::String(value.to_string()));
    }
    let mut call = runtime.call(target.request(Value::Object(args), user));
    let result = loop {
        match call.next().await {
            Some(CallEvent::Progress(p)) => eprintln!("progress: {}", p.text()),
            Some(CallEvent::Done(result)) => break result,
            None => return Err("the call ended without a result".into()),
        }
    };
    runtime.shutdown().await;
    println!("{}", result.joined_text());
    Ok(!result.is_error)
}
