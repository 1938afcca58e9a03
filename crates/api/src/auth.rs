//! Who is asking, and whether they may: a bearer token the host's token store knows,
//! checked against the role its user holds and the scopes it carries.
//!
//! The web console's pages call the API from the browser with their session cookie
//! instead (no token is ever put into a page): the session's token is authenticated as if
//! it had been sent. The cookie is SameSite=Strict, and a request that changes anything
//! must also carry an `Origin` (which the guard has checked), so no other site can use it.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use toolhost_host::{Caller, Role, Scope};
use toolhost_store::session_cookie;

use crate::{ApiState, Problem};

/// The authenticated caller of a request, and how it came.
pub(crate) struct Principal(pub Caller, pub(crate) Via);

/// How a request was authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// A bearer token.
    Token,
    /// The web console's session cookie (its pages call the API from the browser).
    Console,
}

impl Via {
    /// The surface a call made this way is logged under: the console's playground runs
    /// through the API, and its history should say that they came from the console.
    pub(crate) fn surface(self) -> &'static str {
        match self {
            Via::Token => "api",
            Via::Console => "console",
        }
    }
}

impl FromRequestParts<ApiState> for Principal {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Self, Problem> {
        let (bearer, via) = match parts.headers.get(header::AUTHORIZATION) {
            Some(v) => (v.to_str().ok().map(str::to_string), Via::Token),
            None => (session_token(parts, state).await?, Via::Console),
        };
        let bearer = bearer.ok_or_else(Problem::unauthenticated)?;
        match state.host.tokens().authenticate(&bearer).await? {
            Some(caller) => Ok(Principal(caller, via)),
            None => Err(Problem::unauthenticated()),
        }
    }
}

/// The token of the console session whose cookie the request carries, as a bearer.
async fn session_token(parts: &Parts, state: &ApiState) -> Result<Option<String>, Problem> {
    let cookies = parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok());
    let Some(secret) = session_cookie(cookies) else {
        return Ok(None);
    };
    if !parts.method.is_safe() && !parts.headers.contains_key(header::ORIGIN) {
        return Err(Problem::forbidden(
            "a change made with the console's session cookie must carry an Origin header",
        ));
    }
    Ok(state
        .store
        .session(secret)
        .await?
        .map(|s| format!("Bearer {}", s.token)))
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
