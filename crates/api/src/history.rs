//! `/calls`, the call log, and `/audit`, the admin audit log: newest first, cursor pages.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use toolhost_host::Role;
use toolhost_store::{AuditEvent, CallFilter, CallRow, Outcome};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::params::Params;
use crate::{ApiState, Problem};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OutcomeName {
    /// The tool returned a result.
    Success,
    /// It ended in an error result.
    Error,
    /// Its caller cancelled it or went away.
    Cancelled,
    /// Its deadline ran out.
    Timeout,
    /// It was refused before it ran.
    Denied,
}

fn outcome(o: OutcomeName) -> Outcome {
    match o {
        OutcomeName::Success => Outcome::Success,
        OutcomeName::Error => Outcome::Error,
        OutcomeName::Cancelled => Outcome::Cancelled,
        OutcomeName::Timeout => Outcome::Timeout,
        OutcomeName::Denied => Outcome::Denied,
    }
}

fn outcome_name(o: Outcome) -> OutcomeName {
    match o {
        Outcome::Success => OutcomeName::Success,
        Outcome::Error => OutcomeName::Error,
        Outcome::Cancelled => OutcomeName::Cancelled,
        Outcome::Timeout => OutcomeName::Timeout,
        Outcome::Denied => OutcomeName::Denied,
    }
}

/// One call.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CallOut {
    /// Its id (time-ordered).
    pub(crate) id: String,
    /// Milliseconds since the Unix epoch.
    pub(crate) started_at: i64,
    /// How long it took.
    pub(crate) duration_ms: i64,
    /// Who called.
    pub(crate) user: String,
    /// The token it came with.
    pub(crate) token: Option<String>,
    /// The agent it was called as.
    pub(crate) agent: Option<String>,
    /// `mcp-stdio`, `mcp-http`, `api`, `console`, `cli`.
    pub(crate) transport: String,
    /// The tool.
    pub(crate) tool: String,
    /// The tool set it was granted through (calls as an agent).
    pub(crate) tool_set: Option<String>,
    /// How it ended.
    pub(crate) outcome: OutcomeName,
    /// What went wrong.
    pub(crate) error: Option<String>,
    /// Bytes of the result.
    pub(crate) result_bytes: i64,
    /// The arguments, `sensitive` ones replaced, capped (JSON text).
    pub(crate) arguments: String,
    /// The result (JSON text: `content`, `isError`, `structuredContent`), redacted, cut
    /// to 16 KiB (then only its text, with `truncated_from_bytes`); absent for a call
    /// that had none.
    pub(crate) result: Option<String>,
}

pub(crate) fn call_out(c: CallRow) -> CallOut {
    CallOut {
        id: c.id,
        started_at: c.started_at,
        duration_ms: c.duration_ms,
        user: c.principal,
        token: c.token_id,
        agent: c.agent_id,
        transport: c.transport,
        tool: c.tool,
        tool_set: c.tool_set,
        outcome: outcome_name(c.outcome),
        error: c.error,
        result_bytes: c.result_bytes,
        arguments: c.arguments,
        result: c.result,
    }
}

/// A page of calls.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CallPage {
    /// Newest first (by when they started).
    pub(crate) items: Vec<CallOut>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub(crate) next: Option<String>,
}

/// Which calls.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct CallQuery {
    /// Only this tool.
    #[param(nullable = false)]
    pub(crate) tool: Option<String>,
    /// Only calls as this agent.
    #[param(nullable = false)]
    pub(crate) agent: Option<String>,
    /// Only this user's (an admin's filter; others see only their own).
    #[param(nullable = false)]
    pub(crate) user: Option<String>,
    /// Only calls that ended so.
    #[param(nullable = false)]
    pub(crate) outcome: Option<OutcomeName>,
    /// Started at or after (ms since the epoch).
    #[param(nullable = false)]
    pub(crate) since: Option<i64>,
    /// Started before (ms since the epoch).
    #[param(nullable = false)]
    pub(crate) until: Option<i64>,
    /// The `next` of the previous page.
    #[param(nullable = false)]
    pub(crate) cursor: Option<String>,
    /// Items per page, 1 to 500 (default 50).
    #[param(nullable = false)]
    pub(crate) limit: Option<usize>,
}

/// The call log: every user's for an admin, one's own otherwise.
#[utoipa::path(get, path = "/calls", operation_id = "listCalls", tag = "calls", params(CallQuery),
    responses((status = 200, body = CallPage), (status = 401, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn calls(
    State(state): State<ApiState>,
    who: Principal,
    Params(q): Params<CallQuery>,
) -> Result<Json<CallPage>, Problem> {
    who.reader()?;
    let principal = match who.0.role {
        Role::Admin => q.user,
        _ => Some(who.actor().to_string()),
    };
    let filter = CallFilter {
        tool: q.tool,
        agent: q.agent,
        principal,
        outcome: q.outcome.map(outcome),
        since: q.since,
        until: q.until,
    };
    let page = state
        .store
        .calls(&filter, q.cursor.as_deref(), q.limit.unwrap_or(50))
        .await?;
    Ok(Json(CallPage {
        items: page.items.into_iter().map(call_out).collect(),
        next: page.next,
    }))
}

/// One admin change.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditOut {
    /// Its id (time-ordered).
    pub(crate) id: String,
    /// Milliseconds since the Unix epoch.
    pub(crate) at: i64,
    /// Who made it.
    pub(crate) actor: String,
    /// `agent.create`, `token.revoke`, …
    pub(crate) action: String,
    /// The kind of object changed.
    pub(crate) target_kind: String,
    /// Its id.
    pub(crate) target_id: String,
    /// `success`, or why it failed.
    pub(crate) outcome: String,
    /// The object before (JSON text).
    pub(crate) before: Option<String>,
    /// The object after (JSON text).
    pub(crate) after: Option<String>,
}

fn audit_out(e: AuditEvent) -> AuditOut {
    AuditOut {
        id: e.id,
        at: e.happened_at,
        actor: e.actor,
        action: e.action,
        target_kind: e.target_kind,
        target_id: e.target_id,
        outcome: e.outcome,
        before: e.old_value,
        after: e.new_value,
    }
}

/// A page of the audit log.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditPage {
    /// Newest first.
    pub(crate) items: Vec<AuditOut>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub(crate) next: Option<String>,
}

/// Paging.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct AuditQuery {
    /// The `next` of the previous page.
    #[param(nullable = false)]
    pub(crate) cursor: Option<String>,
    /// Items per page, 1 to 500 (default 50).
    #[param(nullable = false)]
    pub(crate) limit: Option<usize>,
}

/// The admin audit log (admins only).
#[utoipa::path(get, path = "/audit", operation_id = "listAudit", tag = "audit", params(AuditQuery),
    responses((status = 200, body = AuditPage), (status = 403, body = Problem)),
    security(("bearer" = [])))]
pub(crate) async fn audit(
    State(state): State<ApiState>,
    who: Principal,
    Params(q): Params<AuditQuery>,
) -> Result<Json<AuditPage>, Problem> {
    who.admin()?;
    let page = state
        .store
        .audit(q.cursor.as_deref(), q.limit.unwrap_or(50))
        .await?;
    Ok(Json(AuditPage {
        items: page.items.into_iter().map(audit_out).collect(),
        next: page.next,
    }))
}
