//! Which special addresses a connection may reach anyway. The operator opens them by
//! kind (the web plugin's `allow_loopback` and `allow_private`) or by network (the
//! sandbox's `[sandbox] network_private`); reserved ranges open only by network.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use crate::addresses::{Kind, Special, canonical, special};

/// The special addresses a connection may reach; every other special address is refused,
/// and every address of the public internet allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    /// This host: loopback and its own interface addresses.
    pub host: bool,
    /// Networks behind the host ([`Kind::Private`]).
    pub private: bool,
    /// Special networks allowed whatever their kind.
    pub networks: Vec<IpNet>,
}

/// Why an address may not be reached: the special range it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// The address as judged (an IPv4-mapped IPv6 address as the IPv4 one it reaches).
    pub ip: IpAddr,
    /// The range that makes it special.
    pub range: Special,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is a {} address", self.ip, self.range.name)
    }
}

impl std::error::Error for Refused {}

impl Reach {
    /// `Ok` when `ip` is on the public internet or in a special range this allows.
    pub fn check(&self, ip: IpAddr) -> Result<(), Refused> {
        let ip = canonical(ip);
        let Some(range) = special(ip) else {
            return Ok(());
        };
        let by_kind = match range.kind {
            Kind::Host => self.host,
            Kind::Private => self.private,
            Kind::Reserved => false,
        };
        if by_kind || self.opens(ip) {
            return Ok(());
        }
        Err(Refused { ip, range })
    }

    /// Whether one of [`Reach::networks`] holds `ip` (compared as [`canonical`] spells it).
    pub fn opens(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.networks.iter().any(|net| net.contains(&ip))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn nothing_special_is_reached_by_default() {
        let none = Reach::default();
        for s in ["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1", "fec0::1"] {
            let refused = none.check(ip(s)).unwrap_err();
            assert_eq!(refused.ip, canonical(ip(s)), "{s}");
        }
        none.check(ip("1.1.1.1")).unwrap();
        none.check(ip("2606:4700::1111")).unwrap();
    }

    #[test]
    fn kinds_open_their_own_ranges_only() {
        let host = Reach {
            host: true,
            ..Reach::default()
        };
        host.check(ip("127.0.0.1")).unwrap();
        host.check(ip("::ffff:127.0.0.1")).unwrap();
        assert!(host.check(ip("10.0.0.1")).is_err());
        let private = Reach {
            private: true,
            ..Reach::default()
        };
        private.check(ip("10.0.0.1")).unwrap();
        private.check(ip("fd00::1")).unwrap();
        assert!(private.check(ip("127.0.0.1")).is_err());
        // Reserved ranges open by network only.
        let both = Reach {
            host: true,
            private: true,
            ..Reach::default()
        };
        for s in ["169.254.169.254", "192.0.2.1", "fe80::1", "2001:db8::1"] {
            let refused = both.check(ip(s)).unwrap_err();
            assert_eq!(refused.range.kind, Kind::Reserved, "{s}");
        }
    }

    #[test]
    fn networks_open_what_they_hold_in_any_spelling() {
        let reach = Reach {
            networks: vec![
                "127.0.0.1/32".parse().unwrap(),
                "169.254.0.0/16".parse().unwrap(),
            ],
            ..Reach::default()
        };
        reach.check(ip("127.0.0.1")).unwrap();
        reach.check(ip("::ffff:127.0.0.1")).unwrap();
        reach.check(ip("169.254.169.254")).unwrap();
        assert!(reach.check(ip("127.0.0.2")).is_err());
        assert!(reach.check(ip("10.0.0.1")).is_err());
    }

    #[test]
    fn a_refusal_names_the_address_and_its_range() {
        let refused = Reach::default().check(ip("::ffff:10.1.2.3")).unwrap_err();
        assert_eq!(refused.to_string(), "10.1.2.3 is a private address");
    }
}
