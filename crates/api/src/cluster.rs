//! `/cluster`: the fleet this server is a gateway of: gateways and runners, their load and
//! versions, as each last announced itself.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Principal;
use crate::{ApiState, Problem};

/// A node of the fleet.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct NodeOut {
    /// Its id.
    pub(crate) node: String,
    /// `gateway` or `runner`.
    pub(crate) role: String,
    /// Toolhost's version on it.
    pub(crate) version: String,
    /// When it started (ms since the Unix epoch).
    pub(crate) started_at: u64,
    /// Calls it runs (a runner) or waits for (a gateway).
    pub(crate) running: usize,
    /// Calls at once it takes (a runner; 0 for a gateway).
    pub(crate) slots: usize,
    /// Calls finished since it started.
    pub(crate) finished: u64,
    /// Its live Node.js workers (a runner).
    pub(crate) workers: usize,
    /// The shared catalog's epoch it serves (a gateway).
    pub(crate) epoch: i64,
}

/// The fleet, or that there is none.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ClusterOut {
    /// Whether this server is a gateway of a fleet (else it runs tools itself).
    pub(crate) clustered: bool,
    /// This gateway's id.
    pub(crate) node: Option<String>,
    /// The gateways heard in the last seconds.
    pub(crate) gateways: Vec<NodeOut>,
    /// The runners heard in the last seconds.
    pub(crate) runners: Vec<NodeOut>,
}

fn node(n: toolhost_host::NodeStatus) -> NodeOut {
    NodeOut {
        node: n.node,
        role: n.role,
        version: n.version,
        started_at: n.started_at,
        running: n.running,
        slots: n.slots,
        finished: n.finished,
        workers: n.workers,
        epoch: n.epoch,
    }
}

/// The fleet's gateways and runners.
#[utoipa::path(get, path = "/cluster", operation_id = "getCluster", tag = "operations",
    responses((status = 200, body = ClusterOut), (status = 401, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn status(
    State(state): State<ApiState>,
    who: Principal,
) -> Result<Json<ClusterOut>, Problem> {
    who.reader()?;
    let Some(fleet) = state.host.fleet() else {
        return Ok(Json(ClusterOut {
            clustered: false,
            node: None,
            gateways: Vec::new(),
            runners: Vec::new(),
        }));
    };
    let status = fleet.status();
    Ok(Json(ClusterOut {
        clustered: true,
        node: Some(status.node),
        gateways: status.gateways.into_iter().map(node).collect(),
        runners: status.runners.into_iter().map(node).collect(),
    }))
}
