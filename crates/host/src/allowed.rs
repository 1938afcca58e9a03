//! Which `Host` and `Origin` values the HTTP surfaces (the API, the console) answer: the
//! loopback names, the listen address and `[serve] allowed_hosts` (DNS rebinding), and
//! loopback, listed or (for the console) its own origins (cross-site requests). One policy,
//! each surface answering a refusal in its own form.

/// The `Host` and `Origin` values accepted besides loopback ones.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    /// Host names (no port), such as `tools.example.com` or the listen address.
    pub hosts: Vec<String>,
    /// Origins, such as `https://app.example.com`.
    pub origins: Vec<String>,
}

const LOOPBACK: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

impl Allowed {
    /// Whether a request with this `Host` header is answered.
    pub fn host_ok(&self, host: &str) -> bool {
        let name = host_name(host);
        LOOPBACK.contains(&name.as_str())
            || self.hosts.iter().any(|a| a.eq_ignore_ascii_case(&name))
    }

    /// Whether a request with this `Origin` is answered: a listed origin, a loopback one on
    /// any port, or, with `own`, the origin of the `Host` asked (over either scheme).
    pub fn origin_ok(&self, origin: &str, host: &str, own: bool) -> bool {
        if self.origins.iter().any(|a| a == origin) {
            return true;
        }
        let (plain, rest) = match origin.strip_prefix("http://") {
            Some(rest) => (true, rest),
            None => match origin.strip_prefix("https://") {
                Some(rest) => (false, rest),
                None => return false,
            },
        };
        // Never a name that merely starts like an allowed one.
        if rest.contains('@') || rest.contains('/') {
            return false;
        }
        if own && !host.trim().is_empty() && rest.eq_ignore_ascii_case(host.trim()) {
            return true;
        }
        plain && LOOPBACK.contains(&host_name(rest).as_str())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        let none = Allowed::default();
        assert_eq!(host_name("127.0.0.1:7878"), "127.0.0.1");
        assert_eq!(host_name("[::1]:7878"), "[::1]");
        assert_eq!(host_name("Tools.Example.com:1"), "tools.example.com");
        assert!(none.host_ok("localhost:7878") && !none.host_ok("evil.com") && !none.host_ok(""));
        let listed = Allowed {
            hosts: vec!["tools.example.com".into()],
            origins: vec!["https://app.example.com".into()],
        };
        assert!(listed.host_ok("Tools.Example.com:443"));
        for own in [false, true] {
            assert!(none.origin_ok("http://localhost:3000", "127.0.0.1:7878", own));
            assert!(none.origin_ok("http://127.0.0.1:1", "x", own));
            assert!(listed.origin_ok("https://app.example.com", "x", own));
            for bad in [
                "http://evil.com",
                "null",
                "http://localhost@evil.com",
                "http://localhost.evil.com",
                "https://localhost",
                "http://tools.example.com.evil.com",
            ] {
                assert!(!none.origin_ok(bad, "tools.example.com", own), "{bad}");
            }
        }
        // Its own origin, for the console only.
        assert!(none.origin_ok("https://tools.example.com", "tools.example.com", true));
        assert!(!none.origin_ok("https://tools.example.com", "tools.example.com", false));
    }
}
