//! `[serve] public_url` and `[serve.oauth]`: where clients reach `serve`, and the OAuth
//! authorization servers whose access tokens it accepts.

use std::str::FromStr;

use jsonwebtoken::{Algorithm, AlgorithmFamily};
use serde::Deserialize;
use url::{Host, Url};

use crate::Role;

/// `[serve.oauth]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// `[[serve.oauth.issuers]]`: with none, `serve` is no OAuth resource server (no
    /// metadata, no JWTs) and accepts its own tokens only.
    #[serde(default)]
    pub issuers: Vec<IssuerConfig>,
    /// The `resource_name` its protected resource metadata gives (default `Toolhost`).
    pub resource_name: Option<String>,
}

/// One authorization server whose signed access tokens (JWTs) name Toolhost users.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerConfig {
    /// Its issuer identifier, compared with a token's `iss` exactly (a trailing slash
    /// counts).
    pub issuer: String,
    /// Where its signing keys are; default: the `jwks_uri` of its metadata
    /// (`/.well-known/openid-configuration`, else `/.well-known/oauth-authorization-server`).
    pub jwks_uri: Option<String>,
    /// The `aud` its tokens must carry; default: the canonical URI of the endpoint asked
    /// (`PUBLIC_URL/mcp`, `PUBLIC_URL/agents/ID/mcp`).
    pub audience: Option<String>,
    /// The claim naming the user (default `sub`); the user-name rule applies to it.
    #[serde(default = "default_user_claim")]
    pub user_claim: String,
    /// The role its users have unless `role_claim` names another (default `viewer`).
    #[serde(default = "default_role")]
    pub role: Role,
    /// A claim holding a role name (`viewer`, `operator`, `admin`) or a list of names (the
    /// highest one counts).
    pub role_claim: Option<String>,
    /// The signature algorithms accepted (default: every asymmetric one: RS256, RS384,
    /// RS512, PS256, PS384, PS512, ES256, ES384, EdDSA). HMAC ones are refused: their key
    /// would be a secret shared with the issuer, which a JWKS must not publish.
    #[serde(default)]
    pub algorithms: Vec<String>,
}

fn default_user_claim() -> String {
    "sub".to_string()
}

fn default_role() -> Role {
    Role::Viewer
}

impl IssuerConfig {
    /// The algorithms accepted, parsed (the configuration was checked: unknown names are
    /// left out).
    pub(crate) fn algorithm_list(&self) -> Vec<Algorithm> {
        if self.algorithms.is_empty() {
            return [
                AlgorithmFamily::Rsa,
                AlgorithmFamily::Ec,
                AlgorithmFamily::Ed,
            ]
            .iter()
            .flat_map(|f| f.algorithms().iter().copied())
            .collect();
        }
        self.algorithms
            .iter()
            .filter_map(|a| Algorithm::from_str(a).ok())
            .collect()
    }
}

/// Checks `[serve] public_url` and `[serve.oauth]`, and writes `public_url` in its
/// canonical form. The error names the key at fault.
pub(crate) fn check(public_url: &mut Option<String>, oauth: &OAuthConfig) -> Result<(), String> {
    if let Some(url) = public_url {
        *url = canonical_base(url).map_err(|e| format!("[serve] public_url: {e}"))?;
    }
    let mut seen = std::collections::HashSet::new();
    for (i, issuer) in oauth.issuers.iter().enumerate() {
        let at = format!("[[serve.oauth.issuers]] #{}", i + 1);
        server_url(&issuer.issuer).map_err(|e| format!("{at}: issuer: {e}"))?;
        if !seen.insert(issuer.issuer.as_str()) {
            return Err(format!("{at}: issuer {:?} is listed twice", issuer.issuer));
        }
        if let Some(uri) = &issuer.jwks_uri {
            server_url(uri).map_err(|e| format!("{at}: jwks_uri: {e}"))?;
        }
        if issuer
            .audience
            .as_deref()
            .is_some_and(|a| a.trim().is_empty())
        {
            return Err(format!("{at}: audience must not be empty"));
        }
        if issuer.user_claim.is_empty() {
            return Err(format!("{at}: user_claim must not be empty"));
        }
        if issuer.role_claim.as_deref() == Some("") {
            return Err(format!("{at}: role_claim must not be empty"));
        }
        for name in &issuer.algorithms {
            match Algorithm::from_str(name).map(Algorithm::family) {
                Ok(AlgorithmFamily::Hmac) => {
                    return Err(format!(
                        "{at}: algorithms: {name} needs a shared secret; only asymmetric algorithms (RS*, PS*, ES*, EdDSA) are accepted"
                    ));
                }
                Ok(_) => {}
                Err(_) => {
                    return Err(format!(
                        "{at}: algorithms: unknown algorithm {name:?} (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA)"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `text` as a canonical base URL: scheme and host in lower case, the default port left
/// out, no trailing slash, no query, fragment or credentials (RFC 8707's canonical form
/// of a resource, which an endpoint's path then extends).
pub fn canonical_base(text: &str) -> Result<String, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("{text:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{text:?} is not an http or https URL"));
    }
    if url.host().is_none() {
        return Err(format!("{text:?} names no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{text:?} must not have a query or a fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{text:?} must not hold credentials"));
    }
    Ok(format!(
        "{}{}",
        url.origin().ascii_serialization(),
        url.path().trim_end_matches('/')
    ))
}

/// An authorization server's URL: HTTPS (OAuth 2.1 asks it of every endpoint but
/// loopback ones, which tests and local issuers use), no query or fragment.
pub(crate) fn server_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("{text:?} is not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err(format!("{text:?} names no host")),
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => {
            return Err(format!(
                "{text:?} must be an https URL (http only on loopback)"
            ));
        }
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{text:?} must not have a query or a fragment"));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn public_urls_take_their_canonical_form() {
        for (given, canonical) in [
            ("https://Tools.Example.com/", "https://tools.example.com"),
            ("https://tools.example.com:443", "https://tools.example.com"),
            ("http://127.0.0.1:7878", "http://127.0.0.1:7878"),
            (
                "https://example.com/toolhost/",
                "https://example.com/toolhost",
            ),
            ("http://[::1]:80/", "http://[::1]"),
        ] {
            assert_eq!(canonical_base(given).unwrap(), canonical, "{given}");
        }
        for bad in [
            "tools.example.com",
            "ftp://example.com",
            "https://example.com/#top",
            "https://example.com/?a=1",
            "https://ada:pw@example.com",
        ] {
            assert!(canonical_base(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn issuers_are_https_unless_on_loopback_and_never_hmac() {
        let issuer = |issuer: &str, algorithms: &[&str]| OAuthConfig {
            issuers: vec![IssuerConfig {
                issuer: issuer.to_string(),
                jwks_uri: None,
                audience: None,
                user_claim: default_user_claim(),
                role: Role::Viewer,
                role_claim: None,
                algorithms: algorithms.iter().map(|a| a.to_string()).collect(),
            }],
            resource_name: None,
        };
        for ok in [
            "https://id.example.com",
            "http://127.0.0.1:9000",
            "http://localhost/x",
        ] {
            check(&mut None, &issuer(ok, &[])).unwrap();
        }
        let e = check(&mut None, &issuer("http://id.example.com", &[])).unwrap_err();
        assert!(e.contains("#1: issuer") && e.contains("https"), "{e}");
        let e = check(&mut None, &issuer("https://id.example.com", &["HS256"])).unwrap_err();
        assert!(e.contains("shared secret"), "{e}");
        let e = check(&mut None, &issuer("https://id.example.com", &["none"])).unwrap_err();
        assert!(e.contains("unknown algorithm"), "{e}");
        let es = issuer("https://id.example.com", &["ES256"]);
        assert_eq!(es.issuers[0].algorithm_list(), [Algorithm::ES256]);
        let all = issuer("https://id.example.com", &[]).issuers[0].algorithm_list();
        assert_eq!(all.len(), 9);
        assert!(all.iter().all(|a| a.family() != AlgorithmFamily::Hmac));
    }
}
