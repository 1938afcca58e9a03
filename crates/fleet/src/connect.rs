//! Connecting a node to the fleet's NATS server.

use std::time::Duration;

use toolhost_host::ClusterConfig;

use crate::FleetError;

/// How long a node keeps trying to reach NATS at start before it gives up.
const FIRST_CONNECT: Duration = Duration::from_secs(30);

/// Checks that `urls` (separated by commas) are NATS server URLs.
fn check_urls(urls: &str) -> Result<(), FleetError> {
    for url in urls.split(',').map(str::trim) {
        let rest = ["nats://", "tls://", "ws://", "wss://"]
            .iter()
            .find_map(|scheme| url.strip_prefix(scheme));
        let host_port = rest
            .map(|r| r.rsplit_once('@').map_or(r, |(_, hp)| hp))
            .filter(|hp| !hp.is_empty() && !hp.contains('/'));
        if host_port.is_none() {
            return Err(FleetError::Config(format!(
                "{url:?} is not a NATS server URL such as nats://nats:4222"
            )));
        }
    }
    Ok(())
}

/// Who connects, and where.
#[derive(Debug, Clone)]
pub struct NatsLogin {
    /// The server URL(s), separated by commas.
    pub url: String,
    /// The node's id: its inbox is `_INBOX.ID.…`, which NATS permissions can confine.
    pub node: String,
    /// The NATS user.
    pub user: String,
    /// Its password.
    pub password: Option<String>,
}

impl NatsLogin {
    /// The login `[cluster]` describes for a node of `role` (`gateway` or `runner`):
    /// its user defaults to `gateway` for gateways and to the node id for runners.
    pub fn from_config(cluster: &ClusterConfig, role: &str) -> Result<NatsLogin, FleetError> {
        let url = cluster.nats.clone().ok_or_else(|| {
            FleetError::Config("[cluster] nats is not set: which NATS server?".into())
        })?;
        check_urls(&url)?;
        let node = cluster.node_id().map_err(FleetError::Config)?;
        let user = cluster.user.clone().unwrap_or_else(|| match role {
            "gateway" => "gateway".to_string(),
            _ => node.clone(),
        });
        let password = cluster.password().map_err(FleetError::Config)?;
        Ok(NatsLogin {
            url,
            node,
            user,
            password,
        })
    }

    /// The connection's inbox prefix: `_INBOX.NODE`, which NATS permissions can confine
    /// the node's replies to.
    pub fn inbox_prefix(&self) -> String {
        format!("_INBOX.{}", self.node)
    }

    /// Connects, retrying for a while if the server is not up yet (a node started before
    /// NATS); later losses of the connection are repaired by the client (subscriptions
    /// are renewed).
    pub async fn connect(&self) -> Result<async_nats::Client, FleetError> {
        self.connect_within(FIRST_CONNECT).await
    }

    /// Connects, retrying for at most `within` (`ZERO`: one try, for a command that
    /// reports and ends).
    pub async fn connect_within(&self, within: Duration) -> Result<async_nats::Client, FleetError> {
        let started = std::time::Instant::now();
        loop {
            let options = match &self.password {
                Some(p) => {
                    async_nats::ConnectOptions::with_user_and_password(self.user.clone(), p.clone())
                }
                None => async_nats::ConnectOptions::new(),
            }
            .name(format!("toolhost {}", self.node))
            .custom_inbox_prefix(self.inbox_prefix())
            .max_reconnects(None)
            .event_callback(|event| async move {
                match event {
                    async_nats::Event::Connected => tracing::info!("NATS: connected"),
                    async_nats::Event::Disconnected => {
                        tracing::warn!("NATS: disconnected; reconnecting")
                    }
                    other => tracing::debug!("NATS: {other}"),
                }
            });
            match options.connect(self.url.as_str()).await {
                Ok(client) => return Ok(client),
                Err(e) => {
                    let auth = matches!(
                        e.kind(),
                        async_nats::ConnectErrorKind::AuthorizationViolation
                            | async_nats::ConnectErrorKind::Authentication
                    );
                    if auth || started.elapsed() >= within {
                        return Err(FleetError::Nats(format!(
                            "cannot connect to NATS at {} as {:?}: {e}",
                            self.url, self.user
                        )));
                    }
                    tracing::warn!("NATS at {} is not reachable yet: {e}", self.url);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nats_server_urls_are_taken() {
        for ok in [
            "nats://127.0.0.1:4222",
            "tls://nats:4222,nats://other:4222",
            "nats://u:p@h:1",
        ] {
            assert!(check_urls(ok).is_ok(), "{ok}");
        }
        for bad in [
            "hash",
            "http://nats:4222",
            "nats://",
            "x:",
            "nats://h/path",
            "",
        ] {
            let err = check_urls(bad).unwrap_err().to_string();
            assert!(err.contains("is not a NATS server URL"), "{bad}: {err}");
        }
    }
}
