//! The `Host` and `Origin` checks `/mcp` makes (DNS rebinding, cross-site requests),
//! made for the API too.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::Problem;

/// Which `Host` and `Origin` values the API accepts besides loopback ones.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    /// Host names (no port), such as `tools.example.com` or the listen address.
    pub hosts: Vec<String>,
    /// Origins, such as `https://app.example.com`.
    pub origins: Vec<String>,
}

const LOOPBACK: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

pub(crate) async fn check(
    State(allowed): State<Arc<Allowed>>,
    req: Request,
    next: Next,
) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(host_name);
    let host_ok = host.is_some_and(|h| {
        LOOPBACK.contains(&h.as_str()) || allowed.hosts.iter().any(|a| a.eq_ignore_ascii_case(&h))
    });
    if !host_ok {
        return Problem::forbidden("this Host is not one the server answers to").into_response();
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_ok(origin, &allowed.origins) {
            return Problem::new(
                StatusCode::FORBIDDEN,
                "requests from this Origin are refused",
            )
            .into_response();
        }
    }
    next.run(req).await
}

/// `example.com:8080` → `example.com`; `[::1]:8080` → `[::1]`.
fn host_name(value: &str) -> String {
    let value = value.trim();
    let name = if value.starts_with('[') {
        value.split_inclusive(']').next().unwrap_or(value)
    } else {
        value.rsplit_once(':').map_or(value, |(h, _)| h)
    };
    name.to_ascii_lowercase()
}

fn origin_ok(origin: &str, allowed: &[String]) -> bool {
    if allowed.iter().any(|a| a == origin) {
        return true;
    }
    let Some(rest) = origin.strip_prefix("http://") else {
        return false;
    };
    // A loopback origin, on any port; never a name that merely starts like one.
    LOOPBACK.contains(&host_name(rest).as_str()) && !rest.contains('@') && !rest.contains('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        assert_eq!(host_name("127.0.0.1:7878"), "127.0.0.1");
        assert_eq!(host_name("[::1]:7878"), "[::1]");
        assert_eq!(host_name("Tools.Example.com"), "tools.example.com");
        assert!(origin_ok("http://localhost:3000", &[]));
        assert!(origin_ok("http://127.0.0.1:1", &[]));
        for bad in [
            "http://evil.com",
            "null",
            "http://localhost@evil.com",
            "http://localhost.evil.com",
            "https://localhost",
        ] {
            assert!(!origin_ok(bad, &[]), "{bad}");
        }
        assert!(origin_ok(
            "https://app.example.com",
            &["https://app.example.com".to_string()]
        ));
    }
}
