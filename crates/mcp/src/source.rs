//! What the MCP server serves: a source of tools per caller.
//!
//! The server never looks at the catalog directly. Today [`crate::CatalogSource`] serves the
//! catalog; an agent's resolved tool sets can be served the same way by another source.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::broadcast;
use toolhost_runtime::{ToolRef, UserSpace};

/// Who is calling: the user a request was authenticated as (or the one default user) and
/// the home their tools run in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller {
    pub space: UserSpace,
}

impl Caller {
    pub fn user(&self) -> &str {
        &self.space.user
    }
}

/// A tool as `tools/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    /// The TOOL.md `label`.
    pub title: String,
    pub description: String,
    pub input_schema: Arc<Map<String, Value>>,
    /// MCP's behaviour hints (read-only, destructive, idempotent, open world), when the
    /// tool's tool set gives any.
    pub annotations: Option<rmcp::model::ToolAnnotations>,
}

/// A tool to call, as [`ToolSource::resolve`] finds it.
#[derive(Clone)]
pub struct Target {
    pub tool: ToolRef,
    /// A deadline the tool's tool set annotated it with; the runtime's otherwise.
    pub timeout: Option<Duration>,
}

/// Something that may have changed what [`ToolSource::tools`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The user whose tools changed; `None` means every user's.
    pub user: Option<String>,
}

impl Change {
    pub fn concerns(&self, caller: &Caller) -> bool {
        self.user.as_deref().is_none_or(|u| u == caller.user())
    }
}

/// The tools one caller sees, and how to call them.
pub trait ToolSource: Send + Sync + 'static {
    /// Every tool `caller` may call, ordered by name (a stable order keeps clients'
    /// prompt caches warm).
    fn tools(&self, caller: &Caller) -> Vec<ToolInfo>;

    /// The tool `caller` means by `name`, if they may call it.
    fn resolve(&self, caller: &Caller, name: &str) -> Option<Target>;

    /// Publishes a [`Change`] whenever `tools` may return something new.
    fn changes(&self) -> broadcast::Receiver<Change>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_concerns_its_user_or_everyone() {
        let ada = Caller {
            space: UserSpace {
                user: "ada".into(),
                home: "/d/ada".into(),
            },
        };
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
