//! Who is asking, and whether they may: a bearer token the host's token store knows,
//! checked against the role its user holds and the scopes it carries.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use toolhost_host::{Caller, Role, Scope};

use crate::{ApiState, Problem};

/// The authenticated caller of a request.
pub(crate) struct Principal(pub Caller);

impl FromRequestParts<ApiState> for Principal {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Self, Problem> {
        let header = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(Problem::unauthenticated)?;
        match state.host.tokens().authenticate(header).await? {
            Some(caller) => Ok(Principal(caller)),
            None => Err(Problem::unauthenticated()),
        }
    }
}

impl Principal {
    /// `Err(403)` unless the user holds at least `role` and the token carries `scope`.
    pub(crate) fn require(&self, role: Role, scope: Scope) -> Result<(), Problem> {
        if !self.0.may(scope) {
            return Err(Problem::forbidden(format!(
                "this token lacks the scope `{}`",
                scope.as_str()
            )));
        }
        if self.0.role < role {
            return Err(Problem::forbidden(format!(
                "{} `{}` may not do this: it needs the role {}",
                self.0.role.as_str(),
                self.0.user(),
                role.as_str()
            )));
        }
        Ok(())
    }

    /// May read: any role, `tools:read`.
    pub(crate) fn reader(&self) -> Result<(), Problem> {
        self.require(Role::Viewer, Scope::ToolsRead)
    }

    /// May manage agents and MCP servers: operator, `admin` scope.
    pub(crate) fn operator(&self) -> Result<(), Problem> {
        self.require(Role::Operator, Scope::Admin)
    }

    /// May manage users and every user's tokens: admin, `admin` scope.
    pub(crate) fn admin(&self) -> Result<(), Problem> {
        self.require(Role::Admin, Scope::Admin)
    }

    /// Who, for the audit log.
    pub(crate) fn actor(&self) -> &str {
        self.0.user()
    }
}
