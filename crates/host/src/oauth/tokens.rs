//! Toolhost's own tokens and the issuers' access tokens behind one [`TokenStore`].

use std::sync::Arc;

use crate::Caller;
use crate::oauth::Issuers;
use crate::oauth::verify::looks_like_jwt;
use crate::store::{StoreError, TokenStore};

/// Toolhost's tokens first (the configuration file's, a store's `th_` ones), then JWTs of
/// the configured issuers. A JWT is only ever validated here, never handed on.
pub struct OAuthTokens {
    own: Arc<dyn TokenStore>,
    issuers: Issuers,
    /// The resource of a request that names none (the HTTP API): the main MCP endpoint's
    /// canonical URI, when the public URL is known.
    default_resource: Option<String>,
}

impl OAuthTokens {
    /// `own` tokens, then `issuers`' JWTs; `default_resource` is the audience asked of a
    /// JWT where the caller names no resource.
    pub fn new(
        own: Arc<dyn TokenStore>,
        issuers: Issuers,
        default_resource: Option<String>,
    ) -> OAuthTokens {
        OAuthTokens {
            own,
            issuers,
            default_resource,
        }
    }

    async fn either(
        &self,
        authorization: &str,
        resource: Option<&str>,
    ) -> Result<Option<Caller>, StoreError> {
        let own = match resource {
            Some(r) => self.own.authenticate_at(authorization, r).await?,
            None => self.own.authenticate(authorization).await?,
        };
        if own.is_some() {
            return Ok(own);
        }
        let Some((scheme, token)) = authorization.trim().split_once(' ') else {
            return Ok(None);
        };
        let token = token.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || !looks_like_jwt(token) {
            return Ok(None);
        }
        self.issuers
            .authenticate(token, resource)
            .await
            .map_err(|e| StoreError(Box::new(e)))
    }
}

#[async_trait::async_trait]
impl TokenStore for OAuthTokens {
    fn is_empty(&self) -> bool {
        false
    }

    fn forget_remembered(&self) {
        self.own.forget_remembered();
    }

    async fn authenticate(&self, authorization: &str) -> Result<Option<Caller>, StoreError> {
        self.either(authorization, self.default_resource.as_deref())
            .await
    }

    async fn authenticate_at(
        &self,
        authorization: &str,
        resource: &str,
    ) -> Result<Option<Caller>, StoreError> {
        self.either(authorization, Some(resource)).await
    }
}
