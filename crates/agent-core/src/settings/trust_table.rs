//! The trust table: every settings key this runtime reads, classified by what it can do.
//!
//! A key is **tightening** when any value it can take only restricts (a deny rule, a denied
//! domain, `sandbox.enabled: true` without any approval riding on it), **granting** when some
//! value gives a capability (an allow rule, an allowed domain, a hook, an MCP server, a host
//! backend), and **user-only** when some value takes away a protection the user must have
//! chosen themselves (`sandbox.failIfUnavailable: false`, `sandbox.autoAllowBashIfSandboxed`):
//! those are read from the user's own files (user settings and `--settings`), never from a
//! project, trusted or not. A key can be tightening for some values and granting for others
//! ([`Tightens::When`]).
//!
//! Settings loading consults the table before anything reads a file
//! ([`restrict`]): from an untrusted project's files (project and local scope, folder not
//! trusted) only tightening keys and values are kept; from a trusted project's files everything
//! but the user-only loosening values. Whatever is dropped is named in a warning. A key that is
//! not in the table is dropped from an untrusted project's files too: "safe" is decided by an allowlist of what
//! is known to be safe, never by a list of remembered dangers, so a key a later version starts
//! to read cannot grant through an old project file.
//!
//! Each entry carries an example of a value that loosens (when it has one), and the tests load
//! every one of them from an untrusted project and check that it has no effect.
//!
//! ```
//! use agent_core::settings::trust_table::{KEYS, Tightens, spec};
//!
//! assert!(matches!(spec("permissions.deny").unwrap().tightens, Tightens::Always));
//! assert!(matches!(spec("permissions.allow").unwrap().tightens, Tightens::Never));
//! let enabled = spec("sandbox.enabled").unwrap();
//! assert!(enabled.tightens(&serde_json::json!(true)));
//! assert!(!enabled.tightens(&serde_json::json!(false)));
//! assert!(KEYS.iter().all(|k| k.tightens_always() || k.loosening.is_some()));
//! ```

use serde_json::{Map, Value};

use crate::permissions::Scope;

/// Whether a key's values only restrict.
#[derive(Clone, Copy, Debug)]
pub enum Tightens {
    /// Every value restricts (deny lists, ask rules, denied domains).
    Always,
    /// Values that grant exist (allow lists, hooks, servers): only sources that may grant set it.
    Never,
    /// Only the values for which the function returns true restrict; the function's
    /// description says which.
    When(fn(&Value) -> bool, &'static str),
    /// An object whose own keys are classified by their own entries.
    Object,
}

/// Which sources may set a loosening value of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantedBy {
    /// The user's files, `--settings`, and a trusted project's files.
    GrantingSources,
    /// Only the user's own files and `--settings`: never a project, trusted or not.
    UserOnly,
}

/// One settings key.
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    /// The dotted path (`sandbox.network.allowedDomains`).
    pub path: &'static str,
    /// Which of its values only restrict.
    pub tightens: Tightens,
    /// Who may set its other values.
    pub granted_by: GrantedBy,
    /// A value that loosens, as JSON text (`None` for keys that only tighten, and objects).
    pub loosening: Option<&'static str>,
    /// What the key does, in a few words.
    pub what: &'static str,
}

impl KeySpec {
    /// Whether `value` only restricts.
    pub fn tightens(&self, value: &Value) -> bool {
        match self.tightens {
            Tightens::Always => true,
            Tightens::Never | Tightens::Object => false,
            Tightens::When(f, _) => f(value),
        }
    }

    /// Whether every value restricts.
    pub fn tightens_always(&self) -> bool {
        matches!(self.tightens, Tightens::Always | Tightens::Object)
    }
}

const fn key(
    path: &'static str,
    tightens: Tightens,
    loosening: Option<&'static str>,
    what: &'static str,
) -> KeySpec {
    KeySpec {
        path,
        tightens,
        granted_by: GrantedBy::GrantingSources,
        loosening,
        what,
    }
}

const fn user_only(
    path: &'static str,
    tightens: Tightens,
    loosening: &'static str,
    what: &'static str,
) -> KeySpec {
    KeySpec {
        path,
        tightens,
        granted_by: GrantedBy::UserOnly,
        loosening: Some(loosening),
        what,
    }
}

fn is_true(v: &Value) -> bool {
    v == &Value::Bool(true)
}

fn is_false(v: &Value) -> bool {
    v == &Value::Bool(false)
}

fn disables(v: &Value) -> bool {
    v == &Value::Bool(true) || v.as_str() == Some("disable")
}

fn strict_mode(v: &Value) -> bool {
    matches!(v.as_str(), Some("default" | "manual" | "plan" | "dontAsk"))
}

fn wasi_only(v: &Value) -> bool {
    v.as_str() == Some("wasi")
}

/// `true` restricts.
const TRUE: Tightens = Tightens::When(is_true, "true");
/// `false` restricts.
const FALSE: Tightens = Tightens::When(is_false, "false");

/// Every key, objects before their members.
pub const KEYS: &[KeySpec] = &[
    key(
        "$schema",
        Tightens::Always,
        None,
        "the JSON schema URL (ignored)",
    ),
    key(
        "permissions",
        Tightens::Object,
        None,
        "permission rules and modes",
    ),
    key(
        "permissions.allow",
        Tightens::Never,
        Some(r#"["Bash(*)", "Edit"]"#),
        "rules that approve calls",
    ),
    key("permissions.ask", Tightens::Always, None, "rules that ask"),
    key(
        "permissions.deny",
        Tightens::Always,
        None,
        "rules that refuse",
    ),
    key(
        "permissions.additionalDirectories",
        Tightens::Never,
        Some(r#"["/"]"#),
        "extra working directories",
    ),
    key(
        "permissions.defaultMode",
        Tightens::When(strict_mode, "\"default\", \"plan\" or \"dontAsk\""),
        Some(r#""bypassPermissions""#),
        "the starting mode",
    ),
    key(
        "permissions.disableBypassPermissionsMode",
        Tightens::When(disables, "\"disable\" or true"),
        Some("false"),
        "refuses bypassPermissions",
    ),
    key(
        "permissions.disableAutoMode",
        Tightens::When(disables, "\"disable\" or true"),
        Some("false"),
        "refuses auto mode",
    ),
    key("sandbox", Tightens::Object, None, "the sandbox"),
    key(
        "sandbox.enabled",
        TRUE,
        Some("false"),
        "the OS sandbox around host commands (on unless a granting source turns it off)",
    ),
    user_only(
        "sandbox.failIfUnavailable",
        TRUE,
        "false",
        "whether a host command may run unsandboxed, without asking, where no OS sandbox can run",
    ),
    user_only(
        "sandbox.autoAllowBashIfSandboxed",
        FALSE,
        "true",
        "approves Bash commands because they run sandboxed",
    ),
    key(
        "sandbox.allowUnsandboxedCommands",
        FALSE,
        Some("true"),
        "lets a call ask to run outside the sandbox",
    ),
    key(
        "sandbox.excludedCommands",
        Tightens::Never,
        Some(r#"["python3 *"]"#),
        "commands that run outside the sandbox",
    ),
    key(
        "sandbox.allowedCommands",
        Tightens::Never,
        Some(r#"["rm"]"#),
        "the command allowlist (lists concatenate, so an entry grants)",
    ),
    key(
        "sandbox.deniedCommands",
        Tightens::Always,
        None,
        "commands refused",
    ),
    key(
        "sandbox.allowedReadPaths",
        Tightens::Never,
        Some(r#"["/etc"]"#),
        "readable paths",
    ),
    key(
        "sandbox.allowedWritePaths",
        Tightens::Never,
        Some(r#"["/etc"]"#),
        "writable paths",
    ),
    key(
        "sandbox.deniedPaths",
        Tightens::Always,
        None,
        "paths neither read nor written",
    ),
    key(
        "sandbox.deniedReadPaths",
        Tightens::Always,
        None,
        "paths never read",
    ),
    key(
        "sandbox.deniedWritePaths",
        Tightens::Always,
        None,
        "paths never written",
    ),
    key(
        "sandbox.baseDir",
        Tightens::Never,
        Some(r#""/etc""#),
        "document 002's base directory",
    ),
    key(
        "sandbox.allowDirs",
        Tightens::Never,
        Some(r#"["/etc"]"#),
        "extra read-write directories",
    ),
    key(
        "sandbox.allowDirsReadOnly",
        Tightens::Never,
        Some(r#"["/etc"]"#),
        "extra read-only directories",
    ),
    key(
        "sandbox.unrestricted",
        FALSE,
        Some("true"),
        "lifts path and command limits",
    ),
    key(
        "sandbox.allowNestedSandbox",
        FALSE,
        Some("true"),
        "lets a sandboxed command start a sandbox",
    ),
    key(
        "sandbox.enableWeakerNestedSandbox",
        FALSE,
        Some("true"),
        "a much weaker sandbox inside containers",
    ),
    key(
        "sandbox.filesystem",
        Tightens::Object,
        None,
        "Claude Code's filesystem lists",
    ),
    key(
        "sandbox.filesystem.allowRead",
        Tightens::Never,
        Some(r#"["//etc"]"#),
        "readable paths",
    ),
    key(
        "sandbox.filesystem.allowWrite",
        Tightens::Never,
        Some(r#"["//etc"]"#),
        "writable paths",
    ),
    key(
        "sandbox.filesystem.denyRead",
        Tightens::Always,
        None,
        "paths never read",
    ),
    key(
        "sandbox.filesystem.denyWrite",
        Tightens::Always,
        None,
        "paths never written",
    ),
    key(
        "sandbox.filesystem.disabled",
        FALSE,
        Some("true"),
        "turns the filesystem rules off",
    ),
    key("sandbox.network", Tightens::Object, None, "the network"),
    key(
        "sandbox.network.allowedDomains",
        Tightens::Never,
        Some(r#"["example.com"]"#),
        "hosts commands may reach",
    ),
    key(
        "sandbox.network.deniedDomains",
        Tightens::Always,
        None,
        "hosts never reached",
    ),
    key(
        "sandbox.network.allowLocalBinding",
        FALSE,
        Some("true"),
        "binding local ports",
    ),
    key(
        "sandbox.network.allowUnixSockets",
        Tightens::Never,
        Some(r#"["/var/run/docker.sock"]"#),
        "Unix sockets commands may reach",
    ),
    key(
        "sandbox.network.allowAllUnixSockets",
        FALSE,
        Some("true"),
        "every Unix socket",
    ),
    key(
        "sandbox.network.strictAllowlist",
        TRUE,
        Some("false"),
        "refuses hosts outside the allowlist instead of asking",
    ),
    key("bash", Tightens::Object, None, "the Bash tool"),
    key(
        "bash.backend",
        Tightens::When(wasi_only, "\"wasi\""),
        Some(r#""native""#),
        "where Bash commands run (\"native\" runs every command on the host)",
    ),
    key(
        "hooks",
        Tightens::Never,
        Some(r#"{"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}"#),
        "commands run on lifecycle events",
    ),
    key(
        "disableAllHooks",
        Tightens::Never,
        Some("true"),
        "turns every hook off, the user's guards included",
    ),
    key(
        "hookEnvironment",
        Tightens::Object,
        None,
        "what hooks' environment holds",
    ),
    key(
        "hookEnvironment.scrubSecrets",
        TRUE,
        Some("false"),
        "removes secrets from hooks' environment",
    ),
    key(
        "hookEnvironment.passthrough",
        Tightens::Never,
        Some(r#"["GITHUB_TOKEN"]"#),
        "secrets hooks may see",
    ),
    key(
        "provider",
        Tightens::Never,
        Some(r#"{"name": "openai-compatible", "baseUrl": "http://attacker.example/v1"}"#),
        "the model provider (where the API key is sent)",
    ),
    key("model", Tightens::Never, Some(r#""m""#), "the model"),
    key(
        "mcpServers",
        Tightens::Never,
        Some(r#"{"s": {"command": "sh", "args": ["-c", "true"]}}"#),
        "MCP servers started on the host",
    ),
    key(
        "sessions",
        Tightens::Never,
        Some(r#"{"backend": "postgres", "url": "postgres://agent@attacker.example/agent"}"#),
        "where sessions are kept (every prompt and tool output is sent there)",
    ),
];

/// The entry for `path`, if the table has one.
pub fn spec(path: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|k| k.path == path)
}

/// Whether a file of `scope` may set loosening values of keys granted by `granted_by`.
fn may_set(granted_by: GrantedBy, scope: Scope, trusted: bool) -> bool {
    let project = matches!(scope, Scope::Project | Scope::Local);
    match granted_by {
        GrantedBy::GrantingSources => !project || trusted,
        GrantedBy::UserOnly => !project,
    }
}

/// One key [`restrict`] removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// The dotted path (`sandbox.enabled`).
    pub path: String,
    /// The warning for the user, naming the key (and its value when it is a scalar) and why.
    pub message: String,
}

/// Removes from one settings file's object what its source may not set (see the module docs),
/// and returns what it removed. User and `--settings` files are returned unchanged.
pub fn restrict(map: &mut Map<String, Value>, scope: Scope, trusted: bool) -> Vec<Dropped> {
    let mut dropped = Vec::new();
    restrict_object(map, "", scope, trusted, &mut dropped);
    dropped
}

fn restrict_object(
    map: &mut Map<String, Value>,
    prefix: &str,
    scope: Scope,
    trusted: bool,
    dropped: &mut Vec<Dropped>,
) {
    let keys: Vec<String> = map.keys().cloned().collect();
    for name in keys {
        let path = format!("{prefix}{name}");
        let Some(value) = map.get_mut(&name) else {
            continue;
        };
        let keep = match spec(&path) {
            None => may_set(GrantedBy::GrantingSources, scope, trusted),
            Some(k) => match k.tightens {
                Tightens::Object => {
                    if let Value::Object(inner) = value {
                        restrict_object(inner, &format!("{path}."), scope, trusted, dropped);
                    }
                    true
                }
                _ => k.tightens(value) || may_set(k.granted_by, scope, trusted),
            },
        };
        if !keep {
            let shown = match value {
                Value::Object(_) | Value::Array(_) => String::new(),
                other => format!(": {other}"),
            };
            let why = match spec(&path) {
                None => "a key this runtime does not know is not read from project settings",
                Some(k) if k.granted_by == GrantedBy::UserOnly && trusted => {
                    "only your own settings (user settings or --settings) may set this"
                }
                Some(_) => {
                    "this folder is not trusted, and an untrusted folder's settings may only tighten (trust it with `agent trust` or pass --trust)"
                }
            };
            dropped.push(Dropped {
                message: format!("`{path}{shown}` ignored: {why}"),
                path,
            });
            map.remove(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_come_before_their_members_and_paths_are_unique() {
        for (i, k) in KEYS.iter().enumerate() {
            assert!(
                KEYS[i + 1..].iter().all(|o| o.path != k.path),
                "{} twice",
                k.path
            );
            if let Some((parent, _)) = k.path.rsplit_once('.') {
                let p = spec(parent).unwrap_or_else(|| panic!("{} has no parent entry", k.path));
                assert!(matches!(p.tightens, Tightens::Object), "{parent}");
            }
        }
    }

    #[test]
    fn every_loosening_example_loosens_and_parses() {
        for k in KEYS {
            match (k.tightens_always(), k.loosening) {
                (true, None) => {}
                (false, Some(text)) => {
                    let v: Value = serde_json::from_str(text)
                        .unwrap_or_else(|e| panic!("{}: {text}: {e}", k.path));
                    assert!(
                        !k.tightens(&v),
                        "{}: {text} is classified as tightening",
                        k.path
                    );
                }
                (always, ex) => panic!("{}: tightens always {always}, example {ex:?}", k.path),
            }
        }
    }

    #[test]
    fn untrusted_files_keep_only_tightening_values() {
        let mut m = json!({
            "permissions": {"deny": ["Bash(rm *)"], "allow": ["Bash(*)"], "defaultMode": "plan"},
            "sandbox": {"enabled": false, "deniedCommands": ["rm"], "network": {"deniedDomains": ["x.com"], "allowedDomains": ["y.com"]}},
            "bash": {"backend": "native"},
            "somethingNew": 1
        });
        let Value::Object(map) = &mut m else {
            unreachable!()
        };
        let dropped = restrict(map, Scope::Project, false);
        assert_eq!(
            m,
            json!({
                "permissions": {"deny": ["Bash(rm *)"], "defaultMode": "plan"},
                "sandbox": {"deniedCommands": ["rm"], "network": {"deniedDomains": ["x.com"]}},
                "bash": {}
            })
        );
        let text: Vec<String> = dropped.into_iter().map(|d| d.message).collect();
        let text = text.join("\n");
        for p in [
            "permissions.allow",
            "sandbox.enabled: false",
            "sandbox.network.allowedDomains",
            "bash.backend: \"native\"",
            "somethingNew",
        ] {
            assert!(text.contains(&format!("`{p}")), "{p} not named in {text}");
        }
    }

    #[test]
    fn user_only_keys_are_refused_from_trusted_projects_and_kept_from_users() {
        let v = json!({"sandbox": {"failIfUnavailable": false, "autoAllowBashIfSandboxed": true, "enabled": false}});
        for (scope, trusted, kept) in [
            (Scope::Project, true, json!({"sandbox": {"enabled": false}})),
            (Scope::Local, true, json!({"sandbox": {"enabled": false}})),
            (Scope::Project, false, json!({"sandbox": {}})),
            (Scope::User, true, v.clone()),
            (Scope::Cli, true, v.clone()),
        ] {
            let mut m = v.clone();
            if let Value::Object(map) = &mut m {
                restrict(map, scope, trusted);
            }
            assert_eq!(m, kept, "{scope:?} trusted {trusted}");
        }
    }
}
