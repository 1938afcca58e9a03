//! Tool sets: what plugins contribute and agents are granted.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::context::TurnContext;
use crate::tool::ToolMap;

/// A group of tools with a stable id. Agents persist granted ids, so an id is never
/// renamed once shipped.
#[derive(Clone)]
pub struct ToolSet {
    /// Kebab-case, checked at boot.
    pub id: String,
    /// A display name.
    pub name: String,
    /// Groups sets in agent forms ("Utilities", "Web", …).
    pub category: String,
    /// What the set is for, for agent forms and listings.
    pub description: String,
    /// A Lucide icon name for the set's tools.
    pub icon: Option<String>,
    /// Its tools.
    pub tools: Tools,
    /// How long a factory may take per turn (default: the `[turns]` setting, 20 s).
    pub resolve_timeout: Option<Duration>,
}

impl ToolSet {
    /// A set without an icon or a deadline of its own.
    pub fn new(id: &str, name: &str, category: &str, description: &str, tools: Tools) -> ToolSet {
        ToolSet {
            id: id.into(),
            name: name.into(),
            category: category.into(),
            description: description.into(),
            icon: None,
            tools,
            resolve_timeout: None,
        }
    }

    /// The same set with a Lucide icon.
    pub fn with_icon(mut self, icon: &str) -> ToolSet {
        self.icon = Some(icon.into());
        self
    }

    /// Names of the tools the set contributes, as far as known without a turn.
    pub fn known_tools(&self) -> Vec<String> {
        match &self.tools {
            Tools::Static(map) => map.keys().map(str::to_string).collect(),
            Tools::Factory(f) => f.known_tools(),
        }
    }
}

/// A set's tools: fixed, or built per turn against the turn's context.
#[derive(Clone)]
pub enum Tools {
    /// The same tools every turn.
    Static(ToolMap),
    /// Tools built per turn.
    Factory(Arc<dyn ToolFactory>),
}

impl Tools {
    /// Tools built per turn by `f`.
    pub fn factory(f: impl ToolFactory) -> Tools {
        Tools::Factory(Arc::new(f))
    }

    /// The tools, when they are known without a turn: a static map, or what a factory
    /// says it has now ([`ToolFactory::listed`]).
    pub fn listed(&self) -> Option<ToolMap> {
        match self {
            Tools::Static(map) => Some(map.clone()),
            Tools::Factory(f) => f.listed(),
        }
    }

    /// `static` (the same tools every turn, known without one) or `factory`.
    pub fn kind(&self) -> &'static str {
        match self {
            Tools::Static(_) => "static",
            Tools::Factory(f) if f.listed().is_some() => "static",
            Tools::Factory(_) => "factory",
        }
    }
}

/// Why a factory could not build its tools this turn: any error (its message becomes the
/// turn's warning), so a factory can use `?`.
pub type FactoryError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What [`ToolFactory::tools`] returns.
pub type FactoryFuture = Pin<Box<dyn Future<Output = Result<ToolMap, FactoryError>> + Send>>;

/// Builds a set's tools for one turn (scoped to a workspace, a user, …). Anything that
/// needs teardown is registered with [`TurnContext::register_closer`].
pub trait ToolFactory: Send + Sync + 'static {
    /// This turn's tools.
    fn tools(&self, ctx: TurnContext) -> FactoryFuture;

    /// The names this factory may produce, for listings, icons and `doctor`.
    fn known_tools(&self) -> Vec<String> {
        Vec::new()
    }

    /// Per-tool icon overrides of the tools it may produce: `(tool, Lucide icon)`.
    fn icon_overrides(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The tools it has now, when that does not depend on the turn: a set whose tools are
    /// static but may be reloaded (a Platypus plugin's static map, as last described).
    /// Listings, the catalog and `doctor` read them as a static set's.
    fn listed(&self) -> Option<ToolMap> {
        None
    }
}

impl<F, Fut> ToolFactory for F
where
    F: Fn(TurnContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolMap, FactoryError>> + Send + 'static,
{
    fn tools(&self, ctx: TurnContext) -> FactoryFuture {
        Box::pin(self(ctx))
    }
}
