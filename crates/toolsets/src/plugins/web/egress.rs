//! The egress guard: which URLs and addresses the web plugin may reach.
//!
//! Only http and https. Loopback, link-local, multicast, unspecified and reserved addresses
//! are refused, and private ones unless allowed. Host names are resolved here and only the
//! addresses that pass are handed to the connector (no second lookup that could answer
//! differently); every redirect goes through the same checks.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::{Host, Url};

#[derive(Debug, Clone, Copy, Default)]
pub struct Egress {
    pub allow_private: bool,
    /// For tests and local development only.
    pub allow_loopback: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    Public,
    Private,
    Loopback,
    Never(&'static str),
}

impl Egress {
    /// Checks scheme and, when the host is an IP literal, the address.
    pub fn check_url(&self, url: &Url) -> Result<(), String> {
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

    pub fn check_ip(&self, ip: IpAddr) -> Result<(), String> {
        match classify(ip) {
            Class::Public => Ok(()),
            Class::Loopback if self.allow_loopback => Ok(()),
            Class::Private if self.allow_private => Ok(()),
            Class::Loopback => Err(format!("refused: {ip} is a loopback address")),
            Class::Private => Err(format!(
                "refused: {ip} is a private address (allow with [plugins.web] allow_private = true)"
            )),
            Class::Never(what) => Err(format!("refused: {ip} is a {what} address")),
        }
    }

    /// Resolves `host` and keeps the addresses that pass; none passing is an error.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
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

fn classify(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Class {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Class::Loopback
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        // RFC 1918, and carrier-grade NAT (RFC 6598), which is just as internal.
        Class::Private
    } else if ip.is_link_local() {
        Class::Never("link-local")
    } else if a == 0 {
        Class::Never("unspecified")
    } else if ip.is_broadcast() || ip.is_multicast() {
        Class::Never("broadcast or multicast")
    } else if a >= 240
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || ip.is_documentation()
    {
        Class::Never("reserved")
    } else {
        Class::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> Class {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let s = ip.segments();
    if ip.is_loopback() {
        Class::Loopback
    } else if ip.is_unspecified() {
        Class::Never("unspecified")
    } else if s[0] & 0xffc0 == 0xfe80 {
        Class::Never("link-local")
    } else if s[0] & 0xfe00 == 0xfc00 {
        Class::Private
    } else if s[0] & 0xff00 == 0xff00 {
        Class::Never("multicast")
    } else if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        // NAT64: the IPv4 address it reaches decides.
        classify_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ))
    } else if s[0] == 0x2002 {
        // 6to4 embeds an IPv4 address too.
        classify_v4(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ))
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Class::Never("documentation")
    } else {
        Class::Public
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn refuses_what_must_not_be_reached() {
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
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://example.com/",
        ] {
            let url = Url::parse(bad).unwrap();
            let refused = strict.check_url(&url).is_err() || url.host_str() == Some("localhost.");
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
        assert!(
            addrs
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 8080)
        );
    }
}
