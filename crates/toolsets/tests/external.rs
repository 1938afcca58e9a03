//! External sources handed to boot: granted by name, listed concurrently per turn, their
//! icon applied, a failed listing costing only their tools, shut down with the registry.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use futures::future::BoxFuture;
use toolhost_toolsets::{
    BootError, BootOptions, CorePlugins, ExternalSource, Grant, IconSource, Listing, Owner,
    Registry, ToolMap, ToolsetsConfig, TurnRequest,
};

struct Fake {
    name: String,
    fail: bool,
    shut: Arc<AtomicUsize>,
}

impl ExternalSource for Fake {
    fn name(&self) -> &str {
        &self.name
    }

    fn transport(&self) -> String {
        "fake".into()
    }

    fn icon(&self) -> Option<&str> {
        Some("server")
    }

    fn list(&self) -> BoxFuture<'_, Listing> {
        Box::pin(async move {
            if self.fail {
                return Listing::failed("down".into());
            }
            let name = format!("{}__echo", self.name);
            let mut tools = ToolMap::new();
            tools.insert(name.clone(), echo(&name, "Echo."));
            Listing {
                tools,
                warning: None,
            }
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.shut.fetch_add(1, Ordering::SeqCst);
        })
    }
}

fn fake(name: &str, fail: bool, shut: &Arc<AtomicUsize>) -> Arc<dyn ExternalSource> {
    Arc::new(Fake {
        name: name.into(),
        fail,
        shut: Arc::clone(shut),
    })
}

#[tokio::test]
async fn external_sources_are_granted_listed_and_shut_down() {
    let shut = Arc::new(AtomicUsize::new(0));
    let mut config = ToolsetsConfig::default();
    agent(
        &mut config,
        "a",
        vec![Grant::mcp_server("up"), Grant::mcp_server("down")],
    );
    let r = Registry::boot(
        CorePlugins::new(),
        BootOptions {
            config,
            external: vec![fake("up", false, &shut), fake("down", true, &shut)],
            ..BootOptions::default()
        },
    )
    .unwrap();
    let sources = r.external_sources();
    let names: Vec<&str> = sources.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["down", "up"]);

    let turn = r.resolve("a", &TurnRequest::default()).await.unwrap();
    let tool = turn.tool("up__echo").unwrap();
    assert_eq!(tool.claim.owner, Owner::McpServer { name: "up".into() });
    assert_eq!(tool.icon, "server");
    assert_eq!(tool.icon_source, IconSource::ToolSet { set: "up".into() });
    assert_eq!(turn.warnings.len(), 1);
    assert_eq!(turn.warnings[0].source, "MCP server `down`");
    assert_eq!(turn.warnings[0].message, "down");
    turn.end().await;

    r.shutdown().await;
    assert_eq!(shut.load(Ordering::SeqCst), 2);
}

#[test]
fn two_sources_with_one_name_fail_boot() {
    let shut = Arc::new(AtomicUsize::new(0));
    let e = Registry::boot(
        CorePlugins::new(),
        BootOptions {
            external: vec![fake("twin", false, &shut), fake("twin", false, &shut)],
            ..BootOptions::default()
        },
    )
    .err()
    .unwrap();
    assert!(matches!(e, BootError::DuplicateSource { .. }), "{e}");
    assert_eq!(e.to_string(), "MCP server `twin` is configured twice");
}
