//! The classifier against IANA's IPv4 and IPv6 Special-Purpose Address Registries (as of
//! 2025), entry by entry: the first and last address of each range get the kind expected,
//! and so do the addresses just outside it. Then every spelling of an IPv4 address inside
//! an IPv6 one.
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;

use crate::addresses::{Kind, special_range};

const H: Option<Kind> = Some(Kind::Host);
const P: Option<Kind> = Some(Kind::Private);
const R: Option<Kind> = Some(Kind::Reserved);
/// The public internet.
const N: Option<Kind> = None;

/// One registry entry: its range and name, the kind of the addresses inside, and the kinds
/// of the address just before and just after it (`None` at the end of the space: there is
/// no such address).
struct Entry {
    range: &'static str,
    name: &'static str,
    inside: Option<Kind>,
    before: Option<Option<Kind>>,
    after: Option<Option<Kind>>,
}

const fn e(
    range: &'static str,
    name: &'static str,
    inside: Option<Kind>,
    before: Option<Kind>,
    after: Option<Kind>,
) -> Entry {
    Entry {
        range,
        name,
        inside,
        before: Some(before),
        after: Some(after),
    }
}

/// IANA IPv4 Special-Purpose Address Registry, plus multicast (its own registry).
const IPV4: &[Entry] = &[
    Entry {
        before: None,
        ..e("0.0.0.0/8", "\"this network\"", R, N, N)
    },
    Entry {
        before: None,
        ..e("0.0.0.0/32", "\"this host on this network\"", R, N, R)
    },
    e("10.0.0.0/8", "private-use", P, N, N),
    e("100.64.0.0/10", "shared address space", P, N, N),
    e("127.0.0.0/8", "loopback", H, N, N),
    e("169.254.0.0/16", "link local", R, N, N),
    e("172.16.0.0/12", "private-use", P, N, N),
    e("192.0.0.0/24", "IETF protocol assignments", R, N, N),
    e("192.0.0.0/29", "IPv4 service continuity prefix", R, N, R),
    e("192.0.0.8/32", "IPv4 dummy address", R, R, R),
    // Globally reachable in the registry; anycast, answered by the nearest PCP server.
    e("192.0.0.9/32", "port control protocol anycast", R, R, R),
    // Globally reachable in the registry; anycast, answered by the nearest TURN server.
    e("192.0.0.10/32", "TURN anycast", R, R, R),
    e("192.0.0.170/32", "NAT64/DNS64 discovery", R, R, R),
    e("192.0.0.171/32", "NAT64/DNS64 discovery", R, R, R),
    e("192.0.2.0/24", "documentation (TEST-NET-1)", R, N, N),
    e("192.31.196.0/24", "AS112-v4 (globally reachable)", N, N, N),
    e("192.52.193.0/24", "AMT (globally reachable)", N, N, N),
    e("192.88.99.0/24", "deprecated 6to4 relay anycast", R, N, N),
    e("192.168.0.0/16", "private-use", P, N, N),
    e(
        "192.175.48.0/24",
        "direct delegation AS112 (globally reachable)",
        N,
        N,
        N,
    ),
    e("198.18.0.0/15", "benchmarking", R, N, N),
    e("198.51.100.0/24", "documentation (TEST-NET-2)", R, N, N),
    e("203.0.113.0/24", "documentation (TEST-NET-3)", R, N, N),
    e("224.0.0.0/4", "multicast", R, N, R),
    Entry {
        after: None,
        ..e("240.0.0.0/4", "reserved", R, R, N)
    },
    Entry {
        after: None,
        ..e("255.255.255.255/32", "limited broadcast", R, R, N)
    },
];

/// IANA IPv6 Special-Purpose Address Registry, plus the ranges outside it the classifier
/// knows: IPv4-compatible, site-local, multicast.
const IPV6: &[Entry] = &[
    Entry {
        before: None,
        ..e("::/128", "unspecified", R, N, H)
    },
    e("::1/128", "loopback", H, R, R),
    Entry {
        before: None,
        ..e("::/96", "deprecated IPv4-compatible (RFC 4291)", R, N, R)
    },
    // Judged by the IPv4 address: its first and last are 0.0.0.0 and 255.255.255.255.
    e("::ffff:0:0/96", "IPv4-mapped", R, R, R),
    // Judged by the IPv4 address, as above.
    e("64:ff9b::/96", "IPv4-IPv6 translation", R, R, R),
    e("64:ff9b:1::/48", "local-use IPv4-IPv6 translation", P, R, R),
    e("100::/64", "discard-only", R, R, R),
    e("100:0:0:1::/64", "dummy prefix", R, R, R),
    e("2001::/23", "IETF protocol assignments", R, N, N),
    e("2001::/32", "TEREDO", R, N, R),
    // Globally reachable in the registry; anycast, answered by the nearest server.
    e("2001:1::1/128", "port control protocol anycast", R, R, R),
    e("2001:1::2/128", "TURN anycast", R, R, R),
    e(
        "2001:1::3/128",
        "DNS-SD service registration protocol anycast",
        R,
        R,
        R,
    ),
    e("2001:2::/48", "benchmarking", R, R, R),
    e("2001:3::/32", "AMT", R, R, R),
    e("2001:4:112::/48", "AS112-v6", R, R, R),
    e("2001:10::/28", "deprecated ORCHID", R, R, R),
    e("2001:20::/28", "ORCHIDv2", R, R, R),
    e("2001:30::/28", "drone remote ID entity tags", R, R, R),
    e("2001:db8::/32", "documentation", R, N, N),
    // Judged by the IPv4 address: 2002:: is 0.0.0.0, the last 255.255.255.255.
    e("2002::/16", "6to4", R, N, N),
    e(
        "2620:4f:8000::/48",
        "direct delegation AS112 (globally reachable)",
        N,
        N,
        N,
    ),
    e("3fff::/20", "documentation", R, N, N),
    // Outside 2000::/3, so its neighbours are unallocated.
    e("5f00::/16", "segment routing (SRv6) SIDs", R, R, R),
    e("fc00::/7", "unique-local", P, R, R),
    e("fe80::/10", "link-local unicast", R, R, P),
    e("fec0::/10", "deprecated site-local (RFC 3879)", P, R, R),
    Entry {
        after: None,
        ..e("ff00::/8", "multicast", R, P, N)
    },
];

fn kind(ip: IpAddr) -> Option<Kind> {
    special_range(ip).map(|s| s.kind)
}

fn step(ip: IpAddr, up: bool) -> Option<IpAddr> {
    match ip {
        IpAddr::V4(v4) => {
            let n = u32::from(v4);
            let n = if up {
                n.checked_add(1)
            } else {
                n.checked_sub(1)
            };
            n.map(|n| IpAddr::V4(Ipv4Addr::from(n)))
        }
        IpAddr::V6(v6) => {
            let n = u128::from(v6);
            let n = if up {
                n.checked_add(1)
            } else {
                n.checked_sub(1)
            };
            n.map(|n| IpAddr::V6(Ipv6Addr::from(n)))
        }
    }
}

fn check(entries: &[Entry]) {
    let mut wrong = Vec::new();
    for entry in entries {
        let net: IpNet = entry.range.parse().unwrap();
        let (first, last) = (net.network(), net.broadcast());
        let mut expect = |what: &str, ip: IpAddr, kind_wanted: Option<Kind>| {
            let found = kind(ip);
            if found != kind_wanted {
                wrong.push(format!(
                    "{} ({}): {what} {ip} is {found:?}, expected {kind_wanted:?}",
                    entry.range, entry.name
                ));
            }
        };
        expect("first", first, entry.inside);
        expect("last", last, entry.inside);
        match (entry.before, step(first, false)) {
            (Some(k), Some(ip)) => expect("just before", ip, k),
            (None, None) => {}
            (want, found) => panic!("{}: before {want:?} but {found:?}", entry.range),
        }
        match (entry.after, step(last, true)) {
            (Some(k), Some(ip)) => expect("just after", ip, k),
            (None, None) => {}
            (want, found) => panic!("{}: after {want:?} but {found:?}", entry.range),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_ipv4_special_purpose_range() {
    check(IPV4);
}

#[test]
fn every_ipv6_special_purpose_range() {
    check(IPV6);
}

/// An IPv4 address inside an IPv6 one, in every spelling, for a loopback, a private, a
/// link-local (reserved) and a public IPv4 address.
/// A spelling, the loopback, private, link-local and public address in it, and their kinds.
type Spelling = (&'static str, [&'static str; 4], [Option<Kind>; 4]);

#[test]
fn every_embedded_ipv4_spelling() {
    let cases: &[Spelling] = &[
        (
            "IPv4-mapped ::ffff:a.b.c.d: the IPv4 host",
            [
                "::ffff:127.0.0.1",
                "::ffff:10.0.0.1",
                "::ffff:169.254.169.254",
                "::ffff:8.8.8.8",
            ],
            [H, P, R, N],
        ),
        (
            "IPv4-compatible ::a.b.c.d: deprecated, refused whatever it carries",
            [
                "::127.0.0.1",
                "::10.0.0.1",
                "::169.254.169.254",
                "::8.8.8.8",
            ],
            [R, R, R, R],
        ),
        (
            "NAT64 64:ff9b::/96: the IPv4 host behind the translator",
            [
                "64:ff9b::127.0.0.1",
                "64:ff9b::10.0.0.1",
                "64:ff9b::169.254.169.254",
                "64:ff9b::8.8.8.8",
            ],
            [H, P, R, N],
        ),
        (
            "local-use NAT64 64:ff9b:1::/48: a network behind the host, whatever it carries",
            [
                "64:ff9b:1::127.0.0.1",
                "64:ff9b:1::10.0.0.1",
                "64:ff9b:1::169.254.169.254",
                "64:ff9b:1::8.8.8.8",
            ],
            [P, P, P, P],
        ),
        (
            "6to4 2002:AABB:CCDD::/48: the IPv4 host of the relay",
            [
                "2002:7f00:1::1",
                "2002:a00:1::1",
                "2002:a9fe:a9fe::1",
                "2002:808:808::1",
            ],
            [H, P, R, N],
        ),
        (
            "Teredo 2001:0:SERVER::CLIENT (client bits inverted): refused with 2001::/23",
            [
                "2001:0:7f00:1::80ff:fffe",
                "2001:0:a00:1::f5ff:fffe",
                "2001:0:808:808::5646:5656",
                "2001:0:808:808::f7f7:f7f7",
            ],
            [R, R, R, R],
        ),
        (
            "IPv4-translated ::ffff:0:a.b.c.d (SIIT): outside 2000::/3",
            [
                "::ffff:0:127.0.0.1",
                "::ffff:0:10.0.0.1",
                "::ffff:0:169.254.169.254",
                "::ffff:0:8.8.8.8",
            ],
            [R, R, R, R],
        ),
        (
            "ISATAP …:5efe:a.b.c.d: judged by the prefix, here a public one",
            [
                "2606:4700::5efe:127.0.0.1",
                "2606:4700::5efe:10.0.0.1",
                "2606:4700::200:5efe:169.254.169.254",
                "2606:4700::5efe:8.8.8.8",
            ],
            [N, N, N, N],
        ),
        (
            "ISATAP …:5efe:a.b.c.d: judged by the prefix, here link-local",
            [
                "fe80::5efe:127.0.0.1",
                "fe80::5efe:10.0.0.1",
                "fe80::200:5efe:169.254.169.254",
                "fe80::5efe:8.8.8.8",
            ],
            [R, R, R, R],
        ),
    ];
    let mut wrong = Vec::new();
    for (spelling, ips, kinds) in cases {
        for (ip, want) in ips.iter().zip(kinds) {
            let found = kind(ip.parse().unwrap());
            if found != *want {
                wrong.push(format!("{spelling}: {ip} is {found:?}, expected {want:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The three ranges the sandbox and the web plugin once answered differently (issue 14).
#[test]
fn the_ranges_that_once_diverged() {
    assert_eq!(kind("fec0::1".parse().unwrap()), P);
    assert_eq!(kind("::8.8.8.8".parse().unwrap()), R);
    assert_eq!(kind("::127.0.0.1".parse().unwrap()), R);
    assert_eq!(kind("2001:db8::1".parse().unwrap()), R);
    assert_eq!(kind("2001:db8:ffff:ffff::1".parse().unwrap()), R);
}
