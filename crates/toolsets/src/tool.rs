//! A tool as tool sets hold it: something the runtime can call, plus annotations, an
//! optional icon, and an identity that tells whether two claims are really the same tool.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use toolhost_runtime::{NativeTool, ToolRef};

/// Hints for clients and the model (MCP's tool annotations), plus a deadline.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// It changes nothing.
    #[serde(rename = "readOnlyHint", skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Its changes may destroy something.
    #[serde(rename = "destructiveHint", skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments does no more than once.
    #[serde(rename = "idempotentHint", skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// It reaches outside the host (the web, other services).
    #[serde(rename = "openWorldHint", skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
    /// The call's deadline unless the caller gives one (seconds in JSON).
    #[serde(
        rename = "timeoutSecs",
        skip_serializing_if = "Option::is_none",
        with = "toolhost_spec::seconds::opt_secs"
    )]
    pub timeout: Option<Duration>,
}

impl Annotations {
    /// A tool that only reads: read-only, idempotent, closed-world.
    pub fn read_only() -> Annotations {
        Annotations {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
            timeout: None,
        }
    }
}

/// A callable tool. Cheap to clone.
#[derive(Clone)]
pub struct Tool(Arc<Inner>);

struct Inner {
    target: ToolRef,
    annotations: Annotations,
    icon: Option<String>,
    identity: String,
}

impl Tool {
    /// A tool written in Rust. Its identity is its type plus what the model sees of it,
    /// so the same tool built twice (a shared factory called by two sets) is one tool,
    /// while a different tool under the same name is not.
    pub fn native<T: NativeTool>(tool: T) -> Tool {
        let identity = format!(
            "native:{}:{}",
            std::any::type_name::<T>(),
            fingerprint(tool.description(), &tool.input_schema())
        );
        Tool::with_ref(ToolRef::Native(Arc::new(tool)), identity)
    }

    /// A folder tool from the catalog: the same folder at the same content is the same tool.
    pub fn folder(tool: Arc<toolhost_catalog::Tool>) -> Tool {
        let identity = format!("folder:{}:{}", tool.dir.display(), tool.hash.to_hex());
        let annotations = Annotations {
            timeout: tool.manifest.timeout,
            ..Annotations::default()
        };
        Tool::with_ref(ToolRef::Folder(tool), identity).annotated(annotations)
    }

    /// Any runtime tool with an explicit identity (two tools are the same exactly when
    /// their identities are equal).
    pub fn with_ref(target: ToolRef, identity: String) -> Tool {
        Tool(Arc::new(Inner {
            target,
            annotations: Annotations::default(),
            icon: None,
            identity,
        }))
    }

    /// The same tool with `annotations`.
    pub fn annotated(self, annotations: Annotations) -> Tool {
        self.map(|i| i.annotations = annotations)
    }

    /// A per-tool icon override (a Lucide icon name), checked before every map.
    pub fn with_icon(self, icon: impl Into<String>) -> Tool {
        let icon = icon.into();
        self.map(|i| i.icon = Some(icon))
    }

    /// Adds to the identity: for tools whose behaviour depends on state they were built
    /// with (a workspace, a connection), which type, description and schema do not show.
    pub fn with_instance(self, instance: &str) -> Tool {
        let instance = instance.to_string();
        self.map(|i| {
            i.identity.push('#');
            i.identity.push_str(&instance);
        })
    }

    fn map(self, f: impl FnOnce(&mut Inner)) -> Tool {
        let mut inner = match Arc::try_unwrap(self.0) {
            Ok(inner) => inner,
            Err(shared) => Inner {
                target: shared.target.clone(),
                annotations: shared.annotations.clone(),
                icon: shared.icon.clone(),
                identity: shared.identity.clone(),
            },
        };
        f(&mut inner);
        Tool(Arc::new(inner))
    }

    /// What the runtime calls.
    pub fn target(&self) -> &ToolRef {
        &self.0.target
    }

    /// The tool's own name (the key it is claimed under may differ).
    pub fn own_name(&self) -> &str {
        self.0.target.name()
    }

    /// What the model reads about it.
    pub fn description(&self) -> String {
        match &self.0.target {
            ToolRef::Folder(t) => t.manifest.description.clone(),
            ToolRef::Native(t) => t.description().to_string(),
            ToolRef::Plugin(t) => t.description.clone(),
        }
    }

    /// The JSON Schema of its arguments.
    pub fn input_schema(&self) -> Value {
        match &self.0.target {
            ToolRef::Folder(t) => t.input_schema().clone(),
            ToolRef::Native(t) => t.input_schema(),
            ToolRef::Plugin(t) => t.input_schema.clone(),
        }
    }

    /// Its hints and deadline.
    pub fn annotations(&self) -> &Annotations {
        &self.0.annotations
    }

    /// Its own icon override.
    pub fn icon(&self) -> Option<&str> {
        self.0.icon.as_deref()
    }

    /// What tells it apart from another tool of the same name.
    pub fn identity(&self) -> &str {
        &self.0.identity
    }

    /// True when both are the same tool (not merely the same name).
    pub fn same_as(&self, other: &Tool) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.identity == other.0.identity
    }
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.own_name())
            .field("identity", &self.0.identity)
            .finish()
    }
}

/// A short hash of a description and a schema: part of the identity of a tool built from
/// a description and schema it was given (an external server's), so that a changed tool
/// is a different tool.
pub fn fingerprint(description: &str, schema: &Value) -> String {
    let mut h = blake3::Hasher::new();
    h.update(description.as_bytes());
    h.update(&[0]);
    h.update(schema.to_string().as_bytes());
    h.finalize().to_hex()[..16].to_string()
}

/// Tools keyed by the names they claim, in the order they were added.
#[derive(Clone, Default, Debug)]
pub struct ToolMap(Vec<(String, Tool)>);

impl ToolMap {
    /// An empty map.
    pub fn new() -> ToolMap {
        ToolMap::default()
    }

    /// Adds `tool` under `key`, replacing an earlier tool under the same key.
    pub fn insert(&mut self, key: impl Into<String>, tool: Tool) {
        let key = key.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = tool,
            None => self.0.push((key, tool)),
        }
    }

    /// Adds `tool` under its own name.
    pub fn add(&mut self, tool: Tool) {
        self.insert(tool.own_name().to_string(), tool);
    }

    /// The same map with `tool` added under its own name.
    pub fn with(mut self, tool: Tool) -> ToolMap {
        self.add(tool);
        self
    }

    /// `(name, tool)` in the order they were added.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Tool)> {
        self.0.iter().map(|(k, t)| (k.as_str(), t))
    }

    /// The names, in the order they were added.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when it holds no tool.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<Tool> for ToolMap {
    fn from_iter<I: IntoIterator<Item = Tool>>(iter: I) -> ToolMap {
        let mut map = ToolMap::new();
        for t in iter {
            map.add(t);
        }
        map
    }
}
