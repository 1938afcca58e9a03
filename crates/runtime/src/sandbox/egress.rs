//! Where a networked tool may send packets.
//!
//! A tool that has the network shares the host's network namespace, so the kernel alone
//! would let it reach the host's loopback services and the private network behind the
//! host. The supervisor ([`super::supervise`]) asks [`Egress::check`] about every address
//! a tool connects or sends to, and refuses loopback, private, link-local and other
//! special ranges unless the operator allowed them (`[sandbox] network_private`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use serde::{Deserialize, Serialize};

/// The policy the supervisor enforces, sent to the helper in the spec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Egress {
    /// Special-range networks the operator allowed anyway.
    pub allow: Vec<IpNet>,
    /// Where the sandbox's DNS queries go (its resolv.conf names 127.0.0.1, where the
    /// supervisor answers). The operator's choice or the host's resolvers.
    pub dns: Vec<SocketAddr>,
    /// TCP ports a tool may connect to; empty means any.
    pub tcp_ports: Vec<u16>,
}

impl Egress {
    /// `Ok` when a tool may reach `to`; otherwise why not, for the tool's log.
    pub fn check(&self, to: SocketAddr, stream: bool) -> Result<(), String> {
        let ip = canonical(to.ip());
        if let Some(range) = special_range(ip)
            && !self.allow.iter().any(|net| net.contains(&ip))
        {
            return Err(format!(
                "{to} is a {range} address; `[sandbox] network_private` in toolhost.toml can allow it"
            ));
        }
        if stream && !self.tcp_ports.is_empty() && !self.tcp_ports.contains(&to.port()) {
            return Err(format!(
                "TCP port {} is not in `[sandbox] network_ports`",
                to.port()
            ));
        }
        Ok(())
    }
}

impl Egress {
    /// Whether a connection to `to` stays inside the sandbox: a loopback address means the
    /// sandbox's own loopback, unless the operator opened the host's.
    pub fn is_local(&self, to: SocketAddr) -> bool {
        let ip = canonical(to.ip());
        ip.is_loopback() && !self.allow.iter().any(|net| net.contains(&ip))
    }
}

/// An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) reaches the IPv4 host: judge it as one.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// The ranges that are not the public internet (IANA's special-purpose registries), each
/// with the name a refusal gives it.
const SPECIAL_V4: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "\"this network\""),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private"),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        "shared (carrier-grade NAT)",
    ),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "link-local"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "protocol-assignment"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved"),
];

const SPECIAL_V6: &[(Ipv6Addr, u8, &str)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, "unspecified"),
    (Ipv6Addr::LOCALHOST, 128, "loopback"),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        "private (unique local)",
    ),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "link-local"),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, "site-local"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "multicast"),
];

/// The kind of special range `ip` is in, if any. IPv6 forms that embed an IPv4 address
/// (NAT64, 6to4, IPv4-compatible) are judged by that address too.
fn special_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => SPECIAL_V4.iter().find_map(|&(net, len, name)| {
            Ipv4Net::new(net, len)
                .ok()
                .filter(|n| n.contains(&v4))
                .map(|_| name)
        }),
        IpAddr::V6(v6) => SPECIAL_V6
            .iter()
            .find_map(|&(net, len, name)| {
                Ipv6Net::new(net, len)
                    .ok()
                    .filter(|n| n.contains(&v6))
                    .map(|_| name)
            })
            .or_else(|| embedded_v4(v6).and_then(|v4| special_range(IpAddr::V4(v4)))),
    }
}

fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        // 64:ff9b::/96, NAT64.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail),
        // ::a.b.c.d, the deprecated IPv4-compatible form.
        [0, 0, 0, 0, 0, 0, _, _] => Some(tail),
        // 2002:AABB:CCDD::/48, 6to4.
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn open() -> Egress {
        Egress::default()
    }

    #[test]
    fn refuses_loopback_private_and_link_local_in_every_spelling() {
        for to in [
            "127.0.0.1:80",
            "127.8.9.10:443",
            "10.1.2.3:80",
            "172.16.0.1:80",
            "172.31.255.255:80",
            "192.168.1.1:80",
            "169.254.169.254:80",
            "100.64.0.1:80",
            "0.0.0.0:80",
            "224.0.0.251:5353",
            "255.255.255.255:67",
            "[::1]:80",
            "[::]:80",
            "[::ffff:127.0.0.1]:80",
            "[::ffff:10.0.0.1]:80",
            "[::127.0.0.1]:80",
            "[64:ff9b::7f00:1]:80",
            "[2002:7f00:1::]:80",
            "[fd12:3456::1]:80",
            "[fe80::1]:80",
            "[ff02::1]:80",
        ] {
            let refusal = open().check(addr(to), true).unwrap_err();
            assert!(refusal.contains("network_private"), "{to}: {refusal}");
        }
    }

    #[test]
    fn lets_public_addresses_through() {
        for to in [
            "1.1.1.1:443",
            "93.184.216.34:80",
            "172.32.0.1:80",
            "[2606:4700::1111]:443",
            "[::ffff:8.8.8.8]:53",
            "192.0.2.2:80",
        ] {
            open().check(addr(to), true).unwrap();
        }
    }

    #[test]
    fn the_operator_can_allow_a_private_network() {
        let egress = Egress {
            allow: vec![
                "127.0.0.1/32".parse().unwrap(),
                "10.0.0.0/8".parse().unwrap(),
            ],
            ..Egress::default()
        };
        egress.check(addr("127.0.0.1:8080"), true).unwrap();
        assert!(!egress.is_local(addr("127.0.0.1:8080")));
        assert!(egress.is_local(addr("127.0.0.2:8080")));
        assert!(open().is_local(addr("[::ffff:127.0.0.1]:80")));
        assert!(!open().is_local(addr("10.0.0.1:80")));
        egress.check(addr("[::ffff:10.9.9.9]:80"), true).unwrap();
        assert!(egress.check(addr("127.0.0.2:8080"), true).is_err());
        assert!(egress.check(addr("192.168.0.1:80"), true).is_err());
    }

    #[test]
    fn tcp_ports_bound_streams_but_not_datagrams() {
        let egress = Egress {
            tcp_ports: vec![80, 443],
            ..Egress::default()
        };
        egress.check(addr("1.1.1.1:443"), true).unwrap();
        let refusal = egress.check(addr("1.1.1.1:22"), true).unwrap_err();
        assert!(refusal.contains("network_ports"), "{refusal}");
        egress.check(addr("1.1.1.1:3478"), false).unwrap();
    }
}
