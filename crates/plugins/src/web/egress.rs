//! The egress guard: which URLs and addresses the web plugin may reach.
//!
//! Only http and https. Addresses are judged by the one network policy
//! ([`toolhost_netpolicy::Reach`]), the same the sandbox's network supervisor applies: the
//! host itself (loopback and its own interface addresses) only when `allow_loopback`,
//! private networks only when `allow_private`, and never link-local, multicast,
//! documentation or other reserved ranges. Host names are resolved here and only the
//! addresses that pass are handed to the connector (no second lookup that could answer
//! differently); every redirect goes through the same checks.

use std::net::{IpAddr, SocketAddr};

use toolhost_netpolicy::{Kind, Reach};
use url::{Host, Url};

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Egress {
    /// Private networks may be reached.
    pub(crate) allow_private: bool,
    /// For tests and local development only.
    pub(crate) allow_loopback: bool,
}

impl Egress {
    /// Checks scheme and, when the host is an IP literal, the address.
    pub(crate) fn check_url(&self, url: &Url) -> Result<(), String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "refused: only http and https URLs can be fetched, not {}:",
                url.scheme()
            ));
        }
        match url.host() {
            None => Err("refused: the URL has no host".into()),
            Some(Host::Ipv4(ip)) => self.check_ip(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => self.check_ip(IpAddr::V6(ip)),
            Some(Host::Domain(_)) => Ok(()),
        }
    }

    pub(crate) fn check_ip(&self, ip: IpAddr) -> Result<(), String> {
        let reach = Reach {
            host: self.allow_loopback,
            private: self.allow_private,
            networks: Vec::new(),
        };
        let Err(refused) = reach.check(ip) else {
            return Ok(());
        };
        let range = refused.range;
        match range.kind {
            Kind::Host => Err(format!("refused: {ip} is a {} address", range.name)),
            Kind::Private => Err(format!(
                "refused: {ip} is a {} address (allow with [plugins.web] allow_private = true)",
                range.name
            )),
            Kind::Reserved => Err(format!("refused: {ip} is a {} address", range.name)),
        }
    }

    /// Resolves `host` and keeps the addresses that pass; none passing is an error.
    pub(crate) async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect();
        let mut refusal = None;
        let allowed: Vec<SocketAddr> = found
            .into_iter()
            .filter(|a| match self.check_ip(a.ip()) {
                Ok(()) => true,
                Err(e) => {
                    refusal.get_or_insert(e);
                    false
                }
            })
            .collect();
        match (allowed.is_empty(), refusal) {
            (false, _) => Ok(allowed),
            (true, Some(e)) => Err(format!("{e} ({host} resolves to it)")),
            (true, None) => Err(format!("cannot resolve {host}: no addresses")),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn refuses_what_must_not_be_reached() {
        let strict = Egress::default();
        for bad in [
            "http://127.0.0.1/",
            "http://localhost.:80/x",
            "http://[::1]/",
            "http://169.254.169.254/latest/meta-data",
            "http://[fe80::1]/",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://100.64.0.1/",
            "http://[fd00::1]/",
            "http://0.0.0.0/",
            "http://[::ffff:127.0.0.1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://192.0.2.2/",
            "http://198.51.100.1/",
            "http://203.0.113.1/",
            "http://[2001:db8::1]/",
            "http://[100::1]/",
            "http://[fec0::1]/",
            "http://[::127.0.0.1]/",
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://example.com/",
        ] {
            let url = Url::parse(bad).unwrap();
            // A name is refused once it resolves: `localhost.` is not an IP literal.
            let refused = match (strict.check_url(&url), url.host()) {
                (Err(_), _) => true,
                (Ok(()), Some(Host::Domain(name))) => strict.resolve(name, 80).await.is_err(),
                (Ok(()), _) => false,
            };
            assert!(refused, "{bad} must be refused");
        }
        for ok in [
            "https://example.com/",
            "http://93.184.215.14/",
            "http://[2606:4700::1111]/",
        ] {
            assert!(strict.check_url(&Url::parse(ok).unwrap()).is_ok(), "{ok}");
        }
        let open = Egress {
            allow_private: true,
            allow_loopback: true,
        };
        assert!(
            open.check_url(&Url::parse("http://10.0.0.1/").unwrap())
                .is_ok()
        );
        assert!(
            open.check_url(&Url::parse("http://127.0.0.1/").unwrap())
                .is_ok()
        );
        // Never reachable, whatever is allowed.
        assert!(
            open.check_url(&Url::parse("http://169.254.169.254/").unwrap())
                .is_err()
        );
    }

    /// F16: the host's own interface addresses are the host, as the sandbox's supervisor
    /// sees them (both ask `toolhost_netpolicy::Reach`).
    #[test]
    fn refuses_this_hosts_own_addresses() {
        let web = Egress::default();
        for ip in own_addresses_from_the_kernel() {
            assert!(web.check_ip(ip).is_err(), "{ip} is this host's");
        }
    }

    /// The host's non-loopback addresses, as the kernel reports the routes to them.
    fn own_addresses_from_the_kernel() -> Vec<IpAddr> {
        let Ok(text) = std::fs::read_to_string("/proc/net/fib_trie") else {
            return Vec::new();
        };
        // fib_trie lists each local address on the line before "/32 host LOCAL".
        let lines: Vec<&str> = text.lines().collect();
        let mut out: Vec<IpAddr> = lines
            .windows(2)
            .filter(|w| w[1].contains("/32 host LOCAL"))
            .filter_map(|w| w[0].split_whitespace().last()?.parse().ok())
            .filter(|ip: &IpAddr| !ip.is_loopback())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    #[tokio::test]
    async fn resolution_keeps_only_checked_addresses() {
        let strict = Egress::default();
        let e = strict.resolve("localhost", 80).await.unwrap_err();
        assert!(e.contains("loopback"), "{e}");
        let open = Egress {
            allow_loopback: true,
            ..Egress::default()
        };
        let addrs = open.resolve("localhost", 8080).await.unwrap();
        // S7: `all` holds for no addresses at all, so the list must hold one first.
        assert!(!addrs.is_empty(), "localhost resolved to nothing");
        assert!(
            addrs
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 8080),
            "{addrs:?}"
        );
    }
}
