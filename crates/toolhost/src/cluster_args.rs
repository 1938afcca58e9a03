//! The flags that place a node in a fleet (`serve` as a gateway, `runner`), over
//! `[cluster]` in the configuration file.

use anyhow::Result;
use toolhost_fleet::NatsLogin;
use toolhost_host::ClusterConfig;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClusterArgs {
    /// The fleet's NATS server (overrides `[cluster] nats`). With it, `serve` runs as a
    /// gateway: folder tools run on the fleet's runners.
    #[arg(long, env = "TOOLHOST_NATS_URL", value_name = "URL")]
    pub nats: Option<String>,
    /// This node's id in the fleet (overrides `[cluster] node`; default: the host name).
    #[arg(long, env = "TOOLHOST_NODE", value_name = "ID")]
    pub node: Option<String>,
}

impl ClusterArgs {
    /// `[cluster]` with the flags applied.
    pub fn apply(&self, cluster: &ClusterConfig) -> ClusterConfig {
        let mut cluster = cluster.clone();
        if let Some(nats) = &self.nats {
            cluster.nats = Some(nats.clone());
        }
        if let Some(node) = &self.node {
            cluster.node = Some(node.clone());
        }
        cluster
    }

    /// The NATS login of a node of `role`, if the node is in a fleet.
    pub fn login(&self, cluster: &ClusterConfig, role: &str) -> Result<Option<NatsLogin>> {
        let cluster = self.apply(cluster);
        if cluster.nats.is_none() {
            return Ok(None);
        }
        Ok(Some(NatsLogin::from_config(&cluster, role)?))
    }
}
