//! Which environment variable names look like they hold a secret: the rule command hooks'
//! `hookEnvironment.scrubSecrets` removes by. (The OS sandbox needs no such rule: it passes an
//! allowlist, agent-sandbox's `profile::env`.)

/// Whether a variable name looks like it holds a secret: names ending `_KEY` or `_PAT`, names
/// containing `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`, `API_KEY`, `ACCESS_KEY` or
/// `PRIVATE_KEY`, and `SSH_AUTH_SOCK` (the use of the user's keys). Case is ignored. Provider
/// keys (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, ...)
/// all match.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.ends_with("_KEY")
        || n.ends_with("_PAT")
        || n == "SSH_AUTH_SOCK"
        || [
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "TOKEN",
            "API_KEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
        ]
        .iter()
        .any(|s| n.contains(s))
}

#[cfg(test)]
mod tests {
    use super::is_secret_name;

    #[test]
    fn provider_keys_and_generic_secrets_match() {
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "github_token",
            "GH_PAT",
            "NPM_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SESSION_TOKEN",
            "MY_SECRET",
            "db_password",
            "MYSQL_PASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "SSH_AUTH_SOCK",
            "TLS_PRIVATE_KEY_FILE",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "KEYBOARD",
            "HOOK_EVENT",
            "CLAUDE_PROJECT_DIR",
            "CLAUDE_CODE_SESSION_ID",
            "LANG",
            "SSH_CONNECTION",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
