//! Where sessions are kept: the `sessions` setting.
//!
//! ```json
//! { "sessions": { "backend": "postgres", "url": "postgres://agent@db.internal:5432/agent",
//!                 "passwordEnv": "PGPASSWORD", "leaseSeconds": 30 } }
//! ```
//!
//! `backend` is `"local"` (the default: the files under `$AGENT_HOME/sessions`) or
//! `"postgres"`, which needs `url`. The URL never carries a password: it is read at connect
//! time from the environment variable `passwordEnv` names (default `PGPASSWORD`). `leaseSeconds`
//! is how long a writer's lease lasts without renewal (default 30).
//!
//! Merging: each member comes from the highest-precedence file that sets it (`--settings`, then
//! local, project, user), as other scalars do. The key grants (it decides where every prompt and
//! tool output is sent), so the trust table drops it from an untrusted project's files. A value
//! of the wrong type, an unknown backend or an unknown member refuses the file when it loads,
//! naming the file and the key; `"backend": "postgres"` with no `url` in any file is refused by
//! [`SessionsSettings::from_files`], naming the file that chose the backend.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{SettingsError, SettingsFile};

/// The settings key.
pub const SESSIONS_KEY: &str = "sessions";

/// Where sessions are kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SessionsBackend {
    /// Files plus a SQLite index under `$AGENT_HOME/sessions` (the default).
    #[default]
    Local,
    /// A PostgreSQL database (`sessions.url`).
    Postgres,
}

impl SessionsBackend {
    /// The name settings use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Postgres => "postgres",
        }
    }
}

/// A value of the `sessions` setting and the file that set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FromFile<T> {
    /// The value.
    pub value: T,
    /// The settings file that set it.
    pub file: PathBuf,
}

/// The `sessions` setting, merged (see the module docs). A member no file sets is `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionsSettings {
    /// `sessions.backend`.
    pub backend: Option<FromFile<SessionsBackend>>,
    /// `sessions.url`.
    pub url: Option<FromFile<String>>,
    /// `sessions.passwordEnv`.
    pub password_env: Option<FromFile<String>>,
    /// `sessions.leaseSeconds`.
    pub lease_seconds: Option<FromFile<u64>>,
}

impl SessionsSettings {
    /// The backend the settings choose (`Local` when none does).
    pub fn chosen(&self) -> SessionsBackend {
        self.backend.as_ref().map(|b| b.value).unwrap_or_default()
    }

    /// Merges the `sessions` blocks of `files` (lowest precedence first).
    ///
    /// # Errors
    /// [`SettingsError::Invalid`] for a block that does not parse (files that loaded were
    /// checked already; this catches settings built in code), and
    /// [`SettingsError::Incomplete`] when the chosen backend is `postgres` and no file sets
    /// `sessions.url`.
    pub fn from_files(files: &[SettingsFile]) -> Result<Self, SettingsError> {
        let mut out = Self::default();
        for file in files {
            let Some(value) = file.value.get(SESSIONS_KEY) else {
                continue;
            };
            let parsed = parse(value).map_err(|(key, problem)| SettingsError::Invalid {
                path: file.path.clone(),
                key,
                problem,
            })?;
            out.merge(parsed, &file.path);
        }
        if let Some(b) = &out.backend
            && b.value == SessionsBackend::Postgres
            && out.url.is_none()
        {
            return Err(SettingsError::Incomplete {
                path: b.file.clone(),
                key: format!("{SESSIONS_KEY}.backend"),
                problem: format!(
                    "is \"postgres\" but no settings file sets `{SESSIONS_KEY}.url`; add \"url\": \"postgres://USER@HOST:PORT/DATABASE\" beside it (the password comes from $PGPASSWORD)"
                ),
            });
        }
        Ok(out)
    }

    fn merge(&mut self, parsed: ParsedSessions, file: &Path) {
        set(&mut self.backend, parsed.backend, file);
        set(&mut self.url, parsed.url, file);
        set(&mut self.password_env, parsed.password_env, file);
        set(&mut self.lease_seconds, parsed.lease_seconds, file);
    }
}

/// `slot` becomes `value` (from `file`) when the file sets it.
fn set<T>(slot: &mut Option<FromFile<T>>, value: Option<T>, file: &Path) {
    if let Some(value) = value {
        *slot = Some(FromFile {
            value,
            file: file.to_path_buf(),
        });
    }
}

/// One file's `sessions` block.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ParsedSessions {
    pub backend: Option<SessionsBackend>,
    pub url: Option<String>,
    pub password_env: Option<String>,
    pub lease_seconds: Option<u64>,
}

/// Reads one `sessions` value. An error is the full key at fault and what is wrong.
pub(crate) fn parse(value: &Value) -> Result<ParsedSessions, (String, String)> {
    let k = |sub: &str| format!("{SESSIONS_KEY}.{sub}");
    let Value::Object(map) = value else {
        return Err((
            SESSIONS_KEY.to_owned(),
            "must be an object such as {\"backend\": \"postgres\", \"url\": \"postgres://USER@HOST/DATABASE\"}"
                .to_owned(),
        ));
    };
    let text = |key: &str, v: &Value| -> Result<String, (String, String)> {
        match v.as_str() {
            Some(s) if !s.trim().is_empty() => Ok(s.to_owned()),
            _ => Err((k(key), "must be a non-empty string".to_owned())),
        }
    };
    let mut out = ParsedSessions::default();
    for (key, v) in map {
        match key.as_str() {
            "backend" => {
                out.backend = Some(match v.as_str() {
                    Some("local") => SessionsBackend::Local,
                    Some("postgres") => SessionsBackend::Postgres,
                    _ => {
                        return Err((k(key), format!("is {v}; use \"local\" or \"postgres\"")));
                    }
                });
            }
            // Whether the URL parses (and carries no password) is the store's to say, when the
            // backend is opened: settings loading knows no PostgreSQL.
            "url" => out.url = Some(text(key, v)?),
            "passwordEnv" => {
                let name = text(key, v)?;
                if name.contains(['=', '\0']) || name.chars().any(char::is_whitespace) {
                    return Err((
                        k(key),
                        format!(
                            "is {name:?}, which is not a variable name; write the bare name, e.g. \"PGPASSWORD\""
                        ),
                    ));
                }
                out.password_env = Some(name);
            }
            "leaseSeconds" => match v.as_u64() {
                Some(n) if n > 0 => out.lease_seconds = Some(n),
                _ => {
                    return Err((
                        k(key),
                        format!("is {v}; it must be a whole number of seconds, at least 1"),
                    ));
                }
            },
            other => {
                // A misspelt `url` would silently keep sessions on this machine.
                return Err((
                    k(other),
                    "is not a known key; use `backend`, `url`, `passwordEnv` or `leaseSeconds`"
                        .to_owned(),
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::permissions::Scope;
    use pretty_assertions::assert_eq;
    use serde_json::{Map, json};

    fn file(path: &str, v: Value) -> SettingsFile {
        let mut value = Map::new();
        value.insert(SESSIONS_KEY.into(), v);
        SettingsFile {
            path: PathBuf::from(path),
            scope: Scope::User,
            claude: false,
            root: PathBuf::from("/"),
            trusted: true,
            value,
            dropped: Vec::new(),
        }
    }

    fn from(value: Value, path: &str) -> FromFile<Value> {
        FromFile {
            value,
            file: PathBuf::from(path),
        }
    }

    #[test]
    fn a_full_block_parses() {
        assert_eq!(
            parse(&json!({"backend": "postgres", "url": "postgres://a@h/db", "passwordEnv": "DB_PW", "leaseSeconds": 12}))
                .unwrap(),
            ParsedSessions {
                backend: Some(SessionsBackend::Postgres),
                url: Some("postgres://a@h/db".into()),
                password_env: Some("DB_PW".into()),
                lease_seconds: Some(12),
            }
        );
        assert_eq!(parse(&json!({})).unwrap(), ParsedSessions::default());
    }

    #[test]
    fn each_bad_value_names_its_key() {
        for (value, key, says) in [
            (json!("postgres"), "sessions", "must be an object"),
            (
                json!({"backend": "mysql"}),
                "sessions.backend",
                "\"mysql\"; use \"local\" or \"postgres\"",
            ),
            (
                json!({"backend": true}),
                "sessions.backend",
                "use \"local\"",
            ),
            (json!({"url": ""}), "sessions.url", "non-empty string"),
            (json!({"url": 5}), "sessions.url", "non-empty string"),
            (
                json!({"passwordEnv": "A=B"}),
                "sessions.passwordEnv",
                "not a variable name",
            ),
            (
                json!({"leaseSeconds": 0}),
                "sessions.leaseSeconds",
                "at least 1",
            ),
            (
                json!({"leaseSeconds": "30"}),
                "sessions.leaseSeconds",
                "whole number",
            ),
            (
                json!({"leaseSeconds": 1.5}),
                "sessions.leaseSeconds",
                "whole number",
            ),
            (
                json!({"URL": "postgres://a@h/db"}),
                "sessions.URL",
                "not a known key",
            ),
        ] {
            let (k, problem) = parse(&value).unwrap_err();
            assert_eq!(k, key, "{value}");
            assert!(problem.contains(says), "{value}: {problem}");
        }
    }

    #[test]
    fn members_merge_by_precedence_each_from_the_last_file_that_sets_it() {
        let merged = SessionsSettings::from_files(&[
            file(
                "/user.json",
                json!({"backend": "postgres", "url": "postgres://u@a/x", "leaseSeconds": 10}),
            ),
            file("/project.json", json!({"url": "postgres://u@b/y"})),
            file("/cli.json", json!({"passwordEnv": "PW"})),
        ])
        .unwrap();
        assert_eq!(merged.chosen(), SessionsBackend::Postgres);
        let shown = |f: &Option<FromFile<String>>| {
            f.as_ref()
                .map(|f| from(json!(f.value), &f.file.display().to_string()))
        };
        assert_eq!(
            shown(&merged.url),
            Some(from(json!("postgres://u@b/y"), "/project.json"))
        );
        assert_eq!(
            shown(&merged.password_env),
            Some(from(json!("PW"), "/cli.json"))
        );
        assert_eq!(merged.lease_seconds.map(|l| l.value), Some(10));
        assert_eq!(
            merged.backend.map(|b| b.file),
            Some(PathBuf::from("/user.json"))
        );

        // A later `local` wins over an earlier `postgres`.
        let merged = SessionsSettings::from_files(&[
            file(
                "/user.json",
                json!({"backend": "postgres", "url": "postgres://u@a/x"}),
            ),
            file("/cli.json", json!({"backend": "local"})),
        ])
        .unwrap();
        assert_eq!(merged.chosen(), SessionsBackend::Local);
        assert_eq!(
            SessionsSettings::from_files(&[]).unwrap().chosen(),
            SessionsBackend::Local
        );
    }

    #[test]
    fn postgres_without_a_url_names_the_file_that_chose_it() {
        let err = SessionsSettings::from_files(&[
            file("/user.json", json!({"leaseSeconds": 5})),
            file("/cli.json", json!({"backend": "postgres"})),
        ])
        .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("/cli.json: `sessions.backend` is \"postgres\" but no settings file sets `sessions.url`"), "{text}");
    }

    #[test]
    fn a_settings_file_with_a_bad_block_is_refused_when_it_loads() {
        let dir = std::env::temp_dir();
        let err = crate::settings::Settings::from_value(
            json!({"sessions": {"backend": "sqlite"}}),
            "/x/settings.json",
            &dir,
            &dir,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "/x/settings.json: `sessions.backend` is \"sqlite\"; use \"local\" or \"postgres\"; the whole file is ignored until this is fixed"
        );
        let ok = crate::settings::Settings::from_value(
            json!({"sessions": {"backend": "postgres", "url": "postgres://u@h/db"}}),
            "/x/settings.json",
            &dir,
            &dir,
        )
        .unwrap();
        assert_eq!(ok.sessions().unwrap().chosen(), SessionsBackend::Postgres);
        assert!(ok.warnings.is_empty(), "a known key: {:?}", ok.warnings);
    }

    #[test]
    fn an_untrusted_project_cannot_choose_where_sessions_go() {
        let mut m =
            json!({"sessions": {"backend": "postgres", "url": "postgres://evil@attacker/db"}});
        let Value::Object(map) = &mut m else {
            unreachable!()
        };
        let dropped = crate::settings::trust_table::restrict(map, Scope::Project, false);
        assert_eq!(m, json!({}));
        assert_eq!(dropped[0].path, "sessions");
        let mut m = json!({"sessions": {"backend": "postgres", "url": "postgres://team@db/agent"}});
        let Value::Object(map) = &mut m else {
            unreachable!()
        };
        assert!(crate::settings::trust_table::restrict(map, Scope::Project, true).is_empty());
    }
}
