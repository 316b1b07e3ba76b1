//! Where a PostgreSQL session store lives and how it connects ([`PgOptions`]): the server URL
//! (never carrying a password), the environment variable the password comes from, the writer
//! lease, the connection count, and TLS (`sslmode`, `sslrootcert`; see [`super::tls`] for how
//! each mode is read).

use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode as DriverSslMode};

use super::tls::{Connector, Roots, SslMode};
use crate::error::{Result, StoreError};

/// The environment variable the password is read from unless another is named: libpq's own.
pub const DEFAULT_PASSWORD_ENV: &str = "PGPASSWORD";

/// How long a writer's lease lasts without renewal, unless set otherwise. A writer renews it on
/// every append and every third of this while idle; a crashed writer's host keeps it no longer.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The shortest and longest leases [`PgOptions::lease`] accepts.
pub const LEASE_RANGE: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(3600));

/// How to reach a PostgreSQL session store.
///
/// ```
/// use agent_store::postgres::PgOptions;
/// let options = PgOptions::new("postgres://agent@db.internal:5432/agent")?
///     .password_env("AGENT_DB_PASSWORD");
/// assert_eq!(options.redacted(), "postgres://agent@db.internal:5432/agent");
/// // A password in the URL is refused: URLs end up in settings files and process lists.
/// assert!(PgOptions::new("postgres://agent:secret@db/agent").is_err());
/// // TLS is `sslmode=verify-full` (or `require`, the same here) with `sslrootcert=FILE` or the
/// // system's roots; a certificate is never accepted unverified, and roots that cannot be read
/// // are refused here, not at the first connection.
/// assert!(PgOptions::new("postgres://agent@db/agent?sslmode=verify-full&sslrootcert=/no/ca.pem")
///     .is_err());
/// # Ok::<(), agent_store::StoreError>(())
/// ```
#[derive(Clone)]
pub struct PgOptions {
    pub(crate) config: tokio_postgres::Config,
    /// Plain, or TLS with the verifier `sslmode` and `sslrootcert` ask for.
    pub(crate) connector: Connector,
    pub(crate) redacted: String,
    pub(crate) password_env: String,
    pub(crate) lease: Duration,
    pub(crate) max_connections: usize,
}

impl std::fmt::Debug for PgOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The config never holds a password here until `connect` adds it to its own copy; the
        // redacted URL is what is shown anyway.
        f.debug_struct("PgOptions")
            .field("url", &self.redacted)
            .field("tls", &self.connector)
            .field("password_env", &self.password_env)
            .field("lease", &self.lease)
            .field("max_connections", &self.max_connections)
            .finish()
    }
}

impl PgOptions {
    /// Options for the server at `url`: `postgres://[user@]host[:port]/database[?param=value&...]`
    /// (or libpq's `host=... dbname=...` form; a `host` that is a directory is a Unix socket).
    ///
    /// TLS is asked for with `sslmode`: `disable`, `allow` and `prefer` (the default) connect
    /// without it (a certificate is never accepted unverified, so `prefer` never uses an
    /// unverified session: it means plain here); `require` and `verify-full` use TLS, verify the
    /// server's certificate chain against the roots and check that it names the host;
    /// `verify-ca` verifies the chain only. The roots are `sslrootcert=FILE` (PEM, one or more
    /// CA certificates) or `sslrootcert=system` (the operating system's; the default). A
    /// `sslrootcert` without `sslmode` means `verify-full`.
    ///
    /// # Errors
    /// [`StoreError::Config`] when `url` does not parse, carries a password (put it in
    /// `$PGPASSWORD` or the variable named by [`PgOptions::password_env`]), names no database,
    /// names an unknown `sslmode`, gives `sslrootcert` to a mode without TLS, asks for TLS over
    /// a Unix socket or to a `hostaddr` without a `host` name, or names roots that cannot be
    /// read or hold no certificate.
    pub fn new(url: &str) -> Result<Self> {
        let shown = shown_url(url);
        let params = TlsParams::take(url, &shown)?;
        let config = tokio_postgres::Config::from_str(&params.rest).map_err(|e| {
            StoreError::Config(format!(
                "the sessions URL `{shown}` is not a PostgreSQL URL ({e}); write it as \
                 postgres://USER@HOST:PORT/DATABASE"
            ))
        })?;
        if config.get_password().is_some() {
            return Err(StoreError::Config(format!(
                "the sessions URL `{shown}` carries a password; URLs end up in settings files, \
                 shell history and process lists: remove it from the URL and put it in \
                 ${DEFAULT_PASSWORD_ENV} (or the variable `sessions.passwordEnv` names)"
            )));
        }
        if config.get_dbname().is_none_or(str::is_empty) {
            return Err(StoreError::Config(format!(
                "the sessions URL `{shown}` names no database; add it as the path: \
                 postgres://USER@HOST/DATABASE"
            )));
        }
        let mode = params.mode(&shown)?;
        #[cfg(unix)]
        if mode.uses_tls()
            && config
                .get_hosts()
                .iter()
                .any(|h| matches!(h, Host::Unix(_)))
        {
            return Err(StoreError::Config(format!(
                "the sessions URL `{shown}` asks for TLS (sslmode={}) to a Unix socket, which \
                 PostgreSQL does not offer; name the server by host name for TLS, or leave \
                 sslmode out for the socket",
                mode.name()
            )));
        }
        if mode.uses_tls() && config.get_hosts().is_empty() {
            return Err(StoreError::Config(format!(
                "the sessions URL `{shown}` asks for TLS (sslmode={}) but gives only hostaddr; \
                 add host=NAME with the name the server's certificate carries (the connection \
                 still goes to hostaddr)",
                mode.name()
            )));
        }
        let roots = match params.rootcert.as_deref() {
            None | Some("system") => Roots::System,
            Some(path) => Roots::File(path.into()),
        };
        let connector = Connector::new(mode, roots, &shown)?;
        let mut config = config;
        config.ssl_mode(if mode.uses_tls() {
            DriverSslMode::Require
        } else {
            DriverSslMode::Disable
        });
        let mut redacted = redact(&config);
        if let Some(mode) = connector.tls_mode() {
            redacted += &format!("?sslmode={}", mode.name());
        }
        Ok(Self {
            config,
            connector,
            redacted,
            password_env: DEFAULT_PASSWORD_ENV.to_owned(),
            lease: DEFAULT_LEASE,
            max_connections: 4,
        })
    }

    /// Reads the password from the environment variable `name` (default `PGPASSWORD`) when
    /// connecting. The password is never logged or shown.
    #[must_use]
    pub fn password_env(mut self, name: impl Into<String>) -> Self {
        self.password_env = name.into();
        self
    }

    /// How long a writer's lease lasts without renewal (default 30 s, within [`LEASE_RANGE`]).
    ///
    /// # Errors
    /// [`StoreError::Config`] outside [`LEASE_RANGE`].
    pub fn lease(mut self, lease: Duration) -> Result<Self> {
        if lease < LEASE_RANGE.0 || lease > LEASE_RANGE.1 {
            return Err(StoreError::Config(format!(
                "a writer lease of {} s is out of range; choose {} to {} seconds",
                lease.as_secs_f64(),
                LEASE_RANGE.0.as_secs(),
                LEASE_RANGE.1.as_secs()
            )));
        }
        self.lease = lease;
        Ok(self)
    }

    /// At most this many connections at once (default 4, at least 1), plus the one that holds
    /// this store's presence (see docs/sessions.md, "Locking").
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// The server as a URL without any password: what errors and logs show.
    pub fn redacted(&self) -> &str {
        &self.redacted
    }

    /// The name of the environment variable the password comes from.
    pub fn password_env_name(&self) -> &str {
        &self.password_env
    }

    /// The configuration to connect with: the password from the environment, if set.
    pub(crate) fn connect_config(&self) -> tokio_postgres::Config {
        let mut config = self.config.clone();
        if let Ok(password) = std::env::var(&self.password_env)
            && !password.is_empty()
        {
            config.password(password);
        }
        if config.get_application_name().is_none() {
            config.application_name("agent-sessions");
        }
        config.keepalives(true);
        config.keepalives_idle(Duration::from_secs(10));
        config.connect_timeout(Duration::from_secs(10));
        config
    }
}

/// The URL as given, with anything between `://user:` and `@` replaced, for messages about a URL
/// that did not parse.
fn shown_url(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((auth, tail)) = rest.split_once('@')
    {
        let user = auth.split(':').next().unwrap_or_default();
        let hidden = if auth.contains(':') { ":***" } else { "" };
        return format!("{scheme}://{user}{hidden}@{tail}");
    }
    if url.contains("password") {
        return "(a key=value connection string with a password)".to_owned();
    }
    url.to_owned()
}

/// `postgres://user@host:port/dbname` from a parsed config (no password, no other parameters).
fn redact(config: &tokio_postgres::Config) -> String {
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                Host::Unix(path) => path.display().to_string().replace('/', "%2F"),
            };
            match ports.get(i).or(ports.first()) {
                Some(port) => format!("{host}:{port}"),
                None => host,
            }
        })
        .collect();
    let db = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{}/{db}", hosts.join(","))
}

/// `sslmode` and `sslrootcert` taken out of a URL or key=value string (the driver knows neither
/// `sslrootcert` nor the `verify-*` modes), and the rest for the driver to parse.
#[derive(Debug, PartialEq, Eq)]
struct TlsParams {
    rest: String,
    sslmode: Option<String>,
    rootcert: Option<String>,
}

impl TlsParams {
    /// Splits `url` (`postgres://...?k=v&...`, percent-decoded, or libpq's `k=v k='v'` form).
    fn take(url: &str, shown: &str) -> Result<Self> {
        let mut params = Self {
            rest: url.to_owned(),
            sslmode: None,
            rootcert: None,
        };
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let Some((base, query)) = url.split_once('?') else {
                return Ok(params);
            };
            let mut kept = Vec::new();
            for pair in query.split('&') {
                let Some((key, value)) = pair.split_once('=') else {
                    kept.push(pair);
                    continue;
                };
                match percent_decode(key, shown)?.as_str() {
                    "sslmode" => params.sslmode = Some(percent_decode(value, shown)?),
                    "sslrootcert" => params.rootcert = Some(percent_decode(value, shown)?),
                    _ => kept.push(pair),
                }
            }
            params.rest = if kept.is_empty() {
                base.to_owned()
            } else {
                format!("{base}?{}", kept.join("&"))
            };
        } else if let Some(pairs) = key_values(url) {
            let mut kept = Vec::new();
            for (key, value, raw) in pairs {
                match key {
                    "sslmode" => params.sslmode = Some(value),
                    "sslrootcert" => params.rootcert = Some(value),
                    _ => kept.push(raw),
                }
            }
            params.rest = kept.join(" ");
        }
        // A key=value string that does not scan is left whole: the driver says what is wrong.
        Ok(params)
    }

    /// The mode asked for: `sslmode`, else `verify-full` when roots are given, else `prefer`.
    fn mode(&self, shown: &str) -> Result<SslMode> {
        let mode = match self.sslmode.as_deref() {
            Some(name) => SslMode::parse(name).ok_or_else(|| {
                StoreError::Config(format!(
                    "the sessions URL `{shown}` has sslmode={name}, which is not one of disable, \
                     allow, prefer, require, verify-ca, verify-full; for TLS write \
                     sslmode=verify-full"
                ))
            })?,
            None if self.rootcert.is_some() => SslMode::VerifyFull,
            None => SslMode::Prefer,
        };
        if let Some(root) = &self.rootcert
            && !mode.uses_tls()
        {
            return Err(StoreError::Config(format!(
                "the sessions URL `{shown}` gives sslrootcert={root} with sslmode={}, which \
                 connects without TLS here (a certificate is never accepted unverified, so \
                 disable, allow and prefer mean a plain connection); write sslmode=verify-full \
                 (or verify-ca) to use TLS, or leave sslrootcert out",
                mode.name()
            )));
        }
        Ok(mode)
    }
}

/// `%XX` sequences decoded (as the driver decodes URL parameters).
fn percent_decode(s: &str, shown: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| {
        StoreError::Config(format!(
            "the sessions URL `{shown}` has a parameter `{s}` that is not UTF-8 once \
             percent-decoded; write it as UTF-8"
        ))
    })
}

/// libpq's `key = value` pairs (values bare or in single quotes, `\` escaping the next
/// character): each key, its value, and the pair's text as written. `None` when the string does
/// not scan.
fn key_values(s: &str) -> Option<Vec<(&str, String, &str)>> {
    let mut pairs = Vec::new();
    let mut chars = s.char_indices().peekable();
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else {
            return Some(pairs);
        };
        let mut key_end = start;
        while let Some((i, c)) = chars.next_if(|(_, c)| !c.is_whitespace() && *c != '=') {
            key_end = i + c.len_utf8();
        }
        if key_end == start {
            return None;
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        chars.next_if(|(_, c)| *c == '=')?;
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        let mut end = s.len();
        let quoted = chars.next_if(|(_, c)| *c == '\'').is_some();
        loop {
            let Some(&(i, c)) = chars.peek() else {
                if quoted {
                    return None;
                }
                break;
            };
            if (quoted && c == '\'') || (!quoted && c.is_whitespace()) {
                end = if quoted { i + 1 } else { i };
                if quoted {
                    chars.next();
                }
                break;
            }
            chars.next();
            if c == '\\' {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            } else {
                value.push(c);
            }
        }
        pairs.push((&s[start..key_end], value, &s[start..end]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(url: &str) -> TlsParams {
        TlsParams::take(url, url).unwrap()
    }

    fn config_error(url: &str) -> String {
        match PgOptions::new(url) {
            Err(StoreError::Config(m)) => m,
            other => panic!("expected a Config error for {url}, got {other:?}"),
        }
    }

    #[test]
    fn url_form_takes_out_the_tls_parameters_percent_decoded() {
        let p = params(
            "postgres://agent@db:5433/agent?application_name=x&sslmode=verify-ca\
             &sslrootcert=%2Fetc%2Fmy%20ca.pem&connect_timeout=5",
        );
        assert_eq!(
            p,
            TlsParams {
                rest: "postgres://agent@db:5433/agent?application_name=x&connect_timeout=5".into(),
                sslmode: Some("verify-ca".into()),
                rootcert: Some("/etc/my ca.pem".into()),
            }
        );
        let only = params("postgresql://agent@db/agent?ssl%6Dode=require");
        assert_eq!(only.rest, "postgresql://agent@db/agent");
        assert_eq!(only.sslmode.as_deref(), Some("require"));
        let none = params("postgres://agent@db/agent");
        assert_eq!(none.rest, "postgres://agent@db/agent");
        assert_eq!((none.sslmode, none.rootcert), (None, None));
    }

    #[test]
    fn key_value_form_takes_out_the_tls_parameters_unquoted() {
        let p = params(
            "host=db dbname=agent sslmode = verify-full sslrootcert='/etc/it\\'s ca.pem' \
             user=agent",
        );
        assert_eq!(
            p,
            TlsParams {
                rest: "host=db dbname=agent user=agent".into(),
                sslmode: Some("verify-full".into()),
                rootcert: Some("/etc/it's ca.pem".into()),
            }
        );
        let escaped = params("host=db sslrootcert=/a\\ b.pem dbname=x");
        assert_eq!(escaped.rootcert.as_deref(), Some("/a b.pem"));
        assert_eq!(escaped.rest, "host=db dbname=x");
        // What does not scan is left whole for the driver to report.
        let broken = params("host=db sslmode='verify-full");
        assert_eq!(broken.rest, "host=db sslmode='verify-full");
        assert!(PgOptions::new("host=db dbname=x sslmode='verify-full").is_err());
    }

    #[test]
    fn plain_modes_connect_without_tls_and_show_no_parameters() {
        for url in [
            "postgres://agent@db:5432/agent",
            "postgres://agent@db:5432/agent?sslmode=disable",
            "postgres://agent@db:5432/agent?sslmode=allow",
            "postgres://agent@db:5432/agent?sslmode=prefer&application_name=x",
            "host=db port=5432 user=agent dbname=agent sslmode=prefer",
        ] {
            let o = PgOptions::new(url).unwrap();
            assert!(matches!(o.connector, Connector::Plain), "{url}");
            assert_eq!(o.config.get_ssl_mode(), DriverSslMode::Disable, "{url}");
            assert_eq!(o.redacted(), "postgres://agent@db:5432/agent", "{url}");
        }
    }

    #[test]
    fn unknown_sslmode_is_refused_naming_the_modes() {
        let m = config_error("postgres://agent@db:5432/agent?sslmode=verify_full");
        assert!(
            m.contains("sslmode=verify_full") && m.contains("verify-full"),
            "{m}"
        );
        let m = config_error("host=db dbname=agent sslmode=on");
        assert!(m.contains("sslmode=on"), "{m}");
    }

    #[test]
    fn roots_that_cannot_be_read_are_refused_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let m = config_error(&format!(
            "postgres://agent@db:5432/agent?sslmode=verify-full&sslrootcert={}",
            missing.display()
        ));
        assert!(
            m.contains(&missing.display().to_string()) && m.contains("PEM file"),
            "{m}"
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let m = config_error(&format!(
            "host=db dbname=agent sslmode=require sslrootcert={}",
            empty.display()
        ));
        assert!(
            m.contains(&empty.display().to_string()) && m.contains("holds no certificate"),
            "{m}"
        );
        let garbled = dir.path().join("garbled.pem");
        std::fs::write(
            &garbled,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let m = config_error(&format!(
            "postgres://agent@db:5432/agent?sslrootcert={}",
            garbled.display()
        ));
        assert!(m.contains("not a usable CA certificate"), "{m}");
    }

    #[test]
    fn roots_without_tls_and_tls_to_a_socket_or_a_bare_hostaddr_are_refused() {
        let m = config_error("postgres://agent@db:5432/agent?sslmode=prefer&sslrootcert=/ca.pem");
        assert!(
            m.contains("sslmode=prefer") && m.contains("verify-full"),
            "{m}"
        );
        let m = config_error("host=/var/run/postgresql dbname=agent sslmode=verify-full");
        assert!(m.contains("Unix socket"), "{m}");
        let m = config_error("hostaddr=127.0.0.1 dbname=agent sslmode=verify-full");
        assert!(m.contains("host=NAME"), "{m}");
    }

    #[test]
    fn tls_modes_show_only_the_sslmode() {
        // The system's roots: skipped where the machine has none (a minimal container).
        if rustls_native_certs::load_native_certs().certs.is_empty() {
            eprintln!("no system CA certificates here: the TLS redaction test is skipped");
            return;
        }
        for (url, shown) in [
            (
                "postgres://agent@db:5433/agent?sslmode=require&application_name=x",
                "postgres://agent@db:5433/agent?sslmode=require",
            ),
            (
                "postgres://agent@db:5432/agent?sslrootcert=system&sslmode=verify-ca",
                "postgres://agent@db:5432/agent?sslmode=verify-ca",
            ),
            (
                "host=db port=5432 user=agent dbname=agent sslrootcert=system",
                "postgres://agent@db:5432/agent?sslmode=verify-full",
            ),
        ] {
            let o = PgOptions::new(url).unwrap();
            assert_eq!(o.redacted(), shown);
            assert_eq!(o.config.get_ssl_mode(), DriverSslMode::Require, "{url}");
            assert!(format!("{o:?}").contains("Tls"), "{url}");
        }
    }
}
