//! Where a PostgreSQL session store lives and how it connects ([`PgOptions`]): the server URL
//! (never carrying a password), the environment variable the password comes from, the writer
//! lease and the connection count.

use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};

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
/// # Ok::<(), agent_store::StoreError>(())
/// ```
#[derive(Clone)]
pub struct PgOptions {
    pub(crate) config: tokio_postgres::Config,
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
    /// # Errors
    /// [`StoreError::Config`] when `url` does not parse, carries a password (put it in
    /// `$PGPASSWORD` or the variable named by [`PgOptions::password_env`]), names no database, or
    /// asks for TLS (`sslmode=require`), which this build does not have.
    pub fn new(url: &str) -> Result<Self> {
        let shown = shown_url(url);
        let config = tokio_postgres::Config::from_str(url).map_err(|e| {
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
        if config.get_ssl_mode() == SslMode::Require {
            return Err(StoreError::Config(format!(
                "the sessions URL `{shown}` asks for TLS (sslmode=require), which this build's \
                 PostgreSQL backend does not have; reach the server over loopback, a Unix socket \
                 or a tunnel (ssh -L, stunnel), and leave sslmode out"
            )));
        }
        let redacted = redact(&config);
        Ok(Self {
            config,
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
