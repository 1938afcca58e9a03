//! What a validated access token's claims make of its bearer: the user, their role and
//! the token's scopes.

use std::path::Path;

use serde_json::{Map, Value};

use crate::{Caller, IssuerConfig, Role, Scope, user_space};

/// Why a token with a good signature still names no caller.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum ClaimError {
    /// The user claim is absent or not a string.
    #[error("the token has no string claim `{0}` naming its user")]
    NoUser(String),
    /// The user claim breaks the user-name rule (it would name another folder).
    #[error("the token's user {user:?} breaks the user-name rule: {why}")]
    BadUser {
        /// The claimed user.
        user: String,
        /// The rule it breaks.
        why: String,
    },
}

/// The caller `claims` name, as `issuer` maps them; homes under `data`. A JWT caller has
/// no token id (the call log's token column is for Toolhost's own tokens) and no agent.
pub(crate) fn caller(
    claims: &Map<String, Value>,
    issuer: &IssuerConfig,
    data: Option<&Path>,
) -> Result<Caller, ClaimError> {
    let user = claims
        .get(&issuer.user_claim)
        .and_then(Value::as_str)
        .ok_or_else(|| ClaimError::NoUser(issuer.user_claim.clone()))?;
    let space = user_space(data, Some(user)).map_err(|e| ClaimError::BadUser {
        user: user.to_string(),
        why: e.to_string(),
    })?;
    Ok(Caller {
        space,
        role: role(claims, issuer),
        scopes: scopes(claims),
        agent: None,
        token: None,
    })
}

/// The highest role `role_claim` names (a string or a list of strings), else the
/// issuer's default. Names Toolhost does not know are ignored.
fn role(claims: &Map<String, Value>, issuer: &IssuerConfig) -> Role {
    let named = issuer
        .role_claim
        .as_ref()
        .and_then(|claim| claims.get(claim));
    let best = match named {
        Some(Value::String(name)) => Role::parse(name),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().and_then(Role::parse))
            .max(),
        _ => None,
    };
    best.unwrap_or(issuer.role)
}

/// The Toolhost scopes of `scope` (RFC 9068: space-separated), else of `scp` (a string
/// or, as some identity providers send it, a list). Other scopes are ignored.
fn scopes(claims: &Map<String, Value>) -> Vec<Scope> {
    let words: Vec<&str> = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_ascii_whitespace().collect(),
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    Scope::ALL
        .into_iter()
        .filter(|s| words.contains(&s.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn issuer() -> IssuerConfig {
        IssuerConfig {
            issuer: "https://id.example.com".into(),
            jwks_uri: None,
            audience: None,
            user_claim: "sub".into(),
            role: Role::Viewer,
            role_claim: None,
            algorithms: Vec::new(),
        }
    }

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_user_claim_names_the_user_and_their_home() {
        let data = Path::new("/srv/data");
        let c = caller(
            &claims(json!({"sub": "ada@example.com"})),
            &issuer(),
            Some(data),
        )
        .unwrap();
        assert_eq!(c.user(), "ada@example.com");
        assert_eq!(c.space.home, data.join("ada@example.com"));
        assert_eq!((c.role, c.agent, c.token), (Role::Viewer, None, None));
        assert!(c.scopes.is_empty());

        let mut by_email = issuer();
        by_email.user_claim = "email".into();
        let c = caller(
            &claims(json!({"sub": "x1", "email": "bo@example.com"})),
            &by_email,
            Some(data),
        )
        .unwrap();
        assert_eq!(c.user(), "bo@example.com");
        assert_eq!(
            caller(&claims(json!({"sub": "x1"})), &by_email, Some(data)).unwrap_err(),
            ClaimError::NoUser("email".into())
        );
        assert_eq!(
            caller(&claims(json!({"sub": 42})), &issuer(), Some(data)).unwrap_err(),
            ClaimError::NoUser("sub".into())
        );
    }

    #[test]
    fn users_that_break_the_name_rule_are_refused() {
        for bad in ["tools", "Users", "../etc", "a/b", "", ".hidden"] {
            let e = caller(&claims(json!({ "sub": bad })), &issuer(), None).unwrap_err();
            assert!(matches!(e, ClaimError::BadUser { .. }), "{bad:?}: {e:?}");
        }
    }

    #[test]
    fn scopes_come_from_scope_or_scp_and_unknown_ones_are_dropped() {
        let of = |v: Value| caller(&claims(v), &issuer(), None).unwrap().scopes;
        assert_eq!(
            of(json!({"sub": "a", "scope": "openid tools:call  tools:read"})),
            [Scope::ToolsRead, Scope::ToolsCall]
        );
        assert_eq!(
            of(json!({"sub": "a", "scp": ["admin", "tools:read", "email"]})),
            [Scope::ToolsRead, Scope::Admin]
        );
        assert_eq!(
            of(json!({"sub": "a", "scp": "tools:call"})),
            [Scope::ToolsCall]
        );
        // `scope` wins over `scp`; neither, or another type, is no scope.
        assert_eq!(
            of(json!({"sub": "a", "scope": "tools:read", "scp": "tools:call"})),
            [Scope::ToolsRead]
        );
        assert!(of(json!({"sub": "a", "scope": 7})).is_empty());
        // Prefixes and case are not the scope.
        assert!(of(json!({"sub": "a", "scope": "TOOLS:READ tools:readx"})).is_empty());
    }

    #[test]
    fn the_role_claim_raises_or_sets_the_role() {
        let mut with_claim = issuer();
        with_claim.role_claim = Some("roles".into());
        let of = |v: Value, i: &IssuerConfig| caller(&claims(v), i, None).unwrap().role;
        assert_eq!(of(json!({"sub": "a"}), &with_claim), Role::Viewer);
        assert_eq!(
            of(json!({"sub": "a", "roles": "operator"}), &with_claim),
            Role::Operator
        );
        assert_eq!(
            of(
                json!({"sub": "a", "roles": ["viewer", "admin", "x"]}),
                &with_claim
            ),
            Role::Admin
        );
        assert_eq!(
            of(json!({"sub": "a", "roles": ["root"]}), &with_claim),
            Role::Viewer
        );
        // Without `role_claim`, a `roles` claim means nothing; the issuer's role counts.
        let mut operators = issuer();
        operators.role = Role::Operator;
        assert_eq!(
            of(json!({"sub": "a", "roles": "admin"}), &operators),
            Role::Operator
        );
    }
}
