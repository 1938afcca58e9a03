//! Validating an access token (a JWT) of a configured issuer: the issuer from its `iss`,
//! the key from that issuer's JWKS by `kid`, then signature, `iss` (exact), `aud` (the
//! resource asked, or the issuer's configured audience), `exp` and `nbf`; then its claims
//! become a [`Caller`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use crate::oauth::OAuthError;
use crate::oauth::claims;
use crate::oauth::jwks::KeySet;
use crate::{Caller, IssuerConfig, OAuthConfig};

/// Clock skew tolerated on `exp` and `nbf`.
const LEEWAY: Duration = Duration::from_secs(30);
/// A token longer than this is not read (HTTP servers cap headers near here anyway).
const MAX_TOKEN_BYTES: usize = 16 * 1024;

struct Issuer {
    config: IssuerConfig,
    algorithms: Vec<Algorithm>,
    keys: KeySet,
}

/// The issuers of `[serve.oauth]`, each with its key cache.
pub struct Issuers {
    client: reqwest::Client,
    issuers: Vec<Issuer>,
    /// Where homes are (`DATA_PATH`), for the users tokens name.
    data: Option<PathBuf>,
}

impl Issuers {
    /// The issuers `config` lists; homes under `data`. Fetches nothing yet: keys are
    /// fetched when the first token of an issuer arrives.
    pub fn new(config: &OAuthConfig, data: Option<&Path>) -> Result<Issuers, OAuthError> {
        let issuers = config
            .issuers
            .iter()
            .map(|c| Issuer {
                algorithms: c.algorithm_list(),
                keys: KeySet::new(&c.issuer, c.jwks_uri.as_deref()),
                config: c.clone(),
            })
            .collect();
        Ok(Issuers {
            client: crate::oauth::fetch::client()?,
            issuers,
            data: data.map(Path::to_path_buf),
        })
    }

    /// The caller `token` authenticates at `resource` (the canonical URI of the endpoint
    /// asked; `None`: only issuers with a configured `audience` may answer). `Ok(None)` for
    /// any token that is not a valid one of a configured issuer for this resource; an
    /// error only when the issuer's keys cannot be had.
    pub async fn authenticate(
        &self,
        token: &str,
        resource: Option<&str>,
    ) -> Result<Option<Caller>, OAuthError> {
        let refused = |why: &str| {
            // Never the token itself: it is a credential.
            tracing::debug!("access token refused: {why}");
            Ok(None)
        };
        if token.len() > MAX_TOKEN_BYTES || !looks_like_jwt(token) {
            return refused("not a JWT");
        }
        // `alg: none` and unknown algorithms fail here.
        let header = match jsonwebtoken::decode_header(token) {
            Ok(h) => h,
            Err(e) => return refused(&format!("bad header: {e}")),
        };
        if header.crit.is_some() {
            return refused("it has critical header extensions");
        }
        // The issuer is read before the signature is checked only to pick the keys to
        // check it with; the validation then requires that same `iss`.
        let Some(iss) = unverified_issuer(token) else {
            return refused("no `iss` claim");
        };
        let Some(issuer) = self.issuers.iter().find(|i| i.config.issuer == iss) else {
            return refused(&format!("issuer {iss:?} is not configured"));
        };
        if !issuer.algorithms.contains(&header.alg) {
            return refused(&format!("algorithm {:?} is not accepted", header.alg));
        }
        let Some(audience) = issuer.config.audience.as_deref().or(resource) else {
            return refused("no audience to check it against");
        };
        let Some(key) = issuer
            .keys
            .key(&self.client, header.kid.as_deref(), header.alg)
            .await?
        else {
            return refused(&format!("no key {:?} in the issuer's JWKS", header.kid));
        };
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&issuer.config.issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let claims = match jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation)
        {
            Ok(data) => data.claims,
            Err(e) => return refused(&format!("{:?}", e.kind())),
        };
        match claims::caller(&claims, &issuer.config, self.data.as_deref()) {
            Ok(caller) => Ok(Some(caller)),
            Err(e) => {
                // A good signature with a user Toolhost cannot serve: the operator's
                // mapping is likely wrong, so this one is worth a warning.
                tracing::warn!(issuer = %iss, "access token refused: {e}");
                Ok(None)
            }
        }
    }
}

/// Three dot-separated base64url parts (the last empty for an unsigned token, which is
/// then refused by its `alg`).
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3
        && !parts[0].is_empty()
        && !parts[1].is_empty()
        && parts.iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// The `iss` of a JWT's payload, unverified.
fn unverified_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let claims: Map<String, Value> = serde_json::from_slice(&bytes).ok()?;
    claims.get("iss")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_base64url_parts_look_like_a_jwt() {
        assert!(looks_like_jwt("eyJh.eyJz.c2ln"));
        assert!(looks_like_jwt("eyJh.eyJz."));
        for not in [
            "th_abc_def",
            "a.b",
            "a.b.c.d",
            ".b.c",
            "a..c",
            "a.b+.c",
            "a.b.c=",
        ] {
            assert!(!looks_like_jwt(not), "{not}");
        }
    }

    #[test]
    fn the_issuer_is_read_from_the_payload() {
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let token = format!(
            "{}.{}.sig",
            b64(r#"{"alg":"EdDSA"}"#),
            b64(r#"{"iss":"https://id.example.com"}"#)
        );
        assert_eq!(
            unverified_issuer(&token).as_deref(),
            Some("https://id.example.com")
        );
        let token = format!("{}.{}.sig", b64("{}"), b64(r#"{"iss":7}"#));
        assert_eq!(unverified_issuer(&token), None);
        assert_eq!(unverified_issuer("a.!!.c"), None);
    }
}
