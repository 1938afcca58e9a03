//! `serve` as an OAuth 2.1 resource server: it accepts access tokens (JWTs) of the
//! authorization servers `[serve.oauth]` lists, beside its own tokens.
//!
//! - `config.rs`: `[serve] public_url` and `[[serve.oauth.issuers]]`, checked.
//! - `verify.rs`: [`Issuers`], validating a JWT for a resource; `claims.rs`: its claims
//!   as a [`Caller`](crate::Caller).
//! - `jwks.rs`: each issuer's keys, discovered, cached and refreshed; `fetch.rs`: the
//!   bounded HTTP fetches.
//! - `tokens.rs`: [`OAuthTokens`], Toolhost's tokens then JWTs as one token store.
//!
//! What the MCP endpoint says about itself (the protected resource metadata, the
//! `WWW-Authenticate` challenges) is the MCP surface's business.

mod claims;
mod config;
mod fetch;
mod jwks;
mod tokens;
mod verify;

pub(crate) use config::check;
pub use config::{IssuerConfig, OAuthConfig, canonical_base};
pub use tokens::OAuthTokens;
pub use verify::Issuers;

/// Why an issuer's keys could not be had.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client for the OAuth issuers: {0}")]
    Client(String),
    /// A fetch of metadata or keys failed.
    #[error("cannot fetch {url}: {why}")]
    Fetch {
        /// What was fetched (the issuer, for discovery as a whole).
        url: String,
        /// Why it failed.
        why: String,
    },
    /// No key was ever fetched, and the last attempt failed.
    #[error("no signing keys of the issuer yet: {0}")]
    NoKeys(String),
}
