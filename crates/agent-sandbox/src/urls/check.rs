//! The URL policy: scheme, host spelling, domain lists, resolution, and every resolved address.
//!
//! Host spellings are normalised by the WHATWG URL parser first (`http://2130706433/`,
//! `http://0x7f.1/`, `http://017700000001/` and `http://127.1/` all become `127.0.0.1`; IDN
//! hosts become punycode; a trailing dot is dropped for matching), then literal addresses are
//! judged directly and names are resolved: **every** address a name resolves to must be public,
//! and a fetch then connects only to those checked addresses (no DNS-rebinding gap).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use url::{Host, Url};

use super::ip;
use crate::settings::NetworkSettings;
use crate::verdict::Verdict;

/// Resolves host names.
pub trait Resolver: Send + Sync {
    /// The addresses of `host`.
    ///
    /// # Errors
    /// A one-line message when the name does not resolve.
    fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, String>;
}

/// The system resolver (`getaddrinfo`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, String> {
        (host, 0u16)
            .to_socket_addrs()
            .map(|a| a.map(|s| s.ip()).collect())
            .map_err(|e| format!("cannot resolve {host}: {e}"))
    }
}

/// Fixed answers for some names (like curl's `--resolve`), the system resolver for the rest,
/// or nothing else when `offline`.
#[derive(Clone, Debug, Default)]
pub struct StaticResolver {
    /// Name → addresses.
    pub entries: HashMap<String, Vec<IpAddr>>,
    /// Refuse names that are not listed instead of asking the system.
    pub offline: bool,
}

impl Resolver for StaticResolver {
    fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, String> {
        if let Some(a) = self.entries.get(&host.to_ascii_lowercase()) {
            return Ok(a.clone());
        }
        if self.offline {
            return Err(format!("{host} is not in the resolver's fixed entries"));
        }
        SystemResolver.resolve(host)
    }
}

/// A URL verdict with what a fetch must connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlVerdict {
    /// The verdict.
    pub verdict: Verdict,
    /// The normalised URL, when it parsed.
    pub url: Option<Url>,
    /// The checked addresses (with the URL's port) a fetch must use: connecting anywhere else
    /// would reopen the DNS-rebinding gap.
    pub addrs: Vec<SocketAddr>,
}

/// Compiled network settings.
#[derive(Clone, Debug, Default)]
pub struct UrlPolicy {
    allowed: Option<Vec<String>>,
    denied: Vec<String>,
    exempt: Vec<IpAddr>,
}

/// `*.x.com` matches every subdomain of `x.com` (not `x.com` itself); any other pattern matches
/// exactly. Both sides are lowercase without a trailing dot.
pub fn domain_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.trim_end_matches('.').to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(suffix) => {
            host.len() > suffix.len() + 1
                && host.ends_with(&suffix)
                && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
        }
        None => host == pattern,
    }
}

impl UrlPolicy {
    /// Compiles `network`.
    pub fn new(network: &NetworkSettings) -> Self {
        Self {
            allowed: network.allowed_domains.clone(),
            denied: network.denied_domains.clone(),
            exempt: Vec::new(),
        }
    }

    /// Lets one otherwise refused address through (an intranet service the host trusts, or a
    /// loopback test server). Every other check still applies.
    #[must_use]
    pub fn exempt_address(mut self, ip: IpAddr) -> Self {
        self.exempt.push(ip);
        self
    }

    /// Checks `url`, resolving its host with `resolver`.
    pub fn check(&self, url: &str, resolver: &dyn Resolver) -> UrlVerdict {
        let deny = |reason: String, rule: Option<String>, url: Option<Url>| UrlVerdict {
            verdict: Verdict::deny(reason, rule),
            url,
            addrs: Vec::new(),
        };
        let parsed = match Url::parse(url.trim()) {
            Ok(u) => u,
            Err(e) => return deny(format!("{url:?} is not a valid URL: {e}"), None, None),
        };
        if !matches!(parsed.scheme(), "http" | "https") {
            return deny(
                format!(
                    "scheme `{}` is not allowed; only http and https",
                    parsed.scheme()
                ),
                Some("built-in: schemes".into()),
                Some(parsed),
            );
        }
        let Some(port) = parsed.port_or_known_default() else {
            return deny("the URL has no port".into(), None, Some(parsed));
        };
        let (name, literal): (String, Option<IpAddr>) = match parsed.host() {
            None => return deny("the URL has no host".into(), None, Some(parsed)),
            Some(Host::Ipv4(v4)) => (v4.to_string(), Some(IpAddr::V4(v4))),
            Some(Host::Ipv6(v6)) => (v6.to_string(), Some(IpAddr::V6(v6))),
            Some(Host::Domain(d)) => (d.trim_end_matches('.').to_ascii_lowercase(), None),
        };
        if name.is_empty() {
            return deny("the URL has an empty host".into(), None, Some(parsed));
        }
        if let Some(d) = self.denied.iter().find(|d| domain_matches(d, &name)) {
            return deny(
                format!("{name} is denied"),
                Some(format!("network.deniedDomains: {d}")),
                Some(parsed),
            );
        }
        if let Some(allowed) = &self.allowed
            && !allowed.iter().any(|d| domain_matches(d, &name))
        {
            return deny(
                format!("{name} is not in the allowed domains"),
                Some("network.allowedDomains".into()),
                Some(parsed),
            );
        }
        if literal.is_none() && (name == "localhost" || name.ends_with(".localhost")) {
            return deny(
                format!("{name} is a loopback name"),
                Some("built-in: loopback".into()),
                Some(parsed),
            );
        }
        let addrs = match literal {
            Some(ip) => vec![ip],
            None => match resolver.resolve(&name) {
                Ok(a) if !a.is_empty() => a,
                Ok(_) => return deny(format!("{name} resolves to no address"), None, Some(parsed)),
                Err(e) => return deny(e, None, Some(parsed)),
            },
        };
        for a in &addrs {
            if let Some(why) = ip::blocked(*a).filter(|_| !self.exempt.contains(a)) {
                return deny(
                    format!("{name} resolves to {a}, a {why} address"),
                    Some("built-in: non-public address".into()),
                    Some(parsed),
                );
            }
        }
        UrlVerdict {
            verdict: Verdict::allow(
                format!(
                    "{name} resolves to public address(es) {}",
                    addrs
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ),
            addrs: addrs
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect(),
            url: Some(parsed),
        }
    }
}
