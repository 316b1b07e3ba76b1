//! Which addresses a fetch may never reach: loopback, private, link-local, CGNAT, multicast,
//! broadcast, reserved, documentation, `0.0.0.0/8`; every IPv6 range the IANA IPv6
//! Special-Purpose Address Registry marks as not globally reachable, site-local, multicast and
//! anything outside global unicast `2000::/3`; and IPv4 addresses embedded in IPv6 (mapped,
//! translated, compatible, NAT64, 6to4, Teredo), unwrapped and named.
//!
//! [`canonical`] and [`reached_v4`] are how addresses are compared (domain lists, exemptions):
//! `::ffff:10.0.0.1`, `::ffff:0:a00:1` and `10.0.0.1` are one address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

fn v4_in(ip: Ipv4Addr, net: [u8; 4], bits: u32) -> bool {
    let mask = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn v6_in(ip: Ipv6Addr, net: Ipv6Addr, bits: u32) -> bool {
    let mask = if bits == 0 {
        0
    } else {
        u128::MAX << (128 - bits)
    };
    (u128::from(ip) & mask) == (u128::from(net) & mask)
}

/// Why an IPv4 address is refused, or `None` for a public address.
pub fn blocked_v4(ip: Ipv4Addr) -> Option<&'static str> {
    const TABLE: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "\"this network\" (0.0.0.0/8)"),
        ([10, 0, 0, 0], 8, "private (10.0.0.0/8)"),
        ([100, 64, 0, 0], 10, "carrier-grade NAT (100.64.0.0/10)"),
        ([127, 0, 0, 0], 8, "loopback (127.0.0.0/8)"),
        ([169, 254, 0, 0], 16, "link-local (169.254.0.0/16)"),
        ([172, 16, 0, 0], 12, "private (172.16.0.0/12)"),
        (
            [192, 0, 0, 0],
            24,
            "IETF protocol assignments (192.0.0.0/24)",
        ),
        ([192, 0, 2, 0], 24, "documentation (192.0.2.0/24)"),
        ([192, 88, 99, 0], 24, "6to4 relay anycast (192.88.99.0/24)"),
        ([192, 168, 0, 0], 16, "private (192.168.0.0/16)"),
        ([198, 18, 0, 0], 15, "benchmarking (198.18.0.0/15)"),
        ([198, 51, 100, 0], 24, "documentation (198.51.100.0/24)"),
        ([203, 0, 113, 0], 24, "documentation (203.0.113.0/24)"),
        ([224, 0, 0, 0], 4, "multicast (224.0.0.0/4)"),
        ([255, 255, 255, 255], 32, "broadcast (255.255.255.255)"),
        ([240, 0, 0, 0], 4, "reserved (240.0.0.0/4)"),
    ];
    TABLE
        .iter()
        .find(|(net, bits, _)| v4_in(ip, *net, *bits))
        .map(|(_, _, why)| *why)
}

/// How an IPv6 address carries an IPv4 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Embedding {
    /// `::ffff:a.b.c.d`: another spelling of the IPv4 address (sockets API).
    Mapped,
    /// `::ffff:0:a.b.c.d` (RFC 2765 SIIT): another spelling of the IPv4 address.
    Translated,
    /// `64:ff9b::a.b.c.d` (RFC 6052): reaches the IPv4 host through a NAT64 gateway.
    Nat64,
    /// `2002:AABB:CCDD::/48` (RFC 3056): a tunnel to the IPv4 host.
    SixToFour,
    /// `2001:0::/32` (RFC 4380): a tunnel to the (inverted) IPv4 client address.
    Teredo,
    /// `::a.b.c.d` (deprecated by RFC 4291).
    Compatible,
}

impl Embedding {
    fn name(self) -> &'static str {
        match self {
            Self::Mapped => "IPv4-mapped (::ffff:0:0/96)",
            Self::Translated => "IPv4-translated (::ffff:0:0:0/96)",
            Self::Nat64 => "NAT64 (64:ff9b::/96)",
            Self::SixToFour => "6to4 (2002::/16)",
            Self::Teredo => "Teredo (2001::/32)",
            Self::Compatible => "IPv4-compatible (::/96)",
        }
    }
}

fn embedding(ip: Ipv6Addr) -> Option<(Ipv4Addr, Embedding)> {
    let bits = u128::from(ip);
    let low32 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if v6_in(ip, Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96) {
        return Some((low32, Embedding::Mapped));
    }
    if v6_in(ip, Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0), 96) {
        return Some((low32, Embedding::Translated));
    }
    if v6_in(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return Some((low32, Embedding::Nat64));
    }
    if v6_in(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        let v4 = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        return Some((v4, Embedding::SixToFour));
    }
    if v6_in(ip, Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32) {
        // Teredo: the client's address is the last 32 bits, inverted.
        let v4 = Ipv4Addr::from(!((bits & 0xffff_ffff) as u32));
        return Some((v4, Embedding::Teredo));
    }
    if v6_in(ip, Ipv6Addr::UNSPECIFIED, 96) && bits > 1 {
        return Some((low32, Embedding::Compatible));
    }
    None
}

/// The IPv4 address an IPv6 address carries, with the mechanism's name: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`), 6to4,
/// Teredo, IPv4-compatible (`::a.b.c.d`).
pub fn embedded_v4(ip: Ipv6Addr) -> Option<(Ipv4Addr, &'static str)> {
    embedding(ip).map(|(v4, how)| (v4, how.name()))
}

/// The canonical form of an address, for comparing addresses: an IPv6 address that is only
/// another spelling of an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated
/// `::ffff:0:a.b.c.d`) becomes that IPv4 address; every other address is itself.
///
/// ```
/// use agent_sandbox::urls::ip::canonical;
/// use std::net::IpAddr;
///
/// let v4: IpAddr = "10.0.0.1".parse().unwrap();
/// assert_eq!(canonical("::ffff:10.0.0.1".parse().unwrap()), v4);
/// assert_eq!(canonical("::ffff:0:a00:1".parse().unwrap()), v4);
/// assert_eq!(canonical(v4), v4);
/// ```
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match embedding(v6) {
            Some((v4, Embedding::Mapped | Embedding::Translated)) => IpAddr::V4(v4),
            _ => ip,
        },
        IpAddr::V4(_) => ip,
    }
}

/// The IPv4 host a connection to `ip` ends up at, when there is one: `ip` itself, or the IPv4
/// address any embedding carries (mapped, translated, NAT64, 6to4, Teredo, compatible). Deny
/// lists compare it so that no IPv6 spelling or tunnel reaches a denied IPv4 host.
pub fn reached_v4(ip: IpAddr) -> Option<Ipv4Addr> {
    match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => embedding(v6).map(|(v4, _)| v4),
    }
}

/// IPv6 ranges of the IANA IPv6 Special-Purpose Address Registry that are globally reachable
/// although they lie inside `2001::/23`, which is not.
const GLOBAL_IN_2001_23: &[(Ipv6Addr, u32)] = &[
    (Ipv6Addr::new(0x2001, 1, 0, 0, 0, 0, 0, 1), 128), // PCP anycast
    (Ipv6Addr::new(0x2001, 1, 0, 0, 0, 0, 0, 2), 128), // TURN anycast
    (Ipv6Addr::new(0x2001, 1, 0, 0, 0, 0, 0, 3), 128), // DNS-SD SRP anycast
    (Ipv6Addr::new(0x2001, 3, 0, 0, 0, 0, 0, 0), 32),  // AMT
    (Ipv6Addr::new(0x2001, 4, 0x112, 0, 0, 0, 0, 0), 48), // AS112-v6
    (Ipv6Addr::new(0x2001, 0x20, 0, 0, 0, 0, 0, 0), 28), // ORCHIDv2
    (Ipv6Addr::new(0x2001, 0x30, 0, 0, 0, 0, 0, 0), 28), // Drone remote ID (DETs)
];

/// Not globally reachable IPv6 ranges (IANA IPv6 Special-Purpose Address Registry, plus the
/// deprecated site-local range and multicast), most specific first.
const V6_TABLE: &[(Ipv6Addr, u32, &str)] = &[
    (
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        "local-use NAT64 (64:ff9b:1::/48)",
    ),
    (
        Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        "discard-only (100::/64)",
    ),
    (
        Ipv6Addr::new(0x100, 0, 0, 1, 0, 0, 0, 0),
        64,
        "dummy prefix (100:0:0:1::/64)",
    ),
    (
        Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0),
        48,
        "benchmarking (2001:2::/48)",
    ),
    (
        Ipv6Addr::new(0x2001, 0x10, 0, 0, 0, 0, 0, 0),
        28,
        "deprecated ORCHID (2001:10::/28)",
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        "IETF protocol assignments (2001::/23)",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        "documentation (2001:db8::/32)",
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        "documentation (3fff::/20)",
    ),
    (
        Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0),
        16,
        "segment routing SIDs (5f00::/16)",
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        "unique local (fc00::/7)",
    ),
    (
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        "link-local (fe80::/10)",
    ),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        "deprecated site-local (fec0::/10)",
    ),
    (
        Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        "multicast (ff00::/8)",
    ),
];

/// Why an IPv6 address is refused, or `None` for a public address.
///
/// Refused: `::`, `::1`; every range of the IANA IPv6 Special-Purpose Address Registry that is
/// not globally reachable (the globally reachable exceptions inside `2001::/23` pass), the
/// deprecated site-local `fec0::/10` and multicast `ff00::/8`; IPv4-mapped, IPv4-translated and
/// IPv4-compatible spellings, 6to4 and Teredo whatever IPv4 address they carry (naming it, and
/// why it is refused when it is); NAT64 `64:ff9b::/96` when the IPv4 address it carries is
/// refused; and anything outside `2000::/3`, the only range allocated for global unicast.
pub fn blocked_v6(ip: Ipv6Addr) -> Option<String> {
    if ip.is_unspecified() {
        return Some("unspecified (::/128)".into());
    }
    if ip.is_loopback() {
        return Some("loopback (::1/128)".into());
    }
    if let Some((v4, how)) = embedding(ip) {
        let name = how.name();
        return match (blocked_v4(v4), how) {
            (Some(why), _) => Some(format!("{name} embedding {v4}, {why}")),
            // Globally reachable (IANA): judged by the IPv4 host it reaches.
            (None, Embedding::Nat64) => None,
            (None, Embedding::Mapped | Embedding::Translated) => Some(format!(
                "{name} spelling of {v4}, not globally reachable as IPv6 (use {v4} itself)"
            )),
            // Tunnels to arbitrary IPv4 hosts.
            (None, Embedding::SixToFour | Embedding::Teredo) => {
                Some(format!("{name} tunnel to {v4}"))
            }
            (None, Embedding::Compatible) => Some(format!("deprecated {name} form of {v4}")),
        };
    }
    if GLOBAL_IN_2001_23
        .iter()
        .any(|(net, bits)| v6_in(ip, *net, *bits))
    {
        return None;
    }
    if let Some((_, _, why)) = V6_TABLE
        .iter()
        .find(|(net, bits, _)| v6_in(ip, *net, *bits))
    {
        return Some((*why).to_owned());
    }
    if !v6_in(ip, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return Some("not global unicast (outside 2000::/3)".into());
    }
    None
}

/// Why an address is refused, or `None` for a public address.
pub fn blocked(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4).map(str::to_owned),
        IpAddr::V6(v6) => blocked_v6(v6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases: &[(&str, bool)] = &[
            ("8.8.8.8", false),
            ("1.1.1.1", false),
            ("127.0.0.1", true),
            ("0.1.2.3", true),
            ("100.64.0.1", true),
            ("100.128.0.1", false),
            ("172.31.255.255", true),
            ("172.32.0.1", false),
            ("255.255.255.255", true),
            ("2606:4700::1111", false),
            ("::1", true),
            ("::", true),
            ("::ffff:127.0.0.1", true),
            ("::ffff:8.8.8.8", true),
            ("::ffff:0:808:808", true),
            ("::ffff:0:a00:1", true),
            ("64:ff9b::a9fe:a9fe", true),
            ("64:ff9b::808:808", false),
            ("2002:7f00:1::", true),
            ("2002:808:808::", true),
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", true),
            ("fd00::1", true),
            ("fe80::1", true),
            ("fec0::1", true),
            ("ff02::1", true),
            ("2001:db8::1", true),
            ("::127.0.0.1", true),
        ];
        for (ip, want) in cases {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(blocked(ip).is_some(), *want, "{ip}: {:?}", blocked(ip));
        }
        assert_eq!(
            embedded_v4("2001:0:4136:e378:8000:63bf:80ff:fffe".parse().unwrap()).map(|x| x.0),
            Some(Ipv4Addr::new(127, 0, 0, 1))
        );
    }
}
