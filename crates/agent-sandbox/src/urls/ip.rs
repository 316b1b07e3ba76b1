//! Which addresses a fetch may never reach: loopback, private, link-local, CGNAT, multicast,
//! broadcast, reserved, documentation, `0.0.0.0/8`, IPv6 ULA / link-local / site-local, and
//! IPv4 addresses embedded in IPv6 (mapped, compatible, NAT64, 6to4, Teredo), judged after
//! unwrapping.

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

/// The IPv4 address an IPv6 address carries, with the mechanism's name.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<(Ipv4Addr, &'static str)> {
    let bits = u128::from(ip);
    let low32 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if v6_in(ip, Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96) {
        return Some((low32, "IPv4-mapped (::ffff:0:0/96)"));
    }
    if v6_in(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return Some((low32, "NAT64 (64:ff9b::/96)"));
    }
    if v6_in(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        let v4 = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        return Some((v4, "6to4 (2002::/16)"));
    }
    if v6_in(ip, Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32) {
        // Teredo: the client's address is the last 32 bits, inverted.
        let v4 = Ipv4Addr::from(!((bits & 0xffff_ffff) as u32));
        return Some((v4, "Teredo (2001::/32)"));
    }
    if v6_in(ip, Ipv6Addr::UNSPECIFIED, 96) && bits > 1 {
        return Some((low32, "IPv4-compatible (::/96)"));
    }
    None
}

/// Why an IPv6 address is refused, or `None` for a public address.
pub fn blocked_v6(ip: Ipv6Addr) -> Option<String> {
    if ip.is_unspecified() {
        return Some("unspecified (::)".into());
    }
    if ip.is_loopback() {
        return Some("loopback (::1)".into());
    }
    if let Some((v4, how)) = embedded_v4(ip) {
        // Teredo and 6to4 are refused outright: they tunnel to arbitrary IPv4 hosts.
        return Some(match blocked_v4(v4) {
            Some(why) => format!("{how} embedding {v4}, {why}"),
            None if how.starts_with("Teredo") || how.starts_with("6to4") => {
                format!("{how} tunnel to {v4}")
            }
            None if how.starts_with("IPv4-compatible") => format!("deprecated {how} form of {v4}"),
            None => return None,
        });
    }
    const TABLE: &[(Ipv6Addr, u32, &str)] = &[
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
            Ipv6Addr::new(0x2001, 0x10, 0, 0, 0, 0, 0, 0),
            28,
            "ORCHID (2001:10::/28)",
        ),
        (
            Ipv6Addr::new(0x2001, 0x20, 0, 0, 0, 0, 0, 0),
            28,
            "ORCHIDv2 (2001:20::/28)",
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
            "site-local (fec0::/10)",
        ),
        (
            Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
            8,
            "multicast (ff00::/8)",
        ),
    ];
    TABLE
        .iter()
        .find(|(net, bits, _)| v6_in(ip, *net, *bits))
        .map(|(_, _, why)| (*why).to_owned())
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
            ("::ffff:8.8.8.8", false),
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
