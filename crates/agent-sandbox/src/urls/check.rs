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
    allowed: Option<Vec<Entry>>,
    denied: Vec<Entry>,
    /// Entries that could not be normalised (`network.<key>[i]`, why): while there is one,
    /// every URL is refused, naming it.
    invalid: Vec<(String, String)>,
    exempt: Vec<IpAddr>,
}

/// A host as URLs and domain-list entries are compared: IDNA to punycode, ASCII lowercase,
/// trailing dots dropped; addresses in canonical form (see [`ip::canonical`]).
#[derive(Clone, Debug, PartialEq, Eq)]
enum NormalHost {
    Name(String),
    Addr(IpAddr),
}

impl NormalHost {
    /// What the WHATWG URL parser made of a host.
    fn from_url(host: Host<&str>) -> Self {
        match host {
            Host::Ipv4(v4) => Self::Addr(IpAddr::V4(v4)),
            Host::Ipv6(v6) => Self::Addr(ip::canonical(IpAddr::V6(v6))),
            Host::Domain(d) => Self::Name(d.trim_end_matches('.').to_ascii_lowercase()),
        }
    }

    /// A host written alone (`example.com`, `bücher.example`, `10.0.0.1`, `[::1]`, `::1`), put
    /// through the same parser as a URL's host.
    fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("it is empty".into());
        }
        // A bare IPv6 address, which the URL parser only takes in brackets.
        if let Ok(v6) = text.parse::<std::net::Ipv6Addr>() {
            return Ok(Self::Addr(ip::canonical(IpAddr::V6(v6))));
        }
        if text.contains("://") {
            return Err("it is a URL; write its host alone, e.g. `example.com`".into());
        }
        let after_host = match text.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or("", |(_, after)| after),
            None => text.rsplit_once(':').map_or("", |(_, port)| port),
        };
        let has_port = if text.starts_with('[') {
            !after_host.is_empty()
        } else {
            text.contains(':') && after_host.bytes().all(|b| b.is_ascii_digit())
        };
        if has_port {
            return Err(
                "ports are not supported; write the host alone (an entry applies to every port)"
                    .into(),
            );
        }
        let host = Host::parse(text).map_err(|e| format!("it is not a valid host ({e})"))?;
        let host = Self::from_url(match &host {
            Host::Domain(d) => Host::Domain(d.as_str()),
            Host::Ipv4(v4) => Host::Ipv4(*v4),
            Host::Ipv6(v6) => Host::Ipv6(*v6),
        });
        if host == Self::Name(String::new()) {
            return Err("it has no name, only dots".into());
        }
        Ok(host)
    }

    fn show(&self) -> String {
        match self {
            Self::Name(n) => n.clone(),
            Self::Addr(IpAddr::V4(v4)) => v4.to_string(),
            Self::Addr(IpAddr::V6(v6)) => format!("[{v6}]"),
        }
    }
}

/// One compiled domain-list entry.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Pattern {
    /// `*.suffix`: every subdomain of `suffix`, not `suffix` itself.
    Subdomains(String),
    /// One name or address.
    Exact(NormalHost),
}

/// A domain-list entry as written, and what it matches.
#[derive(Clone, Debug)]
struct Entry {
    written: String,
    pattern: Pattern,
}

impl Pattern {
    fn parse(entry: &str) -> Result<Self, String> {
        let text = entry.trim();
        let (wildcard, rest) = match text.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if rest.contains('*') {
            return Err(
                "only a leading `*.` wildcard is supported (`*.example.com`: every subdomain)"
                    .into(),
            );
        }
        match (wildcard, NormalHost::parse(rest)?) {
            (true, NormalHost::Name(suffix)) => Ok(Self::Subdomains(suffix)),
            (true, NormalHost::Addr(_)) => {
                Err("a `*.` wildcard cannot apply to an IP address".into())
            }
            (false, host) => Ok(Self::Exact(host)),
        }
    }

    fn show(&self) -> String {
        match self {
            Self::Subdomains(suffix) => format!("*.{suffix}"),
            Self::Exact(host) => host.show(),
        }
    }

    /// Whether `host` is what this entry names. A deny entry (`deny`) naming an address also
    /// matches every IPv6 form that reaches the same IPv4 host (NAT64, 6to4, Teredo, ...), and
    /// the reverse; an allow entry matches the canonical address only.
    fn matches(&self, host: &NormalHost, deny: bool) -> bool {
        match (self, host) {
            (Self::Subdomains(suffix), NormalHost::Name(name)) => {
                name.len() > suffix.len() + 1
                    && name.ends_with(suffix.as_str())
                    && name.as_bytes()[name.len() - suffix.len() - 1] == b'.'
            }
            (Self::Exact(NormalHost::Name(a)), NormalHost::Name(b)) => a == b,
            (Self::Exact(NormalHost::Addr(a)), NormalHost::Addr(b)) => {
                a == b
                    || (deny
                        && ip::reached_v4(*a)
                            .zip(ip::reached_v4(*b))
                            .is_some_and(|(x, y)| x == y))
            }
            _ => false,
        }
    }
}

/// The normalised form of a `network.allowedDomains` / `network.deniedDomains` entry: the host
/// put through the URL parser exactly as a URL's host is (IDNA to punycode, ASCII lowercase,
/// `0x7f.1` and other IPv4 spellings made dotted), trailing dots dropped, a leading `*.` kept,
/// IPv4-mapped and IPv4-translated IPv6 addresses written as the IPv4 address, IPv6 in brackets.
///
/// ```
/// use agent_sandbox::urls::normalize_domain_entry;
///
/// assert_eq!(normalize_domain_entry("EVIL.COM.").unwrap(), "evil.com");
/// assert_eq!(normalize_domain_entry("*.Bücher.example").unwrap(), "*.xn--bcher-kva.example");
/// assert_eq!(normalize_domain_entry("::ffff:10.0.0.1").unwrap(), "10.0.0.1");
/// assert!(normalize_domain_entry("xn--a.example").is_err());
/// ```
///
/// # Errors
/// Why the entry is not a host name, `*.` + a host name or an IP address (invalid IDNA, a
/// port, a URL, a wildcard elsewhere than in front).
pub fn normalize_domain_entry(entry: &str) -> Result<String, String> {
    Pattern::parse(entry).map(|p| p.show())
}

/// Whether the domain-list entry `pattern` matches `host` (a host name or IP address, as in a
/// URL). Both are normalised first (see [`normalize_domain_entry`]); `*.x.com` matches every
/// subdomain of `x.com` (not `x.com` itself); any other pattern matches exactly, addresses by
/// their canonical form. An entry that cannot be normalised matches nothing.
pub fn domain_matches(pattern: &str, host: &str) -> bool {
    let (Ok(pattern), Ok(host)) = (Pattern::parse(pattern), NormalHost::parse(host)) else {
        return false;
    };
    pattern.matches(&host, false)
}

fn compile(key: &str, entries: &[String], invalid: &mut Vec<(String, String)>) -> Vec<Entry> {
    let mut out = Vec::with_capacity(entries.len());
    for (i, written) in entries.iter().enumerate() {
        match Pattern::parse(written) {
            Ok(pattern) => out.push(Entry {
                written: written.clone(),
                pattern,
            }),
            Err(why) => invalid.push((format!("network.{key}[{i}]"), entry_problem(written, &why))),
        }
    }
    out
}

/// The problem of a domain-list entry that cannot be normalised, for messages.
pub(crate) fn entry_problem(entry: &str, why: &str) -> String {
    format!(
        "entry {entry:?} cannot be used: {why}; write a host name (`example.com`), `*.` and a \
         host name, or an IP address"
    )
}

impl UrlPolicy {
    /// Compiles `network`: every domain-list entry is normalised once, here (see
    /// [`normalize_domain_entry`]). An entry that cannot be normalised makes the policy refuse
    /// every URL, naming the entry (`SandboxSettings::validate` and settings loading report it
    /// as an error first).
    pub fn new(network: &NetworkSettings) -> Self {
        let mut invalid = Vec::new();
        let denied = compile("deniedDomains", &network.denied_domains, &mut invalid);
        let allowed = network
            .allowed_domains
            .as_ref()
            .map(|a| compile("allowedDomains", a, &mut invalid));
        Self {
            allowed,
            denied,
            invalid,
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

    /// The deny entry matching `host`, if any.
    fn denied_entry(&self, host: &NormalHost) -> Option<&Entry> {
        self.denied.iter().find(|d| d.pattern.matches(host, true))
    }

    /// Whether `ip` is an exempt address (compared in canonical form).
    fn is_exempt(&self, ip: IpAddr) -> bool {
        let ip = ip::canonical(ip);
        self.exempt.iter().any(|e| ip::canonical(*e) == ip)
    }

    /// Checks `url`, resolving its host with `resolver`.
    ///
    /// Order: scheme, host, the domain lists (`deniedDomains` wins; entries and host compared
    /// normalised, addresses in canonical form), `localhost` names, resolution, deny-listed
    /// addresses among the resolved ones, then every address must be public.
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
        let Some(url_host) = parsed.host() else {
            return deny("the URL has no host".into(), None, Some(parsed));
        };
        // The same normalisation as the domain-list entries got in `new`.
        let host = NormalHost::from_url(url_host.clone());
        let literal = match url_host {
            Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
            Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
            Host::Domain(_) => None,
        };
        // As written in messages: the address as the URL gave it, or the normalised name.
        let name = literal.map_or_else(|| host.show(), |ip| ip.to_string());
        if name.is_empty() {
            return deny("the URL has an empty host".into(), None, Some(parsed));
        }
        if let Some((key, problem)) = self.invalid.first() {
            return deny(
                format!("`{key}` {problem}; every URL is refused until the settings are fixed"),
                Some(key.clone()),
                Some(parsed),
            );
        }
        if let Some(d) = self.denied_entry(&host) {
            return deny(
                format!("{name} is denied"),
                Some(format!("network.deniedDomains: {}", d.written)),
                Some(parsed),
            );
        }
        if let Some(allowed) = &self.allowed
            && !allowed.iter().any(|d| d.pattern.matches(&host, false))
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
        if literal.is_none()
            && let Some((a, d)) = addrs.iter().find_map(|a| {
                self.denied_entry(&NormalHost::Addr(ip::canonical(*a)))
                    .map(|d| (a, d))
            })
        {
            return deny(
                format!("{name} resolves to {a}, which is denied"),
                Some(format!("network.deniedDomains: {}", d.written)),
                Some(parsed),
            );
        }
        for a in &addrs {
            if let Some(why) = ip::blocked(*a).filter(|_| !self.is_exempt(*a)) {
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
