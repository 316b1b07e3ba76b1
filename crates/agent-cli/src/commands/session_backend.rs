//! Where a verb keeps sessions: the local store or a PostgreSQL database, chosen once here for
//! every verb that opens the session store (`run`, `chat`, the headless mode, `demo`,
//! `sessions`, `workspace --session`).
//!
//! The choice, first that applies:
//! 1. `--store DIR` (`agent sessions` only): the local store at DIR.
//! 2. `--sessions-url URL`, then `$AGENT_SESSIONS_URL`: PostgreSQL at URL.
//! 3. The settings' `sessions` block (agent_core's `SessionsSettings`): `"backend":
//!    "postgres"` with its `url`.
//! 4. The local store at `$AGENT_HOME/sessions`.
//!
//! The settings' `passwordEnv` and `leaseSeconds` apply to a URL from any source. A URL that
//! carries a password is refused (exit 2) without ever being echoed; the settings' `sessions`
//! block is read from `$AGENT_HOME/settings.json` even when `--setting-sources` leaves the user
//! file out, as the provider is: it is `agent`'s own configuration.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_core::settings::{SessionsBackend, SessionsSettings, Settings};
use agent_store::postgres::{PgOptions, PgStore};
use agent_store::{SessionBackend, SessionStore, StoreOptions};
use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::LoadedSettings;
use crate::cli::sessions::SessionsUrlArg;

/// The environment variable that sets the default of `--sessions-url`.
pub const SESSIONS_URL_ENV: &str = "AGENT_SESSIONS_URL";

/// The session store a verb opens.
#[derive(Debug)]
pub(crate) enum Choice {
    /// The local store at this root.
    Local(PathBuf),
    /// A PostgreSQL database.
    Postgres(Box<PgOptions>),
}

impl Choice {
    /// The choice for a verb (see the module docs): `store` is `--store DIR`, `url` the
    /// `--sessions-url` flag, `loaded` the verb's settings (`None`: the standard files, read
    /// from the current directory, only when no flag decides).
    ///
    /// # Errors
    /// `--store` with `--sessions-url`; settings that do not load or name no URL for
    /// `"backend": "postgres"`; a URL that does not parse or carries a password.
    pub(crate) fn of(
        store: Option<PathBuf>,
        url: &SessionsUrlArg,
        loaded: Option<&LoadedSettings>,
    ) -> Result<Self> {
        if let Some(dir) = store {
            if url.url.is_some() {
                bail!(
                    "--store DIR and --sessions-url URL name two session stores; give one (only `agent sessions migrate` takes both)"
                );
            }
            return Ok(Self::Local(super::absolute(dir)?));
        }
        let settings = sessions_settings(loaded)?;
        match postgres_options(url, &settings, true)? {
            Some(options) => Ok(Self::Postgres(Box::new(options))),
            None => Ok(Self::Local(super::agent_home()?.sessions())),
        }
    }

    /// Opens the store.
    ///
    /// # Errors
    /// The store's: a local root that cannot be created, a server that cannot be reached or
    /// refuses, a schema newer than this build.
    pub(crate) async fn open(self) -> Result<OpenStore> {
        match self {
            Self::Local(root) => Ok(OpenStore::Local(
                SessionStore::open(StoreOptions::new(root)).await?,
            )),
            Self::Postgres(options) => Ok(OpenStore::Postgres(PgStore::connect(*options).await?)),
        }
    }
}

/// An open session store.
#[derive(Clone, Debug)]
pub(crate) enum OpenStore {
    /// Files plus a SQLite index.
    Local(SessionStore),
    /// A PostgreSQL database.
    Postgres(PgStore),
}

impl OpenStore {
    /// The store as the agent loop and the verbs use it.
    pub(crate) fn backend(&self) -> Arc<dyn SessionBackend> {
        match self {
            Self::Local(s) => Arc::new(s.clone()),
            Self::Postgres(p) => Arc::new(p.clone()),
        }
    }

    /// Rebuilds what the store derives from the logs (the local index; PostgreSQL's session
    /// rows); returns how many sessions there are.
    ///
    /// # Errors
    /// The store's.
    pub(crate) async fn reindex(&self) -> Result<usize> {
        Ok(match self {
            Self::Local(s) => s.reindex().await?,
            Self::Postgres(p) => p.reindex().await?,
        })
    }

    /// Where the store is, for messages: the local root, or the URL without any password.
    pub(crate) fn location(&self) -> String {
        match self {
            Self::Local(s) => s.local().root().display().to_string(),
            Self::Postgres(p) => p.url().to_owned(),
        }
    }
}

/// The local store a verb names: `--store DIR`, else `$AGENT_HOME/sessions`.
pub(crate) fn local_root(store: Option<PathBuf>) -> Result<PathBuf> {
    match store {
        Some(dir) => super::absolute(dir),
        None => Ok(super::agent_home()?.sessions()),
    }
}

/// The PostgreSQL store named by `--sessions-url`, `$AGENT_SESSIONS_URL` or the settings' `url`,
/// whatever backend the settings choose (`agent sessions migrate`); `None` when none names one.
///
/// # Errors
/// As [`Choice::of`].
pub(crate) fn postgres_named(
    url: &SessionsUrlArg,
    loaded: Option<&LoadedSettings>,
) -> Result<Option<PgOptions>> {
    postgres_options(url, &sessions_settings(loaded)?, false)
}

/// The settings' `sessions` block: `loaded`'s files (the standard files of the current
/// directory when `None`), with `$AGENT_HOME/settings.json` first when they leave it out.
fn sessions_settings(loaded: Option<&LoadedSettings>) -> Result<SessionsSettings> {
    let standard;
    let loaded = match loaded {
        Some(l) => l,
        None => {
            standard = super::load_settings(&crate::cli::settings::SettingsArgs::default())?;
            &standard
        }
    };
    let mut files = Vec::new();
    if let Some((path, map)) = super::provider::own_settings(loaded)? {
        let own = Settings::from_value(
            Value::Object(map),
            &path.display().to_string(),
            super::agent_home()?.root(),
            &loaded.home,
        )?;
        files.extend(own.files);
    }
    files.extend(loaded.settings.files.iter().cloned());
    Ok(SessionsSettings::from_files(&files)?)
}

/// The PostgreSQL options the flag, the environment or the settings give; `by_backend`: the
/// settings' URL counts only when their `backend` is `postgres`.
fn postgres_options(
    flag: &SessionsUrlArg,
    settings: &SessionsSettings,
    by_backend: bool,
) -> Result<Option<PgOptions>> {
    let env = std::env::var(SESSIONS_URL_ENV)
        .ok()
        .filter(|u| !u.trim().is_empty());
    let (url, from) = match (&flag.url, env, &settings.url) {
        (Some(u), _, _) => (u.clone(), "--sessions-url".to_owned()),
        (None, Some(u), _) => (u, format!("${SESSIONS_URL_ENV}")),
        (None, None, Some(u)) if !by_backend || settings.chosen() == SessionsBackend::Postgres => (
            u.value.clone(),
            format!("{}: `sessions.url`", u.file.display()),
        ),
        _ => return Ok(None),
    };
    // The store's message shows the URL with any password masked.
    let mut options = PgOptions::new(&url).with_context(|| from.clone())?;
    if let Some(var) = &settings.password_env {
        options = options.password_env(var.value.clone());
    }
    if let Some(lease) = &settings.lease_seconds {
        options = options
            .lease(Duration::from_secs(lease.value))
            .with_context(|| format!("{}: `sessions.leaseSeconds`", lease.file.display()))?;
    }
    Ok(Some(options))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn settings(v: Value) -> SessionsSettings {
        let s = Settings::from_value(
            serde_json::json!({ "sessions": v }),
            "/s.json",
            std::path::Path::new("/"),
            std::path::Path::new("/"),
        )
        .unwrap();
        s.sessions().unwrap()
    }

    fn flag(url: Option<&str>) -> SessionsUrlArg {
        SessionsUrlArg {
            url: url.map(str::to_owned),
        }
    }

    #[test]
    fn the_flag_wins_over_the_settings_and_their_password_env_and_lease_apply() {
        let s = settings(serde_json::json!({
            "backend": "local", "url": "postgres://a@settings/db",
            "passwordEnv": "DB_PW", "leaseSeconds": 7
        }));
        let o = postgres_options(&flag(Some("postgres://b@flag/db")), &s, true)
            .unwrap()
            .unwrap();
        assert_eq!(o.redacted(), "postgres://b@flag:5432/db");
        assert_eq!(o.password_env_name(), "DB_PW");
        // `backend: local` keeps the settings' URL out of the choice, not out of `migrate`.
        if std::env::var_os(SESSIONS_URL_ENV).is_none() {
            assert!(postgres_options(&flag(None), &s, true).unwrap().is_none());
            let named = postgres_options(&flag(None), &s, false).unwrap().unwrap();
            assert_eq!(named.redacted(), "postgres://a@settings:5432/db");
        }
    }

    #[test]
    fn a_password_or_a_bad_lease_is_refused_naming_where_it_came_from() {
        let s = SessionsSettings::default();
        let e = postgres_options(&flag(Some("postgres://u:hunter2@h/db")), &s, true).unwrap_err();
        let text = format!("{e:#}");
        assert!(text.starts_with("--sessions-url: "), "{text}");
        assert!(text.contains("carries a password"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        let s = settings(
            serde_json::json!({"backend": "postgres", "url": "postgres://u@h/db", "leaseSeconds": 99999}),
        );
        if std::env::var_os(SESSIONS_URL_ENV).is_none() {
            let e = postgres_options(&flag(None), &s, true).unwrap_err();
            let text = format!("{e:#}");
            assert!(
                text.starts_with("/s.json: `sessions.leaseSeconds`: "),
                "{text}"
            );
        }
    }
}
