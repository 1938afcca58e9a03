//! `serve` as an OAuth protected resource: each endpoint's canonical URI, and its
//! protected resource metadata (RFC 9728) at the path-inserted well-known URL
//! (`/.well-known/oauth-protected-resource/mcp`), the main endpoint's also at the root one.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolhost_host::{Scope, ServeConfig};

/// RFC 9728's well-known path.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// What `serve` says about itself when `[[serve.oauth.issuers]]` are configured.
#[derive(Debug, Clone)]
pub struct ProtectedResource {
    /// The canonical base URL clients reach the server at (`https://tools.example.com`, no
    /// trailing slash); an endpoint's canonical URI is this and its path.
    pub public_url: String,
    /// The issuers, as `authorization_servers`.
    pub authorization_servers: Vec<String>,
    /// `resource_name`; an agent's endpoint adds the agent.
    pub name: String,
}

impl ProtectedResource {
    /// From `[serve]`: none without issuers, or before `serve` knows its public URL.
    pub fn from_config(serve: &ServeConfig) -> Option<ProtectedResource> {
        if serve.oauth.issuers.is_empty() {
            return None;
        }
        Some(ProtectedResource {
            public_url: serve.public_url.clone()?,
            authorization_servers: serve
                .oauth
                .issuers
                .iter()
                .map(|i| i.issuer.clone())
                .collect(),
            name: serve
                .oauth
                .resource_name
                .clone()
                .unwrap_or_else(|| "Toolhost".to_string()),
        })
    }

    /// The canonical URI of the endpoint at `path`: the audience its tokens must name.
    pub(crate) fn resource(&self, path: &str) -> String {
        format!("{}{path}", self.public_url)
    }

    /// `public_url` as origin and path prefix (`https://example.com`, `/toolhost`).
    fn split(&self) -> (&str, &str) {
        let after_scheme = self.public_url.find("://").map_or(0, |i| i + 3);
        match self.public_url[after_scheme..].find('/') {
            Some(i) => self.public_url.split_at(after_scheme + i),
            None => (self.public_url.as_str(), ""),
        }
    }

    /// Where the metadata of the endpoint at `path` is served, on this server: the
    /// well-known path inserted before the resource's path (RFC 9728 §3.1).
    pub(crate) fn metadata_path(&self, path: &str) -> String {
        format!("{WELL_KNOWN}{}{path}", self.split().1)
    }

    /// The absolute URL of that metadata, as challenges give it.
    pub(crate) fn metadata_url(&self, path: &str) -> String {
        format!("{}{}", self.split().0, self.metadata_path(path))
    }

    /// The metadata document of the endpoint at `path`.
    pub(crate) fn document(&self, path: &str) -> serde_json::Value {
        let agent = path
            .strip_prefix("/agents/")
            .and_then(|p| p.strip_suffix("/mcp"));
        let name = match agent {
            Some(id) => format!("{} (agent {id})", self.name),
            None => self.name.clone(),
        };
        json!({
            "resource": self.resource(path),
            "authorization_servers": self.authorization_servers,
            "scopes_supported": Scope::ALL.map(Scope::as_str),
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        })
    }

    /// The metadata routes of the endpoints at `paths` (the first is the main one, also
    /// described at the root well-known URL). They need no token: a client reads them to
    /// learn how to get one.
    pub(crate) fn routes(&self, paths: &[String]) -> axum::Router {
        let mut router = axum::Router::new();
        let mut served = std::collections::HashSet::new();
        let main = paths.first().map(|p| (WELL_KNOWN.to_string(), p));
        let each = paths.iter().map(|p| (self.metadata_path(p), p));
        for (at, path) in main.into_iter().chain(each) {
            if !served.insert(at.clone()) {
                continue;
            }
            let body = self.document(path).to_string();
            router = router.route(
                &at,
                axum::routing::get(move || async move { metadata(body) })
                    .options(|| async { preflight() }),
            );
        }
        router
    }
}

/// Browser-based clients read the metadata from another origin.
fn metadata(body: String) -> Response {
    let mut res = (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        body,
    )
        .into_response();
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    res
}

/// The answer to a CORS preflight (the SDKs send `MCP-Protocol-Version` with the GET).
fn preflight() -> Response {
    (
        StatusCode::NO_CONTENT,
        [
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
            (header::ACCESS_CONTROL_ALLOW_METHODS, "GET"),
            (header::ACCESS_CONTROL_ALLOW_HEADERS, "mcp-protocol-version"),
        ],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(public_url: &str) -> ProtectedResource {
        ProtectedResource {
            public_url: public_url.to_string(),
            authorization_servers: vec!["https://id.example.com".into()],
            name: "Toolhost".into(),
        }
    }

    #[test]
    fn urls_insert_the_well_known_path_before_the_resource_path() {
        let r = resource("https://tools.example.com");
        assert_eq!(r.resource("/mcp"), "https://tools.example.com/mcp");
        assert_eq!(
            r.metadata_url("/mcp"),
            "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            r.metadata_path("/agents/helper/mcp"),
            "/.well-known/oauth-protected-resource/agents/helper/mcp"
        );
        // Behind a proxy at a path: the prefix is part of the resource, after the
        // well-known path.
        let r = resource("https://example.com/toolhost");
        assert_eq!(r.resource("/mcp"), "https://example.com/toolhost/mcp");
        assert_eq!(
            r.metadata_url("/mcp"),
            "https://example.com/.well-known/oauth-protected-resource/toolhost/mcp"
        );
        let r = resource("http://[::1]:7878");
        assert_eq!(
            r.metadata_url("/mcp"),
            "http://[::1]:7878/.well-known/oauth-protected-resource/mcp"
        );
    }

    #[test]
    fn the_document_names_the_endpoint_and_the_issuers() {
        let r = resource("https://tools.example.com");
        assert_eq!(
            r.document("/agents/helper/mcp"),
            json!({
                "resource": "https://tools.example.com/agents/helper/mcp",
                "authorization_servers": ["https://id.example.com"],
                "scopes_supported": ["tools:read", "tools:call", "admin"],
                "bearer_methods_supported": ["header"],
                "resource_name": "Toolhost (agent helper)",
            })
        );
        assert_eq!(r.document("/mcp")["resource_name"], "Toolhost");
    }
}
