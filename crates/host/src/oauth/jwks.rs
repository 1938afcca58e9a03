//! One issuer's signing keys: found through its metadata unless configured, cached by
//! `kid` for as long as its `Cache-Control` says (within bounds), fetched again when a
//! token names a key not in the cache (at most once per [`MIN_REFETCH`]), and kept when a
//! refresh fails (an identity provider that is down must not log everyone out).

use std::str::FromStr;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde_json::Value;

use crate::oauth::OAuthError;
use crate::oauth::config::server_url;
use crate::oauth::fetch::get_json;

/// The least time between two fetches of one issuer's keys: tokens naming unknown keys
/// (forged ones, say) cannot make Toolhost hammer the identity provider.
pub(crate) const MIN_REFETCH: Duration = Duration::from_secs(5);
/// How long keys are kept when the JWKS response says nothing.
const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// Bounds on what `Cache-Control` may ask.
const MIN_TTL: Duration = Duration::from_secs(30);
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
/// A whole refresh (discovery included) takes at most this long.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest JWKS and metadata documents read.
const MAX_JWKS_BYTES: usize = 256 * 1024;
const MAX_METADATA_BYTES: usize = 64 * 1024;
/// The most keys kept of one JWKS.
const MAX_KEYS: usize = 64;

/// A verification key of the JWKS.
pub(crate) struct Key {
    kid: Option<String>,
    /// The JWK's `alg`, when it names one: then no other algorithm may use the key.
    alg: Option<Algorithm>,
    pub(crate) key: DecodingKey,
}

impl Key {
    fn fits(&self, alg: Algorithm) -> bool {
        self.key.family() == alg.family() && self.alg.is_none_or(|a| a == alg)
    }
}

#[derive(Default)]
struct State {
    /// Found through the metadata, once.
    discovered_uri: Option<String>,
    keys: Vec<Arc<Key>>,
    fresh_until: Option<Instant>,
    /// When the last fetch ended, and how it failed if it did.
    last_attempt: Option<Instant>,
    last_error: Option<String>,
}

impl State {
    /// The key for a token with `kid` signed with `alg`. A token without `kid` may use the
    /// JWKS's only key that fits.
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<Arc<Key>> {
        let mut fitting = self.keys.iter().filter(|k| k.fits(alg));
        match kid {
            Some(kid) => fitting.find(|k| k.kid.as_deref() == Some(kid)).cloned(),
            None => match (fitting.next(), fitting.next()) {
                (Some(only), None) => Some(Arc::clone(only)),
                _ => None,
            },
        }
    }

    /// What a lookup answers from this state: the key; none (the token is refused); or,
    /// when no key was ever had and the last fetch failed, that error (the token may well
    /// be good: a 503, not a 401).
    fn answer(&self, kid: Option<&str>, alg: Algorithm) -> Result<Option<Arc<Key>>, OAuthError> {
        if let Some(key) = self.find(kid, alg) {
            return Ok(Some(key));
        }
        match &self.last_error {
            Some(why) if self.keys.is_empty() => Err(OAuthError::NoKeys(why.clone())),
            _ => Ok(None),
        }
    }
}

/// One issuer's keys.
pub(crate) struct KeySet {
    issuer: String,
    configured_uri: Option<String>,
    state: RwLock<State>,
    /// One fetch at a time; requests that wait for it then use what it found.
    fetching: tokio::sync::Mutex<()>,
}

impl KeySet {
    pub(crate) fn new(issuer: &str, jwks_uri: Option<&str>) -> KeySet {
        KeySet {
            issuer: issuer.to_string(),
            configured_uri: jwks_uri.map(str::to_string),
            state: RwLock::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        // A panic while holding the lock leaves the state as consistent as before it.
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The key a token with `kid` signed with `alg` must verify with, fetching the JWKS
    /// when the cache is stale or lacks that key (and the last fetch is not too recent).
    pub(crate) async fn key(
        &self,
        client: &reqwest::Client,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Option<Arc<Key>>, OAuthError> {
        let asked = Instant::now();
        {
            let state = self.read();
            let fresh = state.fresh_until.is_some_and(|t| asked < t);
            if let (true, Some(key)) = (fresh, state.find(kid, alg)) {
                return Ok(Some(key));
            }
        }
        let _turn = self.fetching.lock().await;
        {
            let state = self.read();
            // Fetched while this request waited, or too recently to fetch again.
            if state
                .last_attempt
                .is_some_and(|t| t >= asked || t.elapsed() < MIN_REFETCH)
            {
                return state.answer(kid, alg);
            }
        }
        let fetched = match tokio::time::timeout(REFRESH_TIMEOUT, self.fetch(client)).await {
            Ok(result) => result,
            Err(_) => Err(OAuthError::Fetch {
                url: self.issuer.clone(),
                why: format!("no keys within {} s", REFRESH_TIMEOUT.as_secs()),
            }),
        };
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        state.last_attempt = Some(Instant::now());
        match fetched {
            Ok((uri, keys, ttl)) => {
                tracing::debug!(issuer = %self.issuer, keys = keys.len(), "fetched signing keys");
                state.discovered_uri = Some(uri);
                state.keys = keys;
                state.fresh_until = Some(Instant::now() + ttl);
                state.last_error = None;
            }
            Err(e) => {
                tracing::warn!(issuer = %self.issuer, "cannot refresh the signing keys: {e}");
                state.last_error = Some(e.to_string());
            }
        }
        state.answer(kid, alg)
    }

    /// The JWKS's URL, its usable keys, and how long to keep them.
    async fn fetch(
        &self,
        client: &reqwest::Client,
    ) -> Result<(String, Vec<Arc<Key>>, Duration), OAuthError> {
        let known = self
            .configured_uri
            .clone()
            .or_else(|| self.read().discovered_uri.clone());
        let uri = match known {
            Some(uri) => uri,
            None => self.discover(client).await?,
        };
        let fetched = get_json(client, &uri, MAX_JWKS_BYTES).await?;
        let keys = parse_jwks(&fetched.json);
        if keys.is_empty() {
            return Err(OAuthError::Fetch {
                url: uri,
                why: "the JWKS holds no usable signing key".into(),
            });
        }
        let ttl = fetched
            .max_age
            .map_or(DEFAULT_TTL, |age| age.clamp(MIN_TTL, MAX_TTL));
        Ok((uri, keys, ttl))
    }

    /// `jwks_uri` from the issuer's metadata: OpenID Connect discovery, else RFC 8414. The
    /// metadata must name this issuer (RFC 8414 §3.3), and its `jwks_uri` must be HTTPS.
    async fn discover(&self, client: &reqwest::Client) -> Result<String, OAuthError> {
        let mut last = None;
        for url in metadata_urls(&self.issuer) {
            let why = match get_json(client, &url, MAX_METADATA_BYTES).await {
                Err(e) => e.to_string(),
                Ok(doc) if doc.json["issuer"].as_str() != Some(self.issuer.as_str()) => {
                    format!("{url} describes another issuer: {}", doc.json["issuer"])
                }
                Ok(doc) => match doc.json["jwks_uri"].as_str().map(server_url) {
                    Some(Ok(uri)) => return Ok(uri.to_string()),
                    Some(Err(e)) => format!("{url}: jwks_uri: {e}"),
                    None => format!("{url} has no jwks_uri"),
                },
            };
            last = Some(why);
        }
        Err(OAuthError::Fetch {
            url: self.issuer.clone(),
            why: format!(
                "no metadata with a jwks_uri ({})",
                last.unwrap_or_else(|| "not a URL".into())
            ),
        })
    }
}

/// Where an issuer's metadata may be, in the order the MCP specification has clients try
/// them: for an issuer with a path, RFC 8414's and OpenID Connect's path-inserted forms,
/// then OpenID Connect's appended one.
fn metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(url) = url::Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    if path.is_empty() {
        return vec![
            format!("{origin}/.well-known/openid-configuration"),
            format!("{origin}/.well-known/oauth-authorization-server"),
        ];
    }
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ]
}

/// The signature keys of a JWKS. Keys Toolhost cannot use (encryption keys, HMAC
/// secrets, unknown types or algorithms) are skipped, not fatal: a JWKS often holds some.
fn parse_jwks(doc: &Value) -> Vec<Arc<Key>> {
    let Some(keys) = doc["keys"].as_array() else {
        return Vec::new();
    };
    keys.iter()
        .filter(|k| k["use"].as_str().is_none_or(|u| u == "sig"))
        .filter_map(|k| {
            let alg = match k["alg"].as_str() {
                Some(name) => Some(Algorithm::from_str(name).ok()?),
                None => None,
            };
            let jwk: Jwk = serde_json::from_value(k.clone()).ok()?;
            let key = DecodingKey::from_jwk(&jwk).ok()?;
            (key.family() != AlgorithmFamily::Hmac).then(|| {
                Arc::new(Key {
                    kid: jwk.common.key_id,
                    alg,
                    key,
                })
            })
        })
        .take(MAX_KEYS)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_is_looked_for_where_the_mcp_spec_says() {
        assert_eq!(
            metadata_urls("https://id.example.com/"),
            [
                "https://id.example.com/.well-known/openid-configuration",
                "https://id.example.com/.well-known/oauth-authorization-server",
            ]
        );
        assert_eq!(
            metadata_urls("https://id.example.com/realms/t1"),
            [
                "https://id.example.com/.well-known/oauth-authorization-server/realms/t1",
                "https://id.example.com/.well-known/openid-configuration/realms/t1",
                "https://id.example.com/realms/t1/.well-known/openid-configuration",
            ]
        );
    }

    // RFC 8037's example Ed25519 key and a P-256 key of RFC 7517.
    const ED: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
    const EC_X: &str = "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4";
    const EC_Y: &str = "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM";

    #[test]
    fn only_signature_keys_are_kept_and_found_by_kid_and_algorithm() {
        let doc = json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": ED, "kid": "ed", "alg": "EdDSA"},
            {"kty": "EC", "crv": "P-256", "x": EC_X, "y": EC_Y, "kid": "ec", "use": "sig"},
            {"kty": "EC", "crv": "P-256", "x": EC_X, "y": EC_Y, "kid": "enc", "use": "enc"},
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "oaep", "alg": "RSA-OAEP"},
            {"kty": "XYZ", "kid": "odd"},
        ]});
        let keys = parse_jwks(&doc);
        let kids: Vec<_> = keys.iter().map(|k| k.kid.clone().unwrap()).collect();
        assert_eq!(kids, ["ed", "ec"]);
        let state = State {
            keys,
            ..State::default()
        };
        assert!(state.find(Some("ed"), Algorithm::EdDSA).is_some());
        // A key is never used with another algorithm than its own.
        assert!(state.find(Some("ed"), Algorithm::ES256).is_none());
        assert!(state.find(Some("ec"), Algorithm::ES256).is_some());
        assert!(state.find(Some("ec"), Algorithm::RS256).is_none());
        assert!(state.find(Some("hmac"), Algorithm::HS256).is_none());
        // Without kid: the one key that fits, if there is exactly one.
        assert!(state.find(None, Algorithm::ES256).is_some());
        assert!(state.find(None, Algorithm::PS256).is_none());
        assert!(parse_jwks(&json!({"keys": "no"})).is_empty());
    }

    #[test]
    fn a_failed_fetch_is_an_error_only_without_keys() {
        let mut state = State {
            last_error: Some("refused".into()),
            ..State::default()
        };
        assert!(matches!(
            state.answer(Some("k"), Algorithm::EdDSA),
            Err(OAuthError::NoKeys(_))
        ));
        state.keys = parse_jwks(&json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": ED, "kid": "ed"},
        ]}));
        assert!(
            state
                .answer(Some("other"), Algorithm::EdDSA)
                .unwrap()
                .is_none()
        );
        assert!(
            state
                .answer(Some("ed"), Algorithm::EdDSA)
                .unwrap()
                .is_some()
        );
    }
}
