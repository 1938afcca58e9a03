//! Where a networked tool may send packets.
//!
//! The supervisor ([`super::supervise`]) connects on the tool's behalf from the host's
//! network, where the kernel alone would let it reach the host's loopback services, the
//! host's own interface addresses and the private network behind the host. It asks
//! [`Egress::check`] about every address a tool connects to, and refuses whatever
//! [`toolhost_netpolicy`] calls special unless the operator allowed it
//! (`[sandbox] network_private`): the same policy the web plugin applies.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};
use toolhost_netpolicy::{Reach, canonical};

/// The policy the supervisor enforces, sent to the helper in the spec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Egress {
    /// The special addresses the operator allowed anyway: the networks of
    /// `[sandbox] network_private`, never a whole kind.
    pub reach: Reach,
    /// Where the sandbox's DNS queries go (its resolv.conf names 127.0.0.1, where the
    /// supervisor answers). The operator's choice or the host's resolvers.
    pub dns: Vec<SocketAddr>,
    /// TCP ports a tool may connect to; empty means any.
    pub tcp_ports: Vec<u16>,
}

impl Egress {
    /// `Ok` when a tool may reach `to`; otherwise why not, for the tool's log.
    pub(crate) fn check(&self, to: SocketAddr, stream: bool) -> Result<(), String> {
        if let Err(refused) = self.reach.check(to.ip()) {
            return Err(format!(
                "{to} is a {} address; `[sandbox] network_private` in toolhost.toml can allow it",
                refused.range.name
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
    pub(crate) fn is_local(&self, to: SocketAddr) -> bool {
        canonical(to.ip()).is_loopback() && !self.reach.opens(to.ip())
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
            // F16: documentation, discard-only and deprecated ranges, which the web plugin
            // refused and the supervisor did not.
            "192.0.2.2:80",
            "198.51.100.1:80",
            "203.0.113.1:443",
            "[2001:db8::1]:80",
            "[100::1]:80",
            "[fec0::1]:80",
            "[::8.8.8.8]:80",
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
        ] {
            open().check(addr(to), true).unwrap();
        }
    }

    #[test]
    fn refuses_the_hosts_own_interface_addresses() {
        // F16: a server bound to the host's own (even public) address is the host's.
        let own = nix::ifaddrs::getifaddrs()
            .unwrap()
            .filter_map(|i| i.address)
            .filter_map(|a| a.as_sockaddr_in().map(|v4| v4.ip()))
            .filter(|ip| !ip.is_loopback())
            .collect::<Vec<_>>();
        for ip in own {
            let to = SocketAddr::new(ip.into(), 80);
            let refusal = open().check(to, true).unwrap_err();
            assert!(refusal.contains("network_private"), "{to}: {refusal}");
        }
    }

    #[test]
    fn the_operator_can_allow_a_private_network() {
        let egress = Egress {
            reach: Reach {
                networks: vec![
                    "127.0.0.1/32".parse().unwrap(),
                    "10.0.0.0/8".parse().unwrap(),
                ],
                ..Reach::default()
            },
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
