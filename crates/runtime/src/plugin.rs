//! Platypus plugins: JavaScript or TypeScript packages whose tool sets hold AI SDK tools.
//! The runtime runs them on warm Node.js workers like folder tools, one worker per user,
//! plugin package and code version (`node/plugins.mjs` is the worker's side). Loading a
//! plugin, calling a tool set's factory for a turn and running the turn's closers are
//! operations on that worker too ([`PluginOp`]); a tool call is a [`PluginTool`] called
//! through [`crate::Runtime::call`] like any other tool.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A plugin package, found and configured, as its workers load it.
#[derive(Debug, Clone)]
pub struct PluginModule {
    /// How the operator named it in `TOOLHOST_PLUGINS` (a package name or a path).
    pub spec: String,
    /// Its manifest's name, once loaded (empty before).
    pub name: String,
    /// The entry file, links resolved.
    pub entry: PathBuf,
    /// The package's folder (the nearest one above the entry with a `package.json`, else
    /// the entry's folder): its code version is this folder's, `node_modules` aside.
    pub root: PathBuf,
    /// What its worker's sandbox shows, read-only, at the same paths: the package folder
    /// and every `node_modules` folder Node.js would search from it.
    pub mounts: Arc<[PathBuf]>,
    /// `{config, credentials}` as the operator gave them; the plugin's own schemas parse
    /// them in the worker.
    pub settings: Value,
    /// Credential values, kept out of logs and results.
    pub secrets: Vec<String>,
    /// Whether its worker's sandbox has the network.
    pub network: bool,
}

impl PluginModule {
    /// A plugin whose entry file is `entry`: finds its package folder and the folders its
    /// worker must see.
    pub fn at(spec: &str, entry: &Path) -> std::io::Result<PluginModule> {
        let entry = std::fs::canonicalize(entry)?;
        let dir = entry.parent().unwrap_or(Path::new("/")).to_path_buf();
        let root = dir
            .ancestors()
            .take_while(|d| d.file_name().is_some_and(|n| n != "node_modules"))
            .find(|d| d.join("package.json").is_file())
            .unwrap_or(&dir)
            .to_path_buf();
        let mut mounts = vec![root.clone()];
        for d in root.ancestors() {
            let modules = d.join("node_modules");
            if modules.is_dir() && !mounts.iter().any(|m| modules.starts_with(m)) {
                mounts.push(std::fs::canonicalize(&modules).unwrap_or(modules));
            }
        }
        Ok(PluginModule {
            spec: spec.to_string(),
            name: String::new(),
            entry,
            root,
            mounts: mounts.into(),
            settings: Value::Null,
            secrets: Vec::new(),
            network: true,
        })
    }

    /// The same module under its manifest's name.
    pub fn named(&self, name: &str) -> PluginModule {
        PluginModule {
            name: name.to_string(),
            ..self.clone()
        }
    }
}

/// A tool of a plugin's tool set, as the runtime calls it.
#[derive(Debug)]
pub struct PluginTool {
    /// The plugin.
    pub module: Arc<PluginModule>,
    /// The tool set's id in the plugin's manifest.
    pub set: String,
    /// The tool's key in the set's map.
    pub key: String,
    /// Its name as callers name it (`PLUGIN__KEY`).
    pub name: String,
    /// What the model reads.
    pub description: String,
    /// Its input's JSON Schema, converted from its own schema.
    pub input_schema: Value,
    /// The turn whose factory built it; `None` for a static map's tool.
    pub turn: Option<Arc<PluginTurn>>,
    pub(crate) schema_hash: [u8; 32],
}

impl PluginTool {
    /// A tool described by the plugin's worker.
    pub fn new(
        module: Arc<PluginModule>,
        set: &str,
        described: DescribedTool,
        turn: Option<Arc<PluginTurn>>,
    ) -> PluginTool {
        let name = format!("{}__{}", module.name, described.key);
        // Names the validator of its schema (two plugins' tools may share a schema).
        let mut h = blake3::Hasher::new();
        h.update(name.as_bytes());
        h.update(&[0]);
        h.update(described.input_schema.to_string().as_bytes());
        let schema_hash = *h.finalize().as_bytes();
        PluginTool {
            name,
            module,
            set: set.to_string(),
            key: described.key,
            description: described.description,
            input_schema: described.input_schema,
            turn,
            schema_hash,
        }
    }
}

/// The turn a factory's tools belong to: its id on the plugin's workers, and the context
/// the factory got (sent again should a fresh worker have to call the factory anew).
#[derive(Debug, Clone, Serialize)]
pub struct PluginTurn {
    /// Unique in this process.
    pub id: u64,
    /// `{workspaceId, agentId, orgId, frontendUrl, userId}`.
    pub ctx: Value,
}

/// One operation on a plugin's worker besides a tool call.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum PluginOp {
    /// Import the plugin and check its manifest: its name.
    Manifest,
    /// Import the plugin, check its manifest, parse its settings, describe its tool sets.
    Load,
    /// Call tool set `set`'s factory for a turn; describe what it built.
    Factory {
        /// The set's id in the manifest.
        set: String,
        /// The turn.
        turn: u64,
        /// The turn's context.
        ctx: Value,
    },
    /// Run the closers registered during a turn, and forget its tools.
    Close {
        /// The turn.
        turn: u64,
    },
}

/// What the worker sends with a call: the operation and the plugin's settings.
#[derive(Debug, Serialize)]
pub(crate) struct PluginMessage<'a> {
    #[serde(flatten)]
    pub op: PluginCallOp<'a>,
    pub settings: &'a Value,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum PluginCallOp<'a> {
    Op(&'a PluginOp),
    Execute(ExecuteOp<'a>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "op", rename = "execute")]
pub(crate) struct ExecuteOp<'a> {
    pub set: &'a str,
    pub tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctx: Option<&'a Value>,
}

/// A plugin as its worker describes it after loading.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DescribedPlugin {
    /// The manifest's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The plugin API version it targets.
    pub api_version: u32,
    /// Its tool sets.
    pub tool_sets: Vec<DescribedSet>,
    /// Contributions that are not tool sets: sandbox backends.
    pub sandbox_backends: Vec<Backend>,
    /// Web backends.
    pub web_backends: Vec<Backend>,
}

/// A tool set of a plugin.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DescribedSet {
    /// Its id in the manifest.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Category.
    pub category: String,
    /// Description.
    pub description: String,
    /// Whether its tools come from a factory per turn.
    pub factory: bool,
    /// A static map's tools (none for a factory).
    #[serde(default)]
    pub tools: Vec<DescribedTool>,
    /// Tools left out, and why.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
}

/// What a factory built for a turn.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescribedTools {
    /// The tools.
    pub tools: Vec<DescribedTool>,
    /// Tools left out, and why.
    pub skipped: Vec<Skipped>,
}

/// One tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DescribedTool {
    /// Its key in the set's map.
    pub key: String,
    /// What the model reads.
    pub description: String,
    /// Its input as JSON Schema.
    pub input_schema: Value,
}

/// A tool the loader left out.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    /// Its key.
    pub tool: String,
    /// Why.
    pub reason: String,
}

/// A contribution that is not a tool set.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Backend {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
}

/// What running a turn's closers did.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClosersRan {
    /// How many ran.
    pub ran: usize,
    /// The errors of those that threw.
    pub failed: Vec<String>,
    /// How many were still running after 5 s (abandoned).
    pub timed_out: usize,
}

/// Why a plugin operation failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginError {
    /// The plugin said so (manifest, settings, factory), or its code did not load.
    #[error("{0}")]
    Plugin(String),
    /// The worker or the runtime could not run it.
    #[error(transparent)]
    Runtime(#[from] Arc<crate::RuntimeError>),
    /// It did not finish in time.
    #[error("did not finish within {0:.1?}")]
    TimedOut(std::time::Duration),
    /// The worker's answer did not fit the protocol.
    #[error("the plugin worker answered in an unexpected form: {0}")]
    Protocol(String),
}
