//! The `Host` and `Origin` checks of `/mcp` and the API, for the console: a `Host` that is
//! not loopback, the listen address or an allowed host is refused (DNS rebinding); a
//! request whose `Origin` is not this console's own, a loopback one or an allowed one is
//! refused (cross-site requests: with the SameSite=Strict cookie, what makes signing out
//! and every other form safe from other sites).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Which `Host` and `Origin` values the console accepts besides loopback ones.
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
        .unwrap_or("");
    let name = host_name(host);
    if !(LOOPBACK.contains(&name.as_str())
        || allowed.hosts.iter().any(|a| a.eq_ignore_ascii_case(&name)))
    {
        return (
            StatusCode::FORBIDDEN,
            "this Host is not one the server answers to",
        )
            .into_response();
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_ok(origin, host, &allowed.origins) {
            return (
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

/// This console's own origin (the `Host` asked, over either scheme), a listed one, or a
/// loopback one on any port.
fn origin_ok(origin: &str, host: &str, allowed: &[String]) -> bool {
    if allowed.iter().any(|a| a == origin) {
        return true;
    }
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    let Some(rest) = rest else {
        return false;
    };
    if rest.contains('@') || rest.contains('/') {
        return false;
    }
    if !host.is_empty() && rest.eq_ignore_ascii_case(host.trim()) {
        return true;
    }
    origin.starts_with("http://") && LOOPBACK.contains(&host_name(rest).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let none: &[String] = &[];
        assert!(origin_ok("http://127.0.0.1:7878", "127.0.0.1:7878", none));
        assert!(origin_ok("http://localhost:3000", "127.0.0.1:7878", none));
        assert!(origin_ok(
            "https://tools.example.com",
            "tools.example.com",
            none
        ));
        for bad in [
            "http://evil.com",
            "null",
            "http://localhost@evil.com",
            "http://localhost.evil.com",
            "https://localhost",
            "http://tools.example.com.evil.com",
        ] {
            assert!(!origin_ok(bad, "tools.example.com", none), "{bad}");
        }
        assert!(origin_ok(
            "https://app.example.com",
            "x",
            &["https://app.example.com".to_string()]
        ));
        assert_eq!(host_name("[::1]:7878"), "[::1]");
        assert_eq!(host_name("Tools.Example.com:1"), "tools.example.com");
    }
}
