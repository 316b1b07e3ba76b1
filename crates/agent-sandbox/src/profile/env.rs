//! The environment a sandboxed command gets: the caller's, minus anything that looks like a
//! secret, unless passed explicitly. What counts as a secret is agent-core's
//! [`is_secret_name`], the same rule command hooks use with `hookEnvironment.scrubSecrets`.

use agent_core::secrets::is_secret_name;
use serde::Serialize;

/// What a sandboxed command's environment holds, and what was held back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EnvPlan {
    /// Variables set, sorted by name.
    pub kept: Vec<(String, String)>,
    /// Names dropped as secrets, sorted.
    pub dropped: Vec<String>,
}

impl EnvPlan {
    /// Filters `vars`: a name that looks like a secret (see [`is_secret_name`]) is dropped unless
    /// `pass` names it. `pass` entries are `NAME` (keep this variable, secret or not) or
    /// `NAME=VALUE` (set it to this value).
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
            if is_secret_name(name) && !explicit(name) {
                plan.dropped.push(name.clone());
            } else {
                plan.kept.push((name.clone(), value.clone()));
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

    #[test]
    fn secrets_are_dropped_unless_passed() {
        let vars: Vec<(String, String)> = [
            ("PATH", "/bin"),
            ("GITHUB_TOKEN", "t"),
            ("OPENAI_API_KEY", "k"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("AWS_ACCESS_KEY_ID", "i"),
            ("db_password", "p"),
            ("NPM_TOKEN", "n"),
            ("HOME", "/root"),
            ("KEYBOARD", "us"),
        ]
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
        let plan = EnvPlan::sanitize(&vars, &["NPM_TOKEN".into(), "EXTRA=1".into()]);
        let kept: Vec<&str> = plan.kept.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kept, ["EXTRA", "HOME", "KEYBOARD", "NPM_TOKEN", "PATH"]);
        assert_eq!(
            plan.dropped,
            [
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "GITHUB_TOKEN",
                "OPENAI_API_KEY",
                "db_password"
            ]
        );
    }
}
