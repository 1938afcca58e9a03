//! What a surface serves: a source of tools per caller.
//!
//! No surface looks at the catalog or the tool-set registry directly. [`CatalogSource`]
//! serves the catalog, [`AgentSource`] an agent's resolved tool sets, and an embedder may
//! serve its own: every surface lists and calls through this interface alone.
//!
//! [`CatalogSource`]: crate::CatalogSource
//! [`AgentSource`]: crate::AgentSource

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::broadcast;
use toolhost_runtime::Target;

use crate::Caller;

/// A tool as a listing shows it, in no protocol's terms: each surface turns it into its
/// own (MCP's `Tool`, the HTTP API's JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The name a model calls it by.
    pub name: String,
    /// A human-readable name: the TOOL.md `label`, else the name.
    pub title: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments (an object schema).
    pub input_schema: Arc<Map<String, Value>>,
    /// Behaviour hints, when the tool's tool set gives any.
    pub hints: Option<Hints>,
}

/// What a tool's tool set says about its behaviour; `None` is "not said". MCP calls these
/// tool annotations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    /// It changes nothing outside itself.
    pub read_only: Option<bool>,
    /// It may destroy or overwrite (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments does nothing more than once.
    pub idempotent: Option<bool>,
    /// It reaches an open world (the web), not a closed one (a database).
    pub open_world: Option<bool>,
}

/// Something that may have changed what [`ToolSource::tools`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The user whose tools changed; `None` means every user's.
    pub user: Option<String>,
}

impl Change {
    /// Whether `caller`'s listing may have changed.
    pub fn concerns(&self, caller: &Caller) -> bool {
        self.user.as_deref().is_none_or(|u| u == caller.user())
    }
}

/// The tools one caller sees, and how to call them.
#[async_trait::async_trait]
pub trait ToolSource: Send + Sync + 'static {
    /// Every tool `caller` may call, ordered by name (a stable order keeps clients'
    /// prompt caches warm).
    async fn tools(&self, caller: &Caller) -> Vec<ToolInfo>;

    /// The tool `caller` means by `name`, if they may call it.
    async fn resolve(&self, caller: &Caller, name: &str) -> Option<Target>;

    /// Publishes a [`Change`] whenever `tools` may return something new.
    fn changes(&self) -> broadcast::Receiver<Change>;

    /// The agent whose tools this source serves, if it serves one agent's (its calls are
    /// that agent's in the call log).
    fn agent(&self) -> Option<&str> {
        None
    }

    /// Ends every caller's current turn, running its closers (a serving surface going
    /// away: a turn left to be dropped would lose them with the runtime).
    async fn close_turns(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_runtime::UserSpace;

    #[test]
    fn a_change_concerns_its_user_or_everyone() {
        let ada = Caller::new(UserSpace {
            user: "ada".into(),
            home: "/d/ada".into(),
        });
        assert!(Change { user: None }.concerns(&ada));
        assert!(
            Change {
                user: Some("ada".into())
            }
            .concerns(&ada)
        );
        assert!(
            !Change {
                user: Some("bob".into())
            }
            .concerns(&ada)
        );
    }
}
