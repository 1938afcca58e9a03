//! Fetching an authorization server's JSON documents (metadata, JWKS): bounded in time
//! and size, no redirects, and how long the server says the answer stays good.

use std::time::Duration;

use serde_json::Value;

use crate::oauth::OAuthError;

/// One fetch, connection included. Authentication waits for it, so it is short.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The HTTP client of every fetch. Redirects are not followed: the configured and
/// discovered URLs were checked (HTTPS), a redirect's target would not be.
pub(crate) fn client() -> Result<reqwest::Client, OAuthError> {
    // reqwest is built without a bundled crypto provider: use ring's, as the rest of
    // Toolhost does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(FETCH_TIMEOUT)
        .connect_timeout(FETCH_TIMEOUT)
        .build()
        .map_err(|e| OAuthError::Client(e.to_string()))
}

/// A JSON document and how long its server says it may be kept (`Cache-Control`).
pub(crate) struct Fetched {
    pub(crate) json: Value,
    pub(crate) max_age: Option<Duration>,
}

/// GETs `url` as JSON, refusing a body over `max_bytes`.
pub(crate) async fn get_json(
    client: &reqwest::Client,
    url: &str,
    max_bytes: usize,
) -> Result<Fetched, OAuthError> {
    let failed = |why: String| OAuthError::Fetch {
        url: url.to_string(),
        why,
    };
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| failed(describe(&e)))?;
    if !response.status().is_success() {
        return Err(failed(format!("HTTP {}", response.status())));
    }
    let max_age = response
        .headers()
        .get(reqwest::header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .and_then(max_age);
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failed(describe(&e)))? {
        if body.len() + chunk.len() > max_bytes {
            return Err(failed(format!(
                "the answer is larger than {max_bytes} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let json = serde_json::from_slice(&body).map_err(|e| failed(format!("not JSON: {e}")))?;
    Ok(Fetched { json, max_age })
}

/// `max-age` of a `Cache-Control` value; `no-store` and `no-cache` are an age of zero.
fn max_age(value: &str) -> Option<Duration> {
    let mut age = None;
    for directive in value.split(',').map(str::trim) {
        let (name, arg) = directive.split_once('=').unwrap_or((directive, ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "no-store" | "no-cache" => return Some(Duration::ZERO),
            "max-age" => {
                age = arg
                    .trim()
                    .trim_matches('"')
                    .parse::<u64>()
                    .ok()
                    .map(Duration::from_secs);
            }
            _ => {}
        }
    }
    age
}

/// The whole error chain: reqwest keeps the useful part (refused, timed out) in sources.
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_control_gives_the_age() {
        let secs = |s: u64| Some(Duration::from_secs(s));
        assert_eq!(max_age("public, max-age=3600"), secs(3600));
        assert_eq!(max_age("Max-Age=\"60\", must-revalidate"), secs(60));
        assert_eq!(max_age("max-age=60, no-cache"), secs(0));
        assert_eq!(max_age("no-store"), secs(0));
        assert_eq!(max_age("public"), None);
        assert_eq!(max_age("max-age=soon"), None);
    }
}
