//! The host as a surface sees it: booted from a configuration and tool roots, serving the
//! catalog and an agent's tool sets through the one `ToolSource` interface.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use toolhost_catalog::{Root, RootOrigin};
use toolhost_host::{
    CatalogView, ConfigFile, Host, HostError, HostOptions, ToolSource, check_exposure,
};

fn tool(root: &Path, name: &str, label: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!("---\nname: {name}\nlabel: {label}\ndescription: Says hello.\n---\n\nHello.\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("index.ts"),
        "export async function execute() { return 'hi'; }\n",
    )
    .unwrap();
}

fn options(root: &Path, data: &Path, config: &str) -> HostOptions {
    HostOptions {
        config: ConfigFile::parse(Path::new("test.toml"), config).unwrap(),
        roots: vec![Root {
            path: root.to_path_buf(),
            origin: RootOrigin::Flag,
        }],
        data: Some(data.to_path_buf()),
        user: Some("ada@example.com".into()),
        tool_sets: true,
        watch: false,
        store: None,
        fleet: None,
    }
}

const AGENT: &str = "[agents.helper]\ngrants = [{ tool_set = \"greetings\" }]\n\
                     [sandbox]\nenabled = false\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_tool_keeps_its_label_from_every_source() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("greetings");
    tool(&root, "say_hello", "Say hello");
    let host = Host::boot(options(&root, &dir.path().join("data"), AGENT))
        .await
        .unwrap();
    let caller = host.default_caller().clone();
    assert_eq!(caller.user(), "ada@example.com");

    let catalog = host.catalog_source(CatalogView::Shared);
    let agent = host.agent_source("helper").await.unwrap();
    for (source, name) in [
        (catalog as std::sync::Arc<dyn ToolSource>, "catalog"),
        (agent, "agent"),
    ] {
        let tools = source.tools(&caller).await;
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["say_hello"], "{name}");
        // Served to an agent, a folder tool once lost its TOOL.md label.
        assert_eq!(tools[0].title, "Say hello", "{name}");
        assert_eq!(tools[0].description, "Says hello.", "{name}");
        assert!(
            source.resolve(&caller, "say_hello").await.is_some(),
            "{name}"
        );
        assert!(source.resolve(&caller, "nope").await.is_none(), "{name}");
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boot_names_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("greetings");
    tool(&root, "say_hello", "Say hello");
    let data = dir.path().join("data");

    // A user name that would name another folder never reaches the catalog or runtime.
    let mut bad_user = options(&root, &data, AGENT);
    bad_user.user = Some("../etc".into());
    let e = Host::boot(bad_user).await.err().unwrap();
    assert!(matches!(e, HostError::Catalog(_)), "{e}");

    let host = Host::boot(options(&root, &data, AGENT)).await.unwrap();
    let e = host.agent_source("nobody").await.err().unwrap();
    assert!(
        matches!(e, HostError::UnknownAgent(ref a) if a == "nobody"),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "no agent `nobody`: toolhost.toml has no [agents.nobody], and no stored agent has that id"
    );
    host.shutdown().await;

    // Without booting the tool sets there is no agent to serve.
    let mut catalog_only = options(&root, &data, AGENT);
    catalog_only.tool_sets = false;
    let host = Host::boot(catalog_only).await.unwrap();
    assert!(matches!(
        host.agent_source("helper").await.err().unwrap(),
        HostError::UnknownAgent(_)
    ));
    host.shutdown().await;
}

#[test]
fn serving_beyond_loopback_needs_tokens_and_tokens_name_the_users() {
    let none = ConfigFile::default();
    let public = "0.0.0.0:7878".parse().unwrap();
    let local = "127.0.0.1:7878".parse().unwrap();
    assert!(matches!(
        check_exposure(&none, public, false, false),
        Err(HostError::Unauthenticated(_))
    ));
    check_exposure(&none, local, true, false).unwrap();
    let hash = toolhost_host::hash_token("s3cret");
    let tokens = ConfigFile::parse(
        Path::new("t.toml"),
        &format!("[[serve.tokens]]\nuser = \"ada@example.com\"\nsha256 = \"{hash}\"\n"),
    )
    .unwrap();
    check_exposure(&tokens, public, false, false).unwrap();
    assert!(matches!(
        check_exposure(&tokens, local, true, false),
        Err(HostError::UserWithTokens)
    ));
    // OAuth issuers authenticate too; on a wildcard address the audience needs the
    // public URL.
    let issuer = "[[serve.oauth.issuers]]\nissuer = \"https://id.example.com\"\n";
    let oauth = ConfigFile::parse(Path::new("t.toml"), issuer).unwrap();
    check_exposure(&oauth, "192.0.2.7:7878".parse().unwrap(), false, false).unwrap();
    assert!(matches!(
        check_exposure(&oauth, public, false, false),
        Err(HostError::NoPublicUrl(_))
    ));
    assert!(matches!(
        check_exposure(&oauth, local, true, false),
        Err(HostError::UserWithTokens)
    ));
    let with_url = format!("[serve]\npublic_url = \"https://tools.example.com\"\n{issuer}");
    let oauth = ConfigFile::parse(Path::new("t.toml"), &with_url).unwrap();
    check_exposure(&oauth, public, false, false).unwrap();
}
