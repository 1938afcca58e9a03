//! `[cluster]`: this node's place in a fleet of gateways and runners (see the
//! `toolhost-fleet` crate). Without `nats`, `toolhost serve` runs alone.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// The environment variable that holds the NATS password unless `[cluster]` names another.
pub const NATS_PASSWORD_VARIABLE: &str = "TOOLHOST_NATS_PASSWORD";

/// `[cluster]`: how this node reaches the fleet's NATS server, and who it is there.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// The NATS server(s): `nats://HOST:PORT`, several separated by commas. Setting it
    /// makes `serve` a gateway: folder tools run on the fleet's runners.
    pub nats: Option<String>,
    /// This node's id in the fleet (default: the host name): subjects, NATS permissions
    /// and `toolhost cluster status` name it. Letters, digits, `-` and `_`.
    pub node: Option<String>,
    /// The NATS user (default: the node id for a runner, `gateway` for a gateway).
    pub user: Option<String>,
    /// The environment variable holding the NATS password (default
    /// `TOOLHOST_NATS_PASSWORD`).
    pub password_env: Option<String>,
    /// A file holding the NATS password, instead of the environment.
    pub password_file: Option<PathBuf>,
    /// A runner's calls at once; beyond, it answers "busy" and the gateway tries the
    /// next runner (default: twice `[runtime] max_workers`).
    pub slots: Option<usize>,
    /// After a runner accepted a call, this long without a word from it means it was
    /// lost: the caller is told the outcome is unknown (default 3 s).
    #[serde(default, with = "toolhost_spec::seconds::opt_secs")]
    pub lost_after: Option<Duration>,
}

impl ClusterConfig {
    /// A node id's rule: 1 to 64 letters, digits, `-` or `_` (it is a NATS subject token).
    pub fn check_node(id: &str) -> Result<(), String> {
        if id.is_empty()
            || id.len() > 64
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(format!(
                "node id {id:?} must be 1 to 64 letters, digits, '-' or '_'"
            ));
        }
        Ok(())
    }

    /// This node's id: `node`, else the host name (cut to the rule's characters).
    pub fn node_id(&self) -> Result<String, String> {
        let id = match &self.node {
            Some(id) => id.clone(),
            None => std::fs::read_to_string("/proc/sys/kernel/hostname")
                .unwrap_or_default()
                .trim()
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(64)
                .collect(),
        };
        ClusterConfig::check_node(&id)?;
        Ok(id)
    }

    /// The NATS password, from `password_file` or the environment; `None` when neither
    /// holds one.
    pub fn password(&self) -> Result<Option<String>, String> {
        if let Some(file) = &self.password_file {
            return std::fs::read_to_string(file)
                .map(|p| Some(p.trim_end_matches(['\n', '\r']).to_string()))
                .map_err(|e| format!("[cluster] password_file {}: {e}", file.display()));
        }
        let var = self
            .password_env
            .as_deref()
            .unwrap_or(NATS_PASSWORD_VARIABLE);
        Ok(std::env::var(var).ok().filter(|p| !p.is_empty()))
    }
}

/// A node of the fleet as it last announced itself (what it announces, on the wire).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeStatus {
    /// Its id.
    pub node: String,
    /// `gateway` or `runner`.
    pub role: String,
    /// Toolhost's version on it.
    pub version: String,
    /// When it started (ms since the Unix epoch).
    pub started_at: u64,
    /// Calls it runs (a runner) or waits for (a gateway).
    pub running: usize,
    /// Calls at once it takes (a runner; 0 for a gateway).
    pub slots: usize,
    /// Calls finished since it started.
    pub finished: u64,
    /// Its live Node.js workers (a runner).
    pub workers: usize,
    /// The shared catalog's epoch it serves (a gateway; 0 without a published catalog).
    pub epoch: i64,
}

/// The fleet as this gateway sees it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FleetStatus {
    /// This gateway's id.
    pub node: String,
    /// Gateways heard within the last seconds (this one included).
    pub gateways: Vec<NodeStatus>,
    /// Runners heard within the last seconds.
    pub runners: Vec<NodeStatus>,
}

/// This host's place in a fleet, when `serve` runs as a gateway.
pub trait Fleet: Send + Sync {
    /// Where folder tools' calls go.
    fn dispatch(&self) -> std::sync::Arc<dyn toolhost_runtime::Dispatch>;
    /// The fleet now.
    fn status(&self) -> FleetStatus;
    /// This gateway's fleet counters and gauges, in Prometheus's text format.
    fn metrics(&self, out: &mut String);
    /// Hands a client's message for 2025-11-25 session `key` (see
    /// [`crate::store::SessionRecords`]) to every gateway: the request it concerns (a
    /// `notifications/cancelled`) may run on another one.
    fn relay_to_session(&self, key: String, message: String);
    /// Messages other gateways relayed: `(session key, message)`.
    fn relayed_to_sessions(&self) -> tokio::sync::broadcast::Receiver<(String, String)>;
    /// Tells every other gateway that tokens or users changed (a token revoked, a role
    /// changed): they forget what they remember of them.
    fn access_changed(&self);
    /// Other gateways' word that tokens or users changed.
    fn access_changes(&self) -> tokio::sync::broadcast::Receiver<()>;
}
