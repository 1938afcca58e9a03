//! Which addresses are the public internet.
//!
//! The ranges are IANA's special-purpose registries (RFC 6890 and its updates), multicast,
//! the deprecated IPv6 site-local range, IPv6 outside the global unicast space (`2000::/3`,
//! which IANA has not allocated), plus the addresses of this host's own interfaces, which
//! reach the host's services whatever range they are in. IPv6 forms that carry an IPv4
//! address (mapped, NAT64 `64:ff9b::/96`, 6to4) are judged by that address; the deprecated
//! IPv4-compatible form (`::a.b.c.d`), local-use NAT64 and Teredo are judged by their range.
//! An ISATAP interface identifier (`…:5efe:a.b.c.d`) is judged by its prefix: the IPv4
//! address it carries is one inside that prefix's site, not one this host reaches.
//!
//! Registry entries marked globally reachable that sit inside a wider range the registry
//! does not call global (the anycast addresses in `192.0.0.0/24` and `2001::/23`, AMT,
//! AS112 and ORCHIDv2 in `2001::/23`) stay refused with that range: anycast is answered by
//! the nearest server, which may be inside the operator's own network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ipnet::{Ipv4Net, Ipv6Net};

/// How a special address may be opened by an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The host itself: loopback, or one of its own interface addresses.
    Host,
    /// Networks behind the host: RFC 1918, unique local, carrier-grade NAT, site-local.
    Private,
    /// Never the public internet and no one's service: link-local, multicast,
    /// documentation, benchmarking, reserved and deprecated ranges.
    Reserved,
}

/// A non-public address: its kind and the name a refusal gives its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Special {
    /// How an operator may open it.
    pub kind: Kind,
    /// The range's name, as a refusal says it (`"link-local"`).
    pub name: &'static str,
}

const fn host(name: &'static str) -> Special {
    Special {
        kind: Kind::Host,
        name,
    }
}
const fn private(name: &'static str) -> Special {
    Special {
        kind: Kind::Private,
        name,
    }
}
const fn reserved(name: &'static str) -> Special {
    Special {
        kind: Kind::Reserved,
        name,
    }
}

const V4: &[(Ipv4Addr, u8, Special)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, reserved("\"this network\"")),
    (Ipv4Addr::new(10, 0, 0, 0), 8, private("private")),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        private("shared (carrier-grade NAT)"),
    ),
    (Ipv4Addr::new(127, 0, 0, 0), 8, host("loopback")),
    (Ipv4Addr::new(169, 254, 0, 0), 16, reserved("link-local")),
    (Ipv4Addr::new(172, 16, 0, 0), 12, private("private")),
    (
        Ipv4Addr::new(192, 0, 0, 0),
        24,
        reserved("protocol-assignment"),
    ),
    (Ipv4Addr::new(192, 0, 2, 0), 24, reserved("documentation")),
    (
        Ipv4Addr::new(192, 88, 99, 0),
        24,
        reserved("deprecated 6to4 relay"),
    ),
    (Ipv4Addr::new(192, 168, 0, 0), 16, private("private")),
    (Ipv4Addr::new(198, 18, 0, 0), 15, reserved("benchmarking")),
    (
        Ipv4Addr::new(198, 51, 100, 0),
        24,
        reserved("documentation"),
    ),
    (Ipv4Addr::new(203, 0, 113, 0), 24, reserved("documentation")),
    (Ipv4Addr::new(224, 0, 0, 0), 4, reserved("multicast")),
    (Ipv4Addr::new(240, 0, 0, 0), 4, reserved("reserved")),
];

const V6: &[(Ipv6Addr, u8, Special)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, reserved("unspecified")),
    (Ipv6Addr::LOCALHOST, 128, host("loopback")),
    // The rest of ::/96 is the deprecated IPv4-compatible form; whatever it embeds, no
    // host should be reached through it.
    (
        Ipv6Addr::UNSPECIFIED,
        96,
        reserved("deprecated IPv4-compatible"),
    ),
    (
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        private("local-use NAT64"),
    ),
    (
        Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        reserved("discard-only"),
    ),
    // RFC 9780: a prefix for routing configurations that need one, never a destination.
    (
        Ipv6Addr::new(0x100, 0, 0, 1, 0, 0, 0, 0),
        64,
        reserved("dummy"),
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        reserved("IETF protocol-assignment"),
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        reserved("documentation"),
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        reserved("documentation"),
    ),
    (
        Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0),
        16,
        reserved("segment-routing"),
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        private("private (unique local)"),
    ),
    (
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        reserved("link-local"),
    ),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        private("site-local"),
    ),
    (
        Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        reserved("multicast"),
    ),
];

/// An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) reaches the IPv4 host: judge it as one.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// Where IANA allocates global unicast IPv6 addresses; the rest of the space is reserved.
const GLOBAL_UNICAST: Ipv6Addr = Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0);

/// The special range `ip` is in, by the address alone (see [`special`] for the host's own
/// addresses too). The most specific range wins.
pub(crate) fn special_range(ip: IpAddr) -> Option<Special> {
    match canonical(ip) {
        IpAddr::V4(v4) => V4
            .iter()
            .filter(|(net, len, _)| Ipv4Net::new(*net, *len).is_ok_and(|n| n.contains(&v4)))
            .max_by_key(|(_, len, _)| *len)
            .map(|(_, _, s)| *s),
        IpAddr::V6(v6) => {
            let listed = V6
                .iter()
                .filter(|(net, len, _)| Ipv6Net::new(*net, *len).is_ok_and(|n| n.contains(&v6)))
                .max_by_key(|(_, len, _)| *len)
                .map(|(_, _, s)| *s);
            if listed.is_some() {
                return listed;
            }
            // A translator's address is the IPv4 host's, public or not, before the test
            // below (NAT64's well-known prefix lies outside 2000::/3).
            if let Some(v4) = embedded_v4(v6) {
                return special_range(IpAddr::V4(v4));
            }
            let global = Ipv6Net::new(GLOBAL_UNICAST, 3).is_ok_and(|n| n.contains(&v6));
            (!global).then_some(reserved("unallocated (outside 2000::/3)"))
        }
    }
}

/// [`Kind::Host`] when `ip` is one of this host's own interface addresses, whatever range
/// it is in (a server bound to the host's public or private address is still the host's);
/// else the special range it is in, if any.
pub fn special(ip: IpAddr) -> Option<Special> {
    let ip = canonical(ip);
    if ip.is_loopback() {
        return special_range(ip);
    }
    if is_own(ip) {
        return Some(host("this host's own"));
    }
    special_range(ip)
}

/// The IPv4 address an IPv6 one reaches through a translator (NAT64, 6to4).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let octets = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        // 64:ff9b::/96, NAT64.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(octets(hi, lo)),
        // 2002:AABB:CCDD::/48, 6to4.
        [0x2002, hi, lo, ..] => Some(octets(hi, lo)),
        _ => None,
    }
}

/// How long a reading of the host's interface addresses is trusted. Addresses change
/// rarely (DHCP, a new interface); a second is a bound on how stale an answer can be.
const OWN_TTL: Duration = Duration::from_secs(1);

static OWN: Mutex<Option<(Instant, Vec<IpAddr>)>> = Mutex::new(None);

/// Whether `ip` is an address of one of this host's interfaces (read at most once a
/// second). When the interfaces cannot be read, no address counts as the host's: the
/// special ranges still apply.
fn is_own(ip: IpAddr) -> bool {
    let mut own = OWN.lock().unwrap_or_else(|e| e.into_inner());
    let fresh = own.as_ref().is_some_and(|(at, _)| at.elapsed() < OWN_TTL);
    if !fresh {
        *own = Some((Instant::now(), interface_addresses()));
    }
    own.as_ref().is_some_and(|(_, list)| list.contains(&ip))
}

fn interface_addresses() -> Vec<IpAddr> {
    let Ok(list) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    let mut out: Vec<IpAddr> = list
        .filter_map(|i| i.address)
        .filter_map(|a| {
            if let Some(v4) = a.as_sockaddr_in() {
                Some(IpAddr::V4(v4.ip()))
            } else {
                a.as_sockaddr_in6().map(|v6| canonical(IpAddr::V6(v6.ip())))
            }
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<Kind> {
        special_range(s.parse().unwrap()).map(|s| s.kind)
    }

    #[test]
    fn every_spelling_of_the_host_is_the_host() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "::1",
            "::ffff:127.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
        ] {
            assert_eq!(kind(ip), Some(Kind::Host), "{ip}");
        }
    }

    #[test]
    fn private_networks_are_private() {
        for ip in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "::ffff:10.0.0.1",
            "fd12:3456::1",
            "fec0::1",
            "64:ff9b:1::a00:1",
        ] {
            assert_eq!(kind(ip), Some(Kind::Private), "{ip}");
        }
    }

    #[test]
    fn reserved_ranges_are_reserved() {
        for ip in [
            "0.0.0.0",
            "169.254.169.254",
            "192.0.0.8",
            "192.0.2.2",
            "198.18.0.1",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.251",
            "255.255.255.255",
            "::",
            "::127.0.0.1",
            "::8.8.8.8",
            "100::1",
            "2001::1",
            "2001:db8::1",
            "3fff::1",
            "fe80::1",
            "ff02::1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert_eq!(kind(ip), Some(Kind::Reserved), "{ip}");
        }
    }

    #[test]
    fn the_public_internet_is_public() {
        for ip in [
            "1.1.1.1",
            "93.184.216.34",
            "172.32.0.1",
            "192.0.3.1",
            "2606:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert_eq!(kind(ip), None, "{ip}");
        }
    }

    #[test]
    fn this_hosts_own_addresses_are_the_host() {
        let own = interface_addresses();
        assert!(
            own.iter().any(IpAddr::is_loopback),
            "the loopback interface is always listed: {own:?}"
        );
        for ip in own {
            let found = special(ip).map(|s| s.kind);
            assert_eq!(found, Some(Kind::Host), "{ip}");
        }
    }
}
