//! What environment hooks see: the `hookEnvironment` setting.
//!
//! ```json
//! { "hookEnvironment": { "scrubSecrets": true, "passthrough": ["GITHUB_TOKEN"] } }
//! ```
//!
//! By default a command hook inherits the runtime's whole environment, as in Claude Code.
//! With `scrubSecrets: true`, every variable whose name looks like a secret
//! ([`is_secret_name`], the rule the OS sandbox uses for its sanitised environment) is removed
//! before a command hook starts, and an `http` hook's headers read such a variable as empty
//! even when its `allowedEnvVars` lists it. Names in `passthrough` are kept.
//!
//! Merging: the highest-precedence file that sets `scrubSecrets` decides (`--settings`, then
//! local, project, user), with one exception: the repository's files (project and local) may
//! turn scrubbing on but never off against the user's files (user and `--settings`). When a
//! user or `--settings` file says `true`, a project or local `false` is ignored with a warning,
//! and so is a project or local `passthrough` (passing a secret through is turning scrubbing
//! off for it). An untrusted folder's files may only turn scrubbing on. `passthrough` lists
//! concatenate across the files that may contribute.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::permissions::Scope;
use crate::secrets::is_secret_name;
use crate::settings::SettingsFile;

/// The settings key.
pub(crate) const HOOK_ENVIRONMENT_KEY: &str = "hookEnvironment";

/// The environment policy of hooks (the `hookEnvironment` setting).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookEnvironment {
    /// Remove variables whose names look like secrets from command hooks' environment, and read
    /// them as empty in `http` hook headers (`scrubSecrets`; default false, as in Claude Code).
    pub scrub_secrets: bool,
    /// Names kept even though they look like secrets (`passthrough`).
    pub passthrough: Vec<String>,
    /// The settings file that decided `scrub_secrets` (`None`: the default, or set in code).
    pub set_by: Option<PathBuf>,
}

impl HookEnvironment {
    /// Scrubbing on, keeping the names in `passthrough`.
    pub fn scrubbing<I, S>(passthrough: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            scrub_secrets: true,
            passthrough: passthrough.into_iter().map(Into::into).collect(),
            set_by: None,
        }
    }

    /// Whether hooks must not see the variable `name`: scrubbing is on, the name looks like a
    /// secret, and `passthrough` does not list it (names are compared exactly).
    pub fn withholds(&self, name: &str) -> bool {
        self.scrub_secrets && is_secret_name(name) && !self.passthrough.iter().any(|p| p == name)
    }

    /// The policy the settings files say (lowest precedence first; see the module docs), with
    /// a warning for every value that was ignored and why.
    pub(crate) fn from_files(files: &[SettingsFile], warnings: &mut Vec<String>) -> Self {
        // (value, file, from the repository)
        let mut decided: Option<(bool, &Path, bool)> = None;
        let mut user_on: Option<&Path> = None;
        let mut user_pass: Vec<String> = Vec::new();
        let mut repo_pass: Vec<(String, &Path)> = Vec::new();
        for file in files {
            let Some(value) = file.value.get(HOOK_ENVIRONMENT_KEY) else {
                continue;
            };
            // Validated when the file loaded; a value given in code that does not parse is
            // skipped with a warning rather than half-applied.
            let parsed = match parse(value) {
                Ok(p) => p,
                Err((key, problem)) => {
                    warnings.push(format!(
                        "{}: `{key}` {problem}; the setting is ignored",
                        file.path.display()
                    ));
                    continue;
                }
            };
            let repo = matches!(file.scope, Scope::Project | Scope::Local);
            if repo && !file.trusted {
                if parsed.scrub_secrets == Some(true) {
                    decided = Some((true, &file.path, true));
                }
                if parsed.scrub_secrets == Some(false) || !parsed.passthrough.is_empty() {
                    warnings.push(format!(
                        "{}: `{HOOK_ENVIRONMENT_KEY}` can only turn scrubbing on because this folder is not trusted; `scrubSecrets: false` and `passthrough` are ignored (trust it with `agent trust` or pass --trust)",
                        file.path.display()
                    ));
                }
                continue;
            }
            if let Some(on) = parsed.scrub_secrets {
                if on && !repo {
                    user_on = Some(&file.path);
                }
                decided = Some((on, &file.path, repo));
            }
            if repo {
                repo_pass.extend(parsed.passthrough.into_iter().map(|n| (n, &*file.path)));
            } else {
                user_pass.extend(parsed.passthrough);
            }
        }
        let (scrub_secrets, set_by) = match (decided, user_on) {
            (Some((false, path, true)), Some(user)) => {
                warnings.push(format!(
                    "{}: `{HOOK_ENVIRONMENT_KEY}.scrubSecrets: false` is ignored: {} turned scrubbing on, and project and local settings cannot turn it off (use --settings or the user settings)",
                    path.display(),
                    user.display()
                ));
                (true, Some(user.to_path_buf()))
            }
            (Some((on, path, _)), _) => (on, Some(path.to_path_buf())),
            (None, _) => (false, None),
        };
        let mut passthrough = user_pass;
        if let Some(user) = user_on.filter(|_| scrub_secrets) {
            for (name, path) in &repo_pass {
                warnings.push(format!(
                    "{}: `{HOOK_ENVIRONMENT_KEY}.passthrough` entry {name:?} is ignored: {} turned scrubbing on, and project and local settings cannot pass secrets through it",
                    path.display(),
                    user.display()
                ));
            }
        } else {
            passthrough.extend(repo_pass.into_iter().map(|(n, _)| n));
        }
        let mut seen = std::collections::HashSet::new();
        passthrough.retain(|n| seen.insert(n.clone()));
        Self {
            scrub_secrets,
            passthrough,
            set_by,
        }
    }
}

/// One file's `hookEnvironment` block.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ParsedHookEnvironment {
    pub scrub_secrets: Option<bool>,
    pub passthrough: Vec<String>,
}

/// Reads one `hookEnvironment` value. An error is the full key at fault and what is wrong.
pub(crate) fn parse(value: &Value) -> Result<ParsedHookEnvironment, (String, String)> {
    let k = |sub: &str| format!("{HOOK_ENVIRONMENT_KEY}.{sub}");
    let Value::Object(map) = value else {
        return Err((
            HOOK_ENVIRONMENT_KEY.to_owned(),
            "must be an object such as {\"scrubSecrets\": true, \"passthrough\": [\"NAME\"]}"
                .to_owned(),
        ));
    };
    let mut out = ParsedHookEnvironment::default();
    for (key, v) in map {
        match key.as_str() {
            "scrubSecrets" => {
                out.scrub_secrets = Some(
                    v.as_bool()
                        .ok_or_else(|| (k(key), "must be true or false".to_owned()))?,
                );
            }
            "passthrough" => {
                let Value::Array(items) = v else {
                    return Err((
                        k(key),
                        "must be an array of environment variable names".to_owned(),
                    ));
                };
                for (i, item) in items.iter().enumerate() {
                    let name = item.as_str().ok_or_else(|| {
                        (
                            format!("{}[{i}]", k(key)),
                            "must be a string (a variable name)".to_owned(),
                        )
                    })?;
                    if name.is_empty() || name.contains(['=', '\0']) {
                        return Err((
                            format!("{}[{i}]", k(key)),
                            format!(
                                "is {name:?}, which is not a variable name; write the bare name, e.g. \"GITHUB_TOKEN\""
                            ),
                        ));
                    }
                    out.passthrough.push(name.to_owned());
                }
            }
            other => {
                // A misspelt key would silently leave secrets in the environment.
                return Err((
                    k(other),
                    "is not a known key; use `scrubSecrets` (true or false) or `passthrough` (names)"
                        .to_owned(),
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    fn file(path: &str, scope: Scope, trusted: bool, v: Value) -> SettingsFile {
        let mut value = Map::new();
        value.insert(HOOK_ENVIRONMENT_KEY.into(), v);
        SettingsFile {
            path: PathBuf::from(path),
            scope,
            claude: false,
            root: PathBuf::from("/"),
            trusted,
            value,
            dropped: Vec::new(),
        }
    }

    fn merge(files: &[SettingsFile]) -> (HookEnvironment, Vec<String>) {
        let mut w = Vec::new();
        let e = HookEnvironment::from_files(files, &mut w);
        (e, w)
    }

    #[test]
    fn withholds_secret_names_unless_passed_through() {
        let off = HookEnvironment::default();
        assert!(!off.withholds("ANTHROPIC_API_KEY"));
        let on = HookEnvironment::scrubbing(["GITHUB_TOKEN"]);
        assert!(on.withholds("ANTHROPIC_API_KEY"));
        assert!(on.withholds("MY_SECRET"));
        assert!(!on.withholds("GITHUB_TOKEN"));
        assert!(on.withholds("github_token"), "passthrough names are exact");
        assert!(!on.withholds("PATH"));
        assert!(!on.withholds("HOOK_SESSION_ID"));
    }

    #[test]
    fn highest_precedence_wins_but_the_repository_cannot_turn_it_off() {
        let user_on = file("/u", Scope::User, true, json!({"scrubSecrets": true}));
        let proj_off = file(
            "/p",
            Scope::Project,
            true,
            json!({"scrubSecrets": false, "passthrough": ["A_TOKEN"]}),
        );
        let (e, w) = merge(&[user_on.clone(), proj_off.clone()]);
        assert!(e.scrub_secrets);
        assert_eq!(e.set_by.as_deref(), Some(Path::new("/u")));
        assert!(e.passthrough.is_empty());
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("cannot turn it off"), "{w:?}");
        // A local file neither.
        let local_off = file("/l", Scope::Local, true, json!({"scrubSecrets": false}));
        assert!(merge(&[user_on.clone(), local_off]).0.scrub_secrets);
        // The user's own --settings can.
        let cli_off = file("/c", Scope::Cli, true, json!({"scrubSecrets": false}));
        let (e, _) = merge(&[user_on.clone(), proj_off, cli_off]);
        assert!(!e.scrub_secrets);
        // A project may turn it on and pass its own names through when the user said nothing.
        let proj_on = file(
            "/p",
            Scope::Project,
            true,
            json!({"scrubSecrets": true, "passthrough": ["A_TOKEN"]}),
        );
        let user_pass = file("/u", Scope::User, true, json!({"passthrough": ["B_KEY"]}));
        let (e, w) = merge(&[user_pass, proj_on]);
        assert!(e.scrub_secrets && w.is_empty(), "{w:?}");
        assert_eq!(e.passthrough, ["B_KEY", "A_TOKEN"]);
        // Untrusted: only `true` counts.
        let untrusted_on = file("/p", Scope::Project, false, json!({"scrubSecrets": true}));
        assert!(merge(&[untrusted_on]).0.scrub_secrets);
        let untrusted_off = file(
            "/p",
            Scope::Project,
            false,
            json!({"scrubSecrets": false, "passthrough": ["X_KEY"]}),
        );
        let (e, w) = merge(&[user_on, untrusted_off]);
        assert!(e.scrub_secrets && e.passthrough.is_empty());
        assert!(w[0].contains("not trusted"), "{w:?}");
        // Nothing set: off, as in Claude Code.
        assert_eq!(merge(&[]).0, HookEnvironment::default());
    }

    #[test]
    fn malformed_values_name_the_key() {
        for (v, key) in [
            (json!(true), "hookEnvironment"),
            (
                json!({"scrubSecrets": "yes"}),
                "hookEnvironment.scrubSecrets",
            ),
            (json!({"passthrough": "X"}), "hookEnvironment.passthrough"),
            (
                json!({"passthrough": [1]}),
                "hookEnvironment.passthrough[0]",
            ),
            (
                json!({"passthrough": ["A=b"]}),
                "hookEnvironment.passthrough[0]",
            ),
            (json!({"scrubSecret": true}), "hookEnvironment.scrubSecret"),
        ] {
            assert_eq!(parse(&v).unwrap_err().0, key, "{v}");
        }
    }
}
