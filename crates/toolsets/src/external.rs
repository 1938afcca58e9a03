//! External tool sources: servers outside the host whose tools are listed per turn (MCP
//! servers, built by `toolhost-mcp-client`). The framework does not know how to reach
//! them; boot receives them already built ([`BootOptions::external`](crate::BootOptions)).
//! A grant names one as `mcp_server = "NAME"`; its tools are `NAME__TOOL`.

use futures::future::BoxFuture;

use crate::tool::ToolMap;

/// One external server as a source of tools.
pub trait ExternalSource: Send + Sync + 'static {
    /// Its name: the grant's `mcp_server`, the set its tools are claimed under, and the
    /// prefix of their names (`NAME__TOOL`).
    fn name(&self) -> &str;

    /// How it is reached, for listings (`stdio `node server.mjs``, `streamable HTTP URL`).
    fn transport(&self) -> String;

    /// A Lucide icon name for its tools.
    fn icon(&self) -> Option<&str> {
        None
    }

    /// This turn's tools. Never fails: problems become the listing's warning and cost
    /// only this source's tools.
    fn list(&self) -> BoxFuture<'_, Listing>;

    /// How its last listing went.
    fn health(&self) -> SourceHealth {
        SourceHealth::NotContacted
    }

    /// Closes what it holds open (connections, child processes). Called once at shutdown,
    /// before the Tokio runtime goes away.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

/// How a source's last listing went, for status pages and metrics.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SourceHealth {
    /// No turn has listed it yet.
    NotContacted,
    /// It answered with its tools.
    Live,
    /// It failed: its last good listing is served while it is recent enough.
    Failing {
        /// Why it failed last.
        error: String,
        /// Failures in a row.
        failures: u32,
        /// Whether its last good listing is served meanwhile.
        serving_stale: bool,
    },
}

/// What one listing of a source gave this turn.
pub struct Listing {
    /// The tools, keyed by the names they claim (`NAME__TOOL`).
    pub tools: ToolMap,
    /// Set when the source cost tools (or served a stale listing).
    pub warning: Option<String>,
}

impl Listing {
    /// No tools, and why.
    pub fn failed(message: String) -> Listing {
        Listing {
            tools: ToolMap::new(),
            warning: Some(message),
        }
    }
}
