//! Who is calling.

use toolhost_runtime::UserSpace;

use crate::{Role, Scope};

/// The user a request was authenticated as (or the surface's one default user), the home
/// their tools run in, and what their credentials allow. Built only from a name that
/// passed the user-name rule ([`crate::user_space`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller {
    /// The user and their home.
    pub space: UserSpace,
    /// The user's role.
    pub role: Role,
    /// What the credential allows.
    pub scopes: Vec<Scope>,
    /// The agent the credential is bound to: then the caller is that agent, and a surface
    /// serves it that agent's tools only.
    pub agent: Option<String>,
    /// The stored token it came with, for the call log.
    pub token: Option<String>,
}

impl Caller {
    /// The operator's own caller (stdio, the configuration file's tokens): every scope,
    /// the admin role, bound to no agent.
    pub fn new(space: UserSpace) -> Caller {
        Caller {
            space,
            role: Role::Admin,
            scopes: Scope::ALL.to_vec(),
            agent: None,
            token: None,
        }
    }

    /// The user's name (an email, in the seed's layout).
    pub fn user(&self) -> &str {
        &self.space.user
    }

    /// Whether the credential allows `scope`.
    pub fn may(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}
