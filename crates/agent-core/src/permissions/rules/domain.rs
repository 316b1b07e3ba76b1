//! `WebFetch(domain:...)` specifiers.
//!
//! `domain:example.com` matches that host (case-insensitive, trailing `.` ignored);
//! `domain:*.example.com` matches every subdomain at any depth but not the apex; `domain:*` is
//! every host; a `*` elsewhere matches within one label (`example.*` matches `example.org`, not
//! `example.evil.com`).

/// A compiled domain pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DomainPattern {
    /// `domain:*`
    Any,
    /// `domain:*.example.com`: strict subdomains of the suffix.
    Subdomains(String),
    /// Labels compared one by one, `*` matching within a label.
    Labels(Vec<String>),
}

impl DomainPattern {
    /// Parses the part after `domain:`.
    ///
    /// # Errors
    /// Empty labels, characters that cannot appear in a host name, or non-ASCII text.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let host = spec.trim().trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            return Err(
                "empty domain; write `domain:example.com` or `domain:*.example.com`".into(),
            );
        }
        if host == "*" {
            return Ok(Self::Any);
        }
        if !host.is_ascii() {
            return Err(format!(
                "domain `{host}` is not ASCII; write its punycode form (xn--...)"
            ));
        }
        let check = |labels: &str| -> Result<Vec<String>, String> {
            labels
                .split('.')
                .map(|l| {
                    if l.is_empty() {
                        Err(format!("domain `{host}` has an empty label"))
                    } else if !l.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'*')) {
                        Err(format!("domain `{host}` has a character not allowed in host names (label `{l}`)"))
                    } else {
                        Ok(l.to_owned())
                    }
                })
                .collect()
        };
        if let Some(suffix) = host.strip_prefix("*.") {
            let labels = check(suffix)?;
            if labels.iter().all(|l| !l.contains('*')) {
                return Ok(Self::Subdomains(suffix.to_owned()));
            }
            let mut all = vec!["*".to_owned()];
            all.extend(labels);
            return Ok(Self::Labels(all));
        }
        Ok(Self::Labels(check(&host)?))
    }

    /// Whether a (lowercase, trailing-dot-free) host matches.
    pub fn matches(&self, host: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Subdomains(suffix) => {
                host.len() > suffix.len() + 1
                    && host.ends_with(suffix.as_str())
                    && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
            }
            Self::Labels(labels) => {
                let parts: Vec<&str> = host.split('.').collect();
                parts.len() == labels.len()
                    && labels
                        .iter()
                        .zip(parts)
                        .all(|(p, h)| super::wildcard_match(p, h))
            }
        }
    }
}

/// The host of a URL as domain rules see it: lowercase, no trailing dot. `None` when the URL
/// does not parse or has no host.
pub fn url_host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = parsed.host_str()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some(host.trim_end_matches('.').to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching() {
        let p = |s: &str| DomainPattern::parse(s).unwrap();
        assert!(p("example.com").matches("example.com"));
        assert!(p("Example.COM.").matches("example.com"));
        assert!(!p("example.com").matches("www.example.com"));
        assert!(p("*.example.com").matches("a.b.example.com"));
        assert!(!p("*.example.com").matches("example.com"));
        assert!(!p("*.example.com").matches("badexample.com"));
        assert!(p("example.*").matches("example.org"));
        assert!(!p("example.*").matches("example.evil.com"));
        assert!(p("*").matches("anything.test"));
        assert!(p("api-*.x.io").matches("api-eu.x.io"));
    }

    #[test]
    fn errors() {
        assert!(DomainPattern::parse("").is_err());
        assert!(DomainPattern::parse("a..b").is_err());
        assert!(DomainPattern::parse("a/b").is_err());
        assert!(
            DomainPattern::parse("bücher.de")
                .unwrap_err()
                .contains("punycode")
        );
    }

    #[test]
    fn hosts() {
        assert_eq!(
            url_host("https://Example.COM./x").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            url_host("https://bücher.de/").as_deref(),
            Some("xn--bcher-kva.de")
        );
        assert_eq!(url_host("not a url"), None);
    }
}
