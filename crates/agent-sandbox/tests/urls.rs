//! The SSRF corpus: every refused range and odd spelling, domain lists, and (with `fetch`)
//! redirects from an allowed host to private addresses through a loopback server, pinning and
//! size caps.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

use std::collections::HashMap;
use std::net::IpAddr;

use agent_sandbox::settings::NetworkSettings;
use agent_sandbox::urls::{StaticResolver, UrlPolicy, domain_matches};

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
