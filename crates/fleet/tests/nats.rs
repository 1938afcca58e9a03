//! What the fleet relies on from a real `nats-server` (Debian's 2.9, which `scripts/test`
//! installs), started here on loopback with per-role users and stopped by its process id:
//! anonymous connections are refused; a runner may use its own subjects only; a call to a
//! runner nobody serves is answered "no responders" at once (a definite "not delivered",
//! which is what lets a gateway retry a call on another runner before any runner accepted
//! it); and a streamed reply (accepted, progress, result) reaches the caller in order.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;

/// A `nats-server` of this test's, killed (by its pid) when dropped.
struct NatsServer {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nats_server() -> PathBuf {
    ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("nats-server is missing: scripts/test installs Debian's nats-server")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl NatsServer {
    /// Gateways may call any runner and read runners' announcements; runner `runner-1`
    /// may take calls to itself and answer on inboxes only.
    fn start() -> NatsServer {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let config = format!(
            r#"
listen: "127.0.0.1:{port}"
authorization {{
  users = [
    {{ user: "gateway", password: "gateway-secret",
       permissions: {{ publish: ["toolhost.call.>", "toolhost.cancel.>"],
                       subscribe: ["_INBOX.>", "toolhost.runners.>"] }} }},
    {{ user: "runner-1", password: "runner-secret",
       permissions: {{ publish: ["_INBOX.>", "toolhost.runners.runner-1"],
                       subscribe: ["toolhost.call.runner-1", "toolhost.cancel.runner-1.>"] }} }}
  ]
}}
"#
        );
        let conf = dir.path().join("nats.conf");
        std::fs::write(&conf, config).unwrap();
        let child = Command::new(nats_server())
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = NatsServer {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            _dir: dir,
        };
        let until = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < until, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    async fn connect(&self, user: &str, password: &str) -> async_nats::Client {
        async_nats::ConnectOptions::with_user_and_password(user.into(), password.into())
            .connect(&self.url)
            .await
            .unwrap()
    }
}

/// `runner` announces itself on `toolhost.runners.runner-1` until `heard` (a gateway's
/// subscription to the announcements) gets one: then the server has processed everything
/// `runner` sent before (a client's flush only writes its buffer; the server handles each
/// connection's messages in order). This is how a gateway learns a runner is ready.
async fn announce_until_heard(runner: &async_nats::Client, heard: &mut async_nats::Subscriber) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        runner
            .publish("toolhost.runners.runner-1", "alive".into())
            .await
            .unwrap();
        runner.flush().await.unwrap();
        if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(50), heard.next()).await {
            assert_eq!(m.subject.as_str(), "toolhost.runners.runner-1");
            // Drain the announcements already on their way.
            while let Ok(Some(_)) =
                tokio::time::timeout(Duration::from_millis(100), heard.next()).await
            {}
            return;
        }
        assert!(
            Instant::now() < until,
            "the runner's announcements never arrived"
        );
    }
}

#[tokio::test]
async fn the_fleet_can_rely_on_nats_for_auth_no_responders_and_streamed_replies() {
    let server = NatsServer::start();

    // No credentials, or wrong ones: refused.
    let refused = tokio::time::timeout(
        Duration::from_secs(5),
        async_nats::ConnectOptions::new().connect(&server.url),
    )
    .await
    .unwrap();
    assert!(refused.is_err(), "an anonymous connection was accepted");
    let wrong = async_nats::ConnectOptions::with_user_and_password("runner-1".into(), "x".into())
        .connect(&server.url)
        .await;
    assert!(wrong.is_err(), "a wrong password was accepted");

    let gateway = server.connect("gateway", "gateway-secret").await;
    let runner = server.connect("runner-1", "runner-secret").await;

    // Nobody serves runner-2: the gateway learns at once that nothing was delivered.
    let t = Instant::now();
    let err = gateway
        .request("toolhost.call.runner-2", "{}".into())
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        async_nats::RequestErrorKind::NoResponders,
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());

    // runner-1 answers a call with a stream on the caller's inbox: accepted, progress,
    // result, in order.
    let mut announcements = gateway.subscribe("toolhost.runners.>").await.unwrap();
    let mut calls = runner.subscribe("toolhost.call.runner-1").await.unwrap();
    announce_until_heard(&runner, &mut announcements).await;
    let serving = tokio::spawn({
        let runner = runner.clone();
        async move {
            let call = calls.next().await.unwrap();
            let reply = call.reply.unwrap();
            for part in ["accepted", "progress 1", "progress 2", "result"] {
                runner.publish(reply.clone(), part.into()).await.unwrap();
            }
            runner.flush().await.unwrap();
        }
    });
    let inbox = gateway.new_inbox();
    let mut replies = gateway.subscribe(inbox.clone()).await.unwrap();
    gateway
        .publish_with_reply("toolhost.call.runner-1", inbox, "call".into())
        .await
        .unwrap();
    let mut got = Vec::new();
    while got.len() < 4 {
        let m = tokio::time::timeout(Duration::from_secs(5), replies.next())
            .await
            .unwrap()
            .unwrap();
        got.push(String::from_utf8(m.payload.to_vec()).unwrap());
    }
    assert_eq!(got, ["accepted", "progress 1", "progress 2", "result"]);
    serving.await.unwrap();

    // A runner keeps to its own subjects: it cannot announce itself as another runner, nor
    // take another runner's calls. (The server refuses both; the messages go nowhere.)
    let spoofer = server.connect("runner-1", "runner-secret").await;
    spoofer
        .publish("toolhost.runners.runner-9", "spoofed".into())
        .await
        .unwrap();
    let _stolen = spoofer.subscribe("toolhost.call.runner-2").await;
    let _ = spoofer.flush().await;
    // Once the spoofer's own announcement is heard, the server has handled the above.
    announce_until_heard(&spoofer, &mut announcements).await;
    let err = gateway
        .request("toolhost.call.runner-2", "{}".into())
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        async_nats::RequestErrorKind::NoResponders,
        "runner-1 took runner-2's call"
    );
}
