//! The environment a sandboxed host command gets: an **allowlist** of variables known to be
//! safe to pass (the locale, the terminal, where the toolchains live), never the caller's whole
//! environment minus a list of secret-looking names. A connection string with a password in
//! `DATABASE_URL`, a `SLACK_WEBHOOK_URL`, `NPM_CONFIG__AUTH` or a `SENTRY_DSN` are secrets
//! whatever their names look like; none of them is on the list, so none reaches the command.
//! A variable the command needs is passed explicitly (`NAME` keeps the caller's value,
//! `NAME=VALUE` sets one: `agent sandbox exec --env`).

use serde::Serialize;

/// Variables passed as they are: the process basics, the locale, the terminal.
pub const SAFE_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
];

/// Variables whose names start with one of these are passed (`LC_ALL`, `LC_CTYPE`, ...).
pub const SAFE_PREFIXES: &[&str] = &["LC_"];

/// Tool-specific variables that say where a toolchain lives or how it prints, never a
/// credential: rustup/cargo homes, the active toolchain, Go's, Python's and Node's roots.
pub const TOOLCHAIN_VARS: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TERM_COLOR",
    "GOROOT",
    "GOPATH",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "NVM_DIR",
    "NVM_BIN",
    "JAVA_HOME",
];

/// Whether `name` is passed without being asked for (see the module docs).
pub fn is_passed(name: &str) -> bool {
    SAFE_VARS.contains(&name)
        || TOOLCHAIN_VARS.contains(&name)
        || SAFE_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// What a sandboxed command's environment holds, and what was held back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EnvPlan {
    /// Variables set, sorted by name.
    pub kept: Vec<(String, String)>,
    /// Names not passed (not on the allowlist and not asked for), sorted. Names only: the
    /// values never leave this struct.
    pub dropped: Vec<String>,
}

impl EnvPlan {
    /// The allowlisted variables of `vars` (see [`is_passed`]), plus `pass`: `NAME` passes the
    /// caller's variable of that name whatever it is, `NAME=VALUE` sets it to this value.
    pub fn sanitize(vars: &[(String, String)], pass: &[String]) -> Self {
        let mut plan = Self::default();
        let explicit = |name: &str| pass.iter().any(|p| p == name);
        for (name, value) in vars {
            if pass
                .iter()
                .any(|p| p.split_once('=').is_some_and(|(n, _)| n == name))
            {
                continue;
            }
            if is_passed(name) || explicit(name) {
                plan.kept.push((name.clone(), value.clone()));
            } else {
                plan.dropped.push(name.clone());
            }
        }
        for p in pass {
            if let Some((n, v)) = p.split_once('=') {
                plan.kept.push((n.to_owned(), v.to_owned()));
            }
        }
        plan.kept.sort();
        plan.dropped.sort();
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn only_allowlisted_or_requested_variables_pass() {
        let plan = EnvPlan::sanitize(
            &vars(&[
                ("PATH", "/bin"),
                ("HOME", "/root"),
                ("LC_ALL", "C"),
                ("CARGO_HOME", "/c"),
                ("GITHUB_TOKEN", "t"),
                ("DATABASE_URL", "postgres://u:secret@db/x"),
                ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/x"),
                ("NPM_CONFIG__AUTH", "a"),
                ("SENTRY_DSN", "https://k@sentry/1"),
                ("KEYBOARD", "us"),
                ("NPM_TOKEN", "n"),
            ]),
            &["NPM_TOKEN".into(), "EXTRA=1".into()],
        );
        let kept: Vec<&str> = plan.kept.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            kept,
            ["CARGO_HOME", "EXTRA", "HOME", "LC_ALL", "NPM_TOKEN", "PATH"]
        );
        assert_eq!(
            plan.dropped,
            [
                "DATABASE_URL",
                "GITHUB_TOKEN",
                "KEYBOARD",
                "NPM_CONFIG__AUTH",
                "SENTRY_DSN",
                "SLACK_WEBHOOK_URL"
            ]
        );
    }

    #[test]
    fn no_value_of_a_variable_off_the_list_survives() {
        // Whatever the name, a variable that is not on the list is not passed.
        let names = [
            "AWS_SESSION",
            "MY_APP_CONFIG",
            "X",
            "REDIS_URL",
            "PGPASSFILE",
            "lc_all",
        ];
        for name in names {
            let plan = EnvPlan::sanitize(&vars(&[(name, "v")]), &[]);
            assert!(plan.kept.is_empty(), "{name} passed");
        }
    }
}
