//! The web plugin's fetch tool against a real HTTP server on loopback.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolhost_runtime::{Runtime, RuntimeConfig, ToolEnv, ToolResult, UserSpace};
use toolhost_toolsets::{BootOptions, Grant, Registry, ToolsetsConfig, TurnRequest};

/// A small HTTP/1.1 server: one response per connection, chosen by path.
async fn serve() -> SocketAddr {
    serve_robots_from(None).await
}

/// The same server, but with its robots.txt redirected to `robots`' if given.
async fn serve_robots_from(robots: Option<SocketAddr>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut n = 0;
                while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf[n..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => n += k,
                    }
                }
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let long: String = (0..400)
                    .map(|i| format!("<p>Paragraph {i} of the long page.</p>"))
                    .collect();
                let (status, headers, body) = match path.as_str() {
                    "/robots.txt" if let Some(other) = robots => (
                        "301 Moved Permanently",
                        format!("location: http://{other}/robots.txt\r\n"),
                        String::new(),
                    ),
                    "/robots.txt" => (
                        "200 OK",
                        "content-type: text/plain\r\n".to_string(),
                        "User-agent: *\nDisallow: /private\n".to_string(),
                    ),
                    "/page" => (
                        "200 OK",
                        "content-type: text/html; charset=utf-8\r\n".into(),
                        format!(
                            "<html><head><script>tracking()</script></head><body><h1>Title</h1>{long}</body></html>"
                        ),
                    ),
                    "/private/secret" => (
                        "200 OK",
                        "content-type: text/plain\r\n".into(),
                        "secret".into(),
                    ),
                    "/to-page" => ("302 Found", "location: /page\r\n".into(), String::new()),
                    "/to-secret" => (
                        "302 Found",
                        "location: /private/secret\r\n".into(),
                        String::new(),
                    ),
                    "/loop" => ("302 Found", "location: /loop\r\n".into(), String::new()),
                    "/to-metadata" => (
                        "302 Found",
                        "location: http://169.254.169.254/latest/meta-data\r\n".into(),
                        String::new(),
                    ),
                    "/to-private" => (
                        "301 Moved Permanently",
                        "location: http://10.0.0.1/admin\r\n".into(),
                        String::new(),
                    ),
                    "/to-file" => (
                        "302 Found",
                        "location: file:///etc/passwd\r\n".into(),
                        String::new(),
                    ),
                    _ => (
                        "404 Not Found",
                        "content-type: text/plain\r\n".into(),
                        "nothing here".into(),
                    ),
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(response.as_bytes()).await;
            });
        }
    });
    addr
}

struct Web {
    registry: Registry,
    runtime: Runtime,
    _cache: tempfile::TempDir,
}

fn web(settings: Value) -> Web {
    let mut config = ToolsetsConfig::default();
    config.plugins.insert("web".into(), settings);
    config.agents.insert(
        "browser".into(),
        toolhost_toolsets::AgentConfig {
            grants: vec![Grant::tool_set("web")],
            ..Default::default()
        },
    );
    let registry = Registry::boot(
        toolhost_plugins::builtin(),
        BootOptions {
            enabled: Some("web".into()),
            config,
            ..BootOptions::default()
        },
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(
        RuntimeConfig {
            cache_dir: Some(cache.path().to_path_buf()),
            ..RuntimeConfig::default()
        },
        ToolEnv::default(),
    )
    .unwrap();
    Web {
        registry,
        runtime,
        _cache: cache,
    }
}

impl Web {
    async fn fetch(&self, args: Value) -> ToolResult {
        let turn = self
            .registry
            .resolve("browser", &TurnRequest::default())
            .await
            .unwrap();
        let tool = turn.tool("web_fetch").expect("web_fetch is granted");
        let user = UserSpace {
            user: "t".into(),
            home: self._cache.path().join("home"),
        };
        tool.call(&self.runtime, args, user).result().await
    }
}

#[tokio::test]
async fn fetches_html_as_markdown_in_slices() {
    let addr = serve().await;
    let w = web(json!({"allow_loopback": true}));
    let r = w
        .fetch(json!({"url": format!("http://{addr}/to-page"), "max_length": 500}))
        .await;
    assert!(!r.is_error, "{r:?}");
    let text = r.joined_text();
    assert!(text.starts_with("# Title"), "{text}");
    assert!(!text.contains("tracking"), "{text}");
    let meta = r.structured_content.clone().unwrap();
    assert_eq!(meta["final_url"], format!("http://{addr}/page"));
    let next = meta["next_start_index"].as_u64().unwrap();
    assert_eq!(next, 500);
    assert!(text.contains("start_index=500"), "{text}");
    let r = w
        .fetch(
            json!({"url": format!("http://{addr}/page"), "start_index": next, "max_length": 100}),
        )
        .await;
    assert_eq!(r.structured_content.unwrap()["start_index"], 500);
}

#[tokio::test]
async fn redirects_to_refused_addresses_are_refused() {
    let addr = serve().await;
    let w = web(json!({"allow_loopback": true}));
    for (path, why) in [
        ("/to-metadata", "169.254.169.254 is a link-local address"),
        ("/to-private", "10.0.0.1 is a private address"),
        ("/to-file", "only http and https"),
    ] {
        let r = w
            .fetch(json!({"url": format!("http://{addr}{path}")}))
            .await;
        assert!(r.is_error, "{path}: {r:?}");
        assert!(r.joined_text().contains(why), "{path}: {}", r.joined_text());
    }
}

#[tokio::test]
async fn loopback_is_refused_unless_allowed_and_robots_txt_is_honoured() {
    let addr = serve().await;
    let strict = web(Value::Null);
    let r = strict
        .fetch(json!({"url": format!("http://{addr}/page")}))
        .await;
    assert!(r.is_error && r.joined_text().contains("loopback"), "{r:?}");
    let r = strict.fetch(json!({"url": "http://localhost:1/"})).await;
    assert!(r.is_error && r.joined_text().contains("loopback"), "{r:?}");

    let w = web(json!({"allow_loopback": true}));
    let r = w
        .fetch(json!({"url": format!("http://{addr}/private/secret")}))
        .await;
    assert!(
        r.is_error && r.joined_text().contains("robots.txt"),
        "{r:?}"
    );
    let r = w
        .fetch(json!({"url": format!("http://{addr}/missing")}))
        .await;
    assert!(r.is_error && r.joined_text().contains("404"), "{r:?}");

    let w = web(json!({"allow_loopback": true, "respect_robots": false}));
    let r = w
        .fetch(json!({"url": format!("http://{addr}/private/secret")}))
        .await;
    assert_eq!(r.joined_text(), "secret");
}

#[tokio::test]
async fn every_redirect_hop_is_checked_against_robots_txt() {
    let addr = serve().await;
    let w = web(json!({"allow_loopback": true}));
    let r = w
        .fetch(json!({"url": format!("http://{addr}/to-secret")}))
        .await;
    assert!(
        r.is_error
            && r.joined_text().contains("robots.txt")
            && r.joined_text().contains("/private/secret"),
        "{r:?}"
    );
    let r = w.fetch(json!({"url": format!("http://{addr}/loop")})).await;
    assert!(
        r.is_error && r.joined_text().contains("more than 5 times"),
        "{r:?}"
    );

    // A robots.txt behind a redirect is followed there (RFC 9309), not taken as missing.
    let other = serve_robots_from(Some(addr)).await;
    let r = w
        .fetch(json!({"url": format!("http://{other}/page"), "max_length": 100}))
        .await;
    assert!(!r.is_error, "{r:?}");
    let r = w
        .fetch(json!({"url": format!("http://{other}/private/secret")}))
        .await;
    assert!(
        r.is_error && r.joined_text().contains("robots.txt"),
        "{r:?}"
    );
}

#[test]
fn bad_settings_fail_boot_naming_the_plugin() {
    let mut config = ToolsetsConfig::default();
    config
        .plugins
        .insert("web".into(), json!({"allow_everything": true}));
    let e = Registry::boot(
        toolhost_plugins::builtin(),
        BootOptions {
            enabled: Some("web".into()),
            config,
            ..BootOptions::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.starts_with("plugin `web` failed to load: [plugins.web]"),
        "{e}"
    );
}
