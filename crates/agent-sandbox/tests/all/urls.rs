//! The SSRF corpus: every refused range and odd spelling, domain lists, and (with `fetch`)
//! redirects from an allowed host to private addresses through a loopback server, pinning and
//! size caps.

use std::collections::HashMap;
use std::net::IpAddr;

use agent_sandbox::settings::{NetworkSettings, SandboxSettings};
use agent_sandbox::urls::{StaticResolver, UrlPolicy, domain_matches, ip, normalize_domain_entry};

fn resolver() -> StaticResolver {
    let mut entries: HashMap<String, Vec<IpAddr>> = HashMap::new();
    let mut add = |h: &str, ips: &[&str]| {
        entries.insert(h.into(), ips.iter().map(|i| i.parse().unwrap()).collect());
    };
    add("public.test", &["93.184.216.34"]);
    add("public6.test", &["2606:2800:220:1:248:1893:25c8:1946"]);
    add("private.test", &["10.1.2.3"]);
    add("mixed.test", &["93.184.216.34", "192.168.1.1"]);
    add("rebind.test", &["169.254.169.254"]);
    add("cgnat.test", &["100.100.100.100"]);
    add("mapped.test", &["::ffff:10.0.0.1"]);
    add("api.example.com", &["93.184.216.35"]);
    add("example.com", &["93.184.216.36"]);
    add("evil.example.com", &["93.184.216.37"]);
    add("xn--bcher-kva.test", &["93.184.216.38"]);
    StaticResolver {
        entries,
        offline: true,
    }
}

#[test]
fn ssrf_corpus() {
    let policy = UrlPolicy::new(&NetworkSettings::default());
    let r = resolver();
    let cases: &[(&str, bool)] = &[
        ("http://public.test/", true),
        ("https://public.test:8443/x?y=1", true),
        ("http://public6.test/", true),
        ("http://93.184.216.34/", true),
        ("http://[2606:4700::1111]/", true),
        ("HTTP://PUBLIC.TEST/", true),
        ("http://public.test./", true),
        ("http://bücher.test/", true),
        // Schemes.
        ("ftp://public.test/", false),
        ("file:///etc/passwd", false),
        ("gopher://public.test/", false),
        ("data:text/plain,hi", false),
        ("javascript:alert(1)", false),
        ("ws://public.test/", false),
        // Loopback in every spelling.
        ("http://127.0.0.1/", false),
        ("http://127.1/", false),
        ("http://127.0.1/", false),
        ("http://2130706433/", false),
        ("http://0x7f000001/", false),
        ("http://0x7f.1/", false),
        ("http://0x7f.0.0.1/", false),
        ("http://017700000001/", false),
        ("http://0177.0.0.1/", false),
        ("http://127.0.0.1./", false),
        ("http://127.000.000.001/", false),
        ("http://localhost/", false),
        ("http://LOCALHOST./", false),
        ("http://app.localhost/", false),
        ("http://[::1]/", false),
        ("http://[0:0:0:0:0:0:0:1]/", false),
        ("http://[::]/", false),
        ("http://0.0.0.0/", false),
        ("http://0/", false),
        ("http://user:pw@127.0.0.1:8080/", false),
        // Private, link-local, CGNAT, multicast, broadcast, reserved, documentation.
        ("http://10.0.0.1/", false),
        ("http://172.16.0.1/", false),
        ("http://172.31.255.254/", false),
        ("http://192.168.0.1/", false),
        ("http://169.254.169.254/latest/meta-data/", false),
        ("http://100.64.0.1/", false),
        ("http://224.0.0.1/", false),
        ("http://239.255.255.250/", false),
        ("http://255.255.255.255/", false),
        ("http://240.0.0.1/", false),
        ("http://192.0.2.1/", false),
        ("http://198.51.100.1/", false),
        ("http://203.0.113.1/", false),
        ("http://198.18.0.1/", false),
        ("http://192.0.0.1/", false),
        // IPv6 ranges and IPv4 embedded in IPv6.
        ("http://[fd00::1]/", false),
        ("http://[fc00::1]/", false),
        ("http://[fe80::1]/", false),
        ("http://[fec0::1]/", false),
        ("http://[ff02::1]/", false),
        ("http://[2001:db8::1]/", false),
        ("http://[::ffff:127.0.0.1]/", false),
        ("http://[::ffff:7f00:1]/", false),
        ("http://[::ffff:169.254.169.254]/", false),
        ("http://[64:ff9b::7f00:1]/", false),
        ("http://[64:ff9b::a00:1]/", false),
        ("http://[2002:7f00:1::]/", false),
        ("http://[2002:a00:1::]/", false),
        ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", false),
        ("http://[::127.0.0.1]/", false),
        // Names resolving to refused addresses (any one of them).
        ("http://private.test/", false),
        ("http://mixed.test/", false),
        ("http://rebind.test/", false),
        ("http://cgnat.test/", false),
        ("http://mapped.test/", false),
        ("http://unknown.test/", false),
        // Malformed.
        ("not a url", false),
        ("http://", false),
        ("http:///path", false),
    ];
    assert!(cases.len() >= 60, "{}", cases.len());
    let mut wrong = Vec::new();
    for (url, want) in cases {
        let v = policy.check(url, &r);
        if v.verdict.allowed != *want {
            wrong.push(format!(
                "{url}: allowed={} ({})",
                v.verdict.allowed, v.verdict.reason
            ));
        }
        if v.verdict.allowed {
            assert!(
                !v.addrs.is_empty(),
                "{url}: an allowed URL must carry pinned addresses"
            );
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn domain_lists() {
    let policy = UrlPolicy::new(&NetworkSettings {
        allowed_domains: Some(vec!["*.example.com".into(), "public.test".into()]),
        denied_domains: vec!["evil.example.com".into()],
        allow_local_binding: false,
    });
    let r = resolver();
    assert!(policy.check("https://api.example.com/", &r).verdict.allowed);
    assert!(policy.check("https://public.test/", &r).verdict.allowed);
    let v = policy.check("https://evil.example.com/", &r).verdict;
    assert_eq!(
        v.rule.as_deref(),
        Some("network.deniedDomains: evil.example.com")
    );
    assert!(!policy.check("https://example.com/", &r).verdict.allowed);
    assert!(!policy.check("https://public6.test/", &r).verdict.allowed);
    assert!(domain_matches("*.x.com", "a.b.x.com"));
    assert!(!domain_matches("*.x.com", "x.com"));
    assert!(!domain_matches("*.x.com", "evilx.com"));
}

/// The punycode a URL's host becomes.
fn ascii_host(host: &str) -> String {
    url::Url::parse(&format!("http://{host}/"))
        .unwrap()
        .host_str()
        .unwrap()
        .to_owned()
}

fn deny_only(entries: &[&str]) -> UrlPolicy {
    UrlPolicy::new(&NetworkSettings {
        allowed_domains: None,
        denied_domains: entries.iter().map(|e| (*e).to_owned()).collect(),
        allow_local_binding: false,
    })
}

fn allow_only(entries: &[&str]) -> UrlPolicy {
    UrlPolicy::new(&NetworkSettings {
        allowed_domains: Some(entries.iter().map(|e| (*e).to_owned()).collect()),
        denied_domains: Vec::new(),
        allow_local_binding: false,
    })
}

/// Each way an entry can be written (Unicode, uppercase, trailing dot, mixed, punycode in
/// capitals, percent-encoded), with URLs spelling the host every way the URL parser accepts.
/// Shared by the deny and the allow test.
fn spelling_cases() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        // Unicode entry.
        (
            "bücher.example",
            vec![
                "http://bücher.example/",
                "http://BÜCHER.example/",
                "http://xn--bcher-kva.example/",
                "http://bücher.example./",
            ],
        ),
        // Uppercase Cyrillic Е (U+0415) + Latin: IDNA lowercases before punycode.
        (
            "ЕXAMPLE.com",
            vec![
                "http://еxample.com/",
                "http://ЕXAMPLE.COM./",
                "http://xn--xample-2of.com/",
            ],
        ),
        // Uppercase ASCII.
        (
            "EVIL.COM",
            vec!["http://evil.com/", "http://EVIL.com/", "http://evil.com./"],
        ),
        // Trailing dot (and two).
        ("evil.com.", vec!["http://evil.com/", "http://EVIL.COM./"]),
        ("evil.com..", vec!["http://evil.com/", "http://evil.com../"]),
        // Mixed: wildcard, capitals, Unicode, trailing dot.
        (
            "*.BÜCHER.Example.",
            vec![
                "http://api.bücher.example/",
                "http://API.xn--bcher-kva.example./",
                "http://a.b.BÜCHER.example/",
            ],
        ),
        // Punycode in capitals, percent-encoding, surrounding spaces.
        (
            "XN--BCHER-KVA.EXAMPLE",
            vec!["http://bücher.example/", "http://xn--bcher-kva.example/"],
        ),
        (
            " ex%61mple.com ",
            vec!["http://example.com/", "http://EXAMPLE.com/"],
        ),
    ]
}

fn spelling_resolver() -> StaticResolver {
    let mut r = resolver();
    for host in [
        "bücher.example",
        "еxample.com",
        "evil.com",
        "api.bücher.example",
        "a.b.bücher.example",
        "example.com",
        "other.example",
    ] {
        r.entries
            .insert(ascii_host(host), vec!["93.184.216.40".parse().unwrap()]);
    }
    r
}

#[test]
fn deny_entries_match_every_normalised_spelling() {
    let r = spelling_resolver();
    let mut wrong = Vec::new();
    for (entry, urls) in spelling_cases() {
        let policy = deny_only(&[entry]);
        for url in urls {
            let v = policy.check(url, &r).verdict;
            if v.allowed || v.rule.as_deref() != Some(&format!("network.deniedDomains: {entry}")) {
                wrong.push(format!("{entry:?} vs {url}: {v:?}"));
            }
        }
        // Other hosts stay reachable.
        let v = policy.check("http://other.example/", &r).verdict;
        if !v.allowed {
            wrong.push(format!("{entry:?} vs other.example: {v:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn allow_entries_match_every_normalised_spelling() {
    let r = spelling_resolver();
    let mut wrong = Vec::new();
    for (entry, urls) in spelling_cases() {
        let policy = allow_only(&[entry]);
        for url in urls {
            let v = policy.check(url, &r).verdict;
            if !v.allowed {
                wrong.push(format!("{entry:?} vs {url}: {v:?}"));
            }
        }
        let v = policy.check("http://other.example/", &r).verdict;
        if v.allowed || v.rule.as_deref() != Some("network.allowedDomains") {
            wrong.push(format!("{entry:?} vs other.example: {v:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn entries_normalise_to_the_url_parsers_host() {
    for (entry, want) in [
        ("bücher.example", "xn--bcher-kva.example"),
        ("ЕXAMPLE.com", "xn--xample-2of.com"),
        ("EVIL.COM", "evil.com"),
        ("evil.com.", "evil.com"),
        ("*.BÜCHER.Example.", "*.xn--bcher-kva.example"),
        ("0x7f.1", "127.0.0.1"),
        ("10.0.0.1.", "10.0.0.1"),
        ("::ffff:10.0.0.1", "10.0.0.1"),
        ("[::ffff:a00:1]", "10.0.0.1"),
        ("::ffff:0:a00:1", "10.0.0.1"),
        ("[2001:DB8::1]", "[2001:db8::1]"),
        ("64:ff9b::a00:1", "[64:ff9b::a00:1]"),
    ] {
        assert_eq!(normalize_domain_entry(entry).unwrap(), want, "{entry:?}");
    }
    assert!(domain_matches("EVIL.COM.", "evil.com"));
    assert!(domain_matches("bücher.example", "XN--BCHER-KVA.example."));
    assert!(domain_matches("10.0.0.1", "[::ffff:10.0.0.1]"));
}

#[test]
fn unnormalisable_entries_are_errors_in_settings_and_refusals_in_the_policy() {
    let r = resolver();
    for (entry, why) in [
        ("xn--a.example", "not a valid host"),
        ("a\u{200d}b.example", "not a valid host"),
        ("münchen.xn--a", "not a valid host"),
        ("example.com:8080", "ports are not supported"),
        ("[::1]:443", "ports are not supported"),
        ("10.0.0.1:80", "ports are not supported"),
        ("http://example.com", "it is a URL"),
        ("a*.example.com", "only a leading `*.` wildcard"),
        ("*.*.example.com", "only a leading `*.` wildcard"),
        ("*.10.0.0.1", "cannot apply to an IP address"),
        ("*.", "it is empty"),
        (".", "only dots"),
    ] {
        let e = normalize_domain_entry(entry).unwrap_err();
        assert!(e.contains(why), "{entry:?}: {e}");
        for (denied, allowed, key) in [
            (vec![entry.to_owned()], None, "network.deniedDomains[0]"),
            (
                vec![],
                Some(vec!["public.test".to_owned(), entry.to_owned()]),
                "network.allowedDomains[1]",
            ),
        ] {
            let network = NetworkSettings {
                allowed_domains: allowed.clone(),
                denied_domains: denied.clone(),
                allow_local_binding: false,
            };
            // The policy refuses everything, naming the entry.
            let v = UrlPolicy::new(&network)
                .check("http://public.test/", &r)
                .verdict;
            assert!(!v.allowed, "{entry:?}");
            assert_eq!(v.rule.as_deref(), Some(key), "{entry:?}");
            assert!(v.reason.contains(&format!("{entry:?}")), "{}", v.reason);
            assert!(v.reason.contains(why), "{}", v.reason);
            // Settings given in code: `validate`.
            let code = SandboxSettings {
                network: network.clone(),
                ..SandboxSettings::default()
            };
            let e = code.validate().unwrap_err();
            assert!(e.key.ends_with(&key[key.find('[').unwrap()..]), "{e}");
            assert!(e.problem.contains(why), "{e}");
            // Settings files: the file and key are named.
            let mut block = serde_json::Map::new();
            let mut net = serde_json::Map::new();
            net.insert("deniedDomains".into(), serde_json::json!(denied));
            if let Some(a) = &allowed {
                net.insert("allowedDomains".into(), serde_json::json!(a));
            }
            block.insert("network".into(), serde_json::Value::Object(net));
            let e = SandboxSettings::default()
                .merge_block(
                    &block,
                    "settings.json",
                    std::path::Path::new("/p"),
                    std::path::Path::new("/h"),
                    true,
                )
                .unwrap_err();
            assert_eq!((e.file.as_str(), e.key.as_str()), ("settings.json", key));
            let line = e.to_string();
            assert!(
                line.contains(&format!("{entry:?}")) && line.contains(why),
                "{line}"
            );
        }
    }
}

/// Every way to write 93.184.216.34 (`5db8:d822`) as an IPv6 (or odd IPv4) URL host.
const SPELLINGS_OF_93_184_216_34: &[&str] = &[
    "http://93.184.216.34/",
    "http://1572395042/",
    "http://0x5d.0xb8.0xd8.0x22/",
    "http://93.184.55330/",
    "http://[::ffff:93.184.216.34]/",
    "http://[::ffff:5db8:d822]/",
    "http://[0:0:0:0:0:ffff:5db8:d822]/",
    "http://[::FFFF:5DB8:D822]/",
    "http://[0000:0000:0000:0000:0000:ffff:93.184.216.34]/",
    "http://[::ffff:0:93.184.216.34]/",
    "http://[::ffff:0:5db8:d822]/",
    "http://[64:ff9b::93.184.216.34]/",
    "http://[64:ff9b::5db8:d822]/",
    "http://[::93.184.216.34]/",
    "http://[2002:5db8:d822::1]/",
    "http://[2001:0:4136:e378:8000:63bf:a247:27dd]/",
];

#[test]
fn a_denied_ipv4_is_denied_in_every_ipv6_spelling() {
    let r = resolver();
    let mut wrong = Vec::new();
    for entry in ["93.184.216.34", "10.0.0.1"] {
        let policy = deny_only(&[entry]);
        let spellings: Vec<String> = if entry == "10.0.0.1" {
            [
                "http://10.0.0.1/",
                "http://167772161/",
                "http://[::ffff:10.0.0.1]/",
                "http://[::ffff:a00:1]/",
                "http://[::ffff:0:10.0.0.1]/",
                "http://[::ffff:0:a00:1]/",
                "http://[64:ff9b::a00:1]/",
                "http://[::a00:1]/",
                "http://[2002:a00:1::]/",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
        } else {
            SPELLINGS_OF_93_184_216_34
                .iter()
                .map(|s| (*s).to_owned())
                .collect()
        };
        for url in &spellings {
            let v = policy.check(url, &r).verdict;
            if v.allowed || v.rule.as_deref() != Some(&format!("network.deniedDomains: {entry}")) {
                wrong.push(format!("{entry} vs {url}: {v:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn an_address_denied_in_an_ipv6_spelling_denies_the_ipv4_host() {
    let r = resolver();
    for entry in [
        "::ffff:93.184.216.34",
        "[::ffff:93.184.216.34]",
        "::ffff:5db8:d822",
        "[::FFFF:5DB8:D822]",
        "::ffff:0:93.184.216.34",
        "::ffff:0:5db8:d822",
        "64:ff9b::5db8:d822",
        "2002:5db8:d822::1",
    ] {
        let policy = deny_only(&[entry]);
        for url in SPELLINGS_OF_93_184_216_34 {
            let v = policy.check(url, &r).verdict;
            assert!(!v.allowed, "{entry} vs {url}");
            assert_eq!(
                v.rule.as_deref(),
                Some(format!("network.deniedDomains: {entry}").as_str()),
                "{entry} vs {url}: {}",
                v.reason
            );
        }
        // A name resolving to it, too.
        let v = policy.check("http://public.test/", &r).verdict;
        assert_eq!(
            v.rule.as_deref(),
            Some(format!("network.deniedDomains: {entry}").as_str()),
            "{entry}: {}",
            v.reason
        );
        assert!(
            v.reason.contains("resolves to 93.184.216.34"),
            "{}",
            v.reason
        );
    }
    // Another address is not caught by it.
    let policy = deny_only(&["::ffff:93.184.216.34"]);
    assert!(policy.check("http://93.184.216.35/", &r).verdict.allowed);
}

#[test]
fn allow_entries_compare_canonical_addresses() {
    let r = resolver();
    // Written as IPv4, reached as IPv4: allowed. Written as a mapped or translated IPv6 address:
    // the same IPv4 host, allowed.
    for entry in [
        "93.184.216.34",
        "::ffff:93.184.216.34",
        "[::ffff:5db8:d822]",
        "::ffff:0:5db8:d822",
    ] {
        let policy = allow_only(&[entry]);
        for url in [
            "http://93.184.216.34/",
            "http://1572395042/",
            "http://0x5d.0xb8.0xd8.0x22/",
        ] {
            assert!(policy.check(url, &r).verdict.allowed, "{entry} vs {url}");
        }
        // The IPv6 spellings of it pass the allowlist, then the address check refuses them:
        // mapped and translated addresses are not globally reachable (IANA).
        for url in [
            "http://[::ffff:93.184.216.34]/",
            "http://[::ffff:0:5db8:d822]/",
        ] {
            let v = policy.check(url, &r).verdict;
            assert!(!v.allowed, "{entry} vs {url}");
            assert_eq!(
                v.rule.as_deref(),
                Some("built-in: non-public address"),
                "{entry} vs {url}: {}",
                v.reason
            );
        }
        // A tunnel or translator to it is another host: not on the allowlist.
        for url in [
            "http://[64:ff9b::5db8:d822]/",
            "http://[2002:5db8:d822::1]/",
            "http://93.184.216.35/",
            "http://public.test/",
        ] {
            let v = policy.check(url, &r).verdict;
            assert_eq!(
                v.rule.as_deref(),
                Some("network.allowedDomains"),
                "{entry} vs {url}: {}",
                v.reason
            );
        }
    }
}

#[test]
fn exempt_addresses_compare_canonical_addresses() {
    let r = resolver();
    let policy =
        UrlPolicy::new(&NetworkSettings::default()).exempt_address("127.0.0.1".parse().unwrap());
    for url in [
        "http://127.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:0:7f00:1]/",
    ] {
        assert!(policy.check(url, &r).verdict.allowed, "{url}");
    }
    for url in [
        "http://127.0.0.2/",
        "http://[::ffff:127.0.0.2]/",
        "http://[::1]/",
    ] {
        assert!(!policy.check(url, &r).verdict.allowed, "{url}");
    }
    let policy = UrlPolicy::new(&NetworkSettings::default())
        .exempt_address("::ffff:127.0.0.1".parse().unwrap());
    assert!(policy.check("http://127.0.0.1/", &r).verdict.allowed);
}

/// The IANA IPv6 Special-Purpose Address Registry, range by range: an address inside is
/// refused; where the neighbour is global unicast, an address just outside is public.
#[test]
fn iana_ipv6_special_purpose_ranges() {
    // (range, inside (refused), just outside (public))
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("::/128", &["::"], &[]),
        ("::1/128", &["::1"], &[]),
        (
            "::ffff:0:0/96 IPv4-mapped",
            &["::ffff:8.8.8.8", "::ffff:10.0.0.1", "::ffff:0.0.0.0"],
            &[],
        ),
        (
            "::ffff:0:0:0/96 IPv4-translated",
            &["::ffff:0:8.8.8.8", "::ffff:0:a00:1"],
            &[],
        ),
        ("::/96 IPv4-compatible", &["::8.8.8.8", "::2"], &[]),
        (
            "64:ff9b::/96 NAT64 (judged by the IPv4 address)",
            &["64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe"],
            &["64:ff9b::808:808"],
        ),
        (
            "64:ff9b:1::/48",
            &["64:ff9b:1::1", "64:ff9b:1:ffff::808:808"],
            &[],
        ),
        ("100::/64", &["100::1", "100::ffff:ffff:ffff:ffff"], &[]),
        (
            "100:0:0:1::/64",
            &["100:0:0:1::1", "100::1:ffff:ffff:ffff:ffff"],
            &[],
        ),
        (
            "2001::/23",
            &[
                "2001:5::1",
                "2001:100::1",
                "2001:1ff:ffff::1",
                "2001:1::4",
                "2001:4:113::1",
                "2001:40::1",
            ],
            &["2001:200::1", "2001:200::"],
        ),
        (
            "2001::/32 Teredo",
            &["2001::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"],
            &[],
        ),
        (
            "2001:2::/48 benchmarking",
            &["2001:2::1", "2001:2:0:ffff::1"],
            &[],
        ),
        ("2001:10::/28 ORCHID", &["2001:10::1", "2001:1f::1"], &[]),
        (
            "2001::/23 exceptions (globally reachable)",
            &[],
            &[
                "2001:1::1",
                "2001:1::2",
                "2001:1::3",
                "2001:3::1",
                "2001:3:ffff::1",
                "2001:4:112::1",
                "2001:4:112:ffff::1",
                "2001:20::1",
                "2001:2f:ffff::1",
                "2001:30::1",
                "2001:3f:ffff::1",
            ],
        ),
        (
            "2001:db8::/32",
            &["2001:db8::1", "2001:db8:ffff::1"],
            &["2001:db7:ffff::1", "2001:db9::1"],
        ),
        (
            "2002::/16 6to4 (tunnel; the IPv4 address is named)",
            &["2002:808:808::1", "2002:a00:1::", "2002:7f00:1::"],
            &["2003::1"],
        ),
        (
            "3fff::/20",
            &["3fff::1", "3fff:fff:ffff::1"],
            &["3fff:1000::1", "3ffe:ffff::1"],
        ),
        ("5f00::/16", &["5f00::1", "5f00:ffff::1"], &[]),
        ("fc00::/7", &["fc00::1", "fd00::1", "fdff:ffff::1"], &[]),
        ("fe80::/10", &["fe80::1", "febf:ffff::1"], &[]),
        ("fec0::/10", &["fec0::1", "feff:ffff::1"], &[]),
        ("ff00::/8", &["ff02::1", "ff0e::1", "ffff::1"], &[]),
        (
            "outside 2000::/3",
            &["1::1", "1fff:ffff::1", "4000::1", "8000::1", "e000::1"],
            &["2000::1", "2600::1", "3ffd:ffff::1"],
        ),
    ];
    let policy = UrlPolicy::new(&NetworkSettings::default());
    let r = resolver();
    let mut wrong = Vec::new();
    for (range, inside, outside) in cases {
        for a in *inside {
            let addr: IpAddr = a.parse().unwrap();
            let v = policy.check(&format!("http://[{a}]/"), &r).verdict;
            if ip::blocked(addr).is_none() || v.allowed {
                wrong.push(format!("{range}: {a} should be refused ({})", v.reason));
            }
        }
        for a in *outside {
            let addr: IpAddr = a.parse().unwrap();
            let v = policy.check(&format!("http://[{a}]/"), &r).verdict;
            if let Some(why) = ip::blocked(addr) {
                wrong.push(format!("{range}: {a} should be public, refused as {why}"));
            } else if !v.allowed {
                wrong.push(format!("{range}: {a} should be allowed ({})", v.reason));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Reasons name the embedded IPv4 address and what it is.
    let why = ip::blocked("::ffff:0:a00:1".parse().unwrap()).unwrap();
    assert!(
        why.contains("IPv4-translated") && why.contains("10.0.0.1") && why.contains("private"),
        "{why}"
    );
    let why = ip::blocked("::ffff:8.8.8.8".parse().unwrap()).unwrap();
    assert!(
        why.contains("IPv4-mapped") && why.contains("use 8.8.8.8 itself"),
        "{why}"
    );
    let why = ip::blocked("2002:808:808::1".parse().unwrap()).unwrap();
    assert!(why.contains("6to4") && why.contains("8.8.8.8"), "{why}");
}

#[cfg(feature = "fetch")]
mod fetching {
    use super::*;
    use agent_sandbox::urls::fetch::{FetchError, FetchLimits, fetch};
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A loopback server answering each connection with the next canned response.
    fn server(responses: Vec<String>) -> (u16, std::thread::JoinHandle<Vec<String>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for resp in responses {
                let (s, _) = l.accept().unwrap();
                let mut reader = BufReader::new(s.try_clone().unwrap());
                let mut first = String::new();
                reader.read_line(&mut first).unwrap();
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                }
                seen.push(first.trim().to_owned());
                let mut s = s;
                s.write_all(resp.as_bytes()).unwrap();
            }
            seen
        });
        (port, h)
    }

    fn redirect(to: &str) -> String {
        format!(
            "HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
    }

    fn ok(body: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    fn setup() -> (UrlPolicy, StaticResolver) {
        let mut r = resolver();
        // `site.test` is pinned to the loopback server, which the policy treats as the one
        // trusted address; DNS for it is never asked.
        r.entries
            .insert("site.test".into(), vec!["127.0.0.1".parse().unwrap()]);
        let policy = UrlPolicy::new(&NetworkSettings::default())
            .exempt_address("127.0.0.1".parse().unwrap());
        (policy, r)
    }

    #[tokio::test]
    async fn redirects_to_private_addresses_are_refused_at_the_hop() {
        for target in [
            "http://private.test/".to_owned(),
            "http://10.0.0.1/".to_owned(),
            "http://169.254.169.254/latest".to_owned(),
            "http://[::ffff:127.0.0.2]/".to_owned(),
            "file:///etc/passwd".to_owned(),
        ] {
            let (port, server) = server(vec![redirect(&target)]);
            let (policy, r) = setup();
            let err = fetch(
                &policy,
                &r,
                &format!("http://site.test:{port}/start"),
                FetchLimits::default(),
            )
            .await
            .unwrap_err();
            assert!(matches!(err, FetchError::Refused { .. }), "{target}: {err}");
            assert_eq!(server.join().unwrap(), ["GET /start HTTP/1.1"]);
        }
    }

    #[tokio::test]
    async fn allowed_redirects_are_followed_pinned_and_capped() {
        let (port, server) = server(vec![redirect("/second"), ok(&"x".repeat(1000))]);
        let (policy, r) = setup();
        let resp = fetch(
            &policy,
            &r,
            &format!("http://site.test:{port}/first"),
            FetchLimits {
                max_body_bytes: 100,
                ..FetchLimits::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(resp.status, 200);
        assert_eq!(resp.hops.len(), 2);
        assert_eq!(resp.body.len(), 100);
        assert!(resp.truncated);
        assert_eq!(
            server.join().unwrap(),
            ["GET /first HTTP/1.1", "GET /second HTTP/1.1"]
        );
    }

    #[tokio::test]
    async fn redirect_loops_stop_after_ten_hops() {
        let (port, server) = server((0..11).map(|_| redirect("/again")).collect());
        let (policy, r) = setup();
        let err = fetch(
            &policy,
            &r,
            &format!("http://site.test:{port}/"),
            FetchLimits::default(),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, FetchError::TooManyRedirects), "{err}");
        assert_eq!(server.join().unwrap().len(), 11);
    }
}
