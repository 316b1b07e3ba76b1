//! The settings trust boundary, key by key: every key of the trust table
//! (`agent_core::settings::trust_table::KEYS`) set to a loosening value in an untrusted
//! project's settings has no effect on anything that reads settings (the merged permission
//! settings, the sandbox settings, the hooks, a Bash decision), and a warning names it; the
//! user-only keys have no effect from a trusted project either; tightening keys still apply.

use std::path::{Path, PathBuf};

use agent_core::hooks::HooksConfig;
use agent_core::permissions::{Behavior, PermissionEngine, PreToolUseOutcome, ToolCall};
use agent_core::settings::trust_table::{GrantedBy, KEYS};
use agent_core::settings::{Settings, SettingsLoader};
use agent_sandbox::settings::SandboxSettings;
use serde_json::{Map, Value, json};

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(home.join(".agent")).unwrap();
        std::fs::create_dir_all(project.join(".agent")).unwrap();
        Self {
            _dir: dir,
            home,
            project,
        }
    }

    fn project_file(&self, value: &Value) {
        std::fs::write(self.project.join(".agent/settings.json"), value.to_string()).unwrap();
    }

    fn user_file(&self, value: &Value) {
        std::fs::write(self.home.join(".agent/settings.json"), value.to_string()).unwrap();
    }

    fn load(&self, trusted: bool) -> Settings {
        SettingsLoader::new(&self.home, &self.project, &self.project)
            .agent_home(&agent_core::home::AgentHome::new(self.home.join(".agent")))
            .trusted(trusted)
            .load()
            .unwrap()
    }
}

/// `{"a": {"b": value}}` for the path `a.b`.
fn nested(path: &str, value: Value) -> Value {
    path.rsplit('.').fold(value, |inner, key| {
        Value::Object(Map::from_iter([(key.to_owned(), inner)]))
    })
}

fn lookup<'a>(map: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut current = map.get(parts.next()?)?;
    for p in parts {
        current = current.get(p)?;
    }
    Some(current)
}

/// Everything that reads settings, in a comparable form.
fn effects(settings: &Settings, home: &Path, project: &Path) -> Value {
    let sandbox = SandboxSettings::from_settings(settings, home).unwrap();
    let hooks = HooksConfig::from_settings(settings).unwrap();
    let engine = PermissionEngine::builder(project, home)
        .settings(settings)
        .build()
        .unwrap();
    let decide = |cmd: &str| {
        engine
            .check(
                &ToolCall::new("Bash", json!({"command": cmd})),
                &PreToolUseOutcome::default(),
            )
            .behavior
    };
    let per_file: Vec<Value> = settings
        .files
        .iter()
        .map(|f| {
            // Keys that only the CLI reads (bash, provider, model, mcpServers) are compared
            // through the file's object as the CLI sees it.
            json!([
                lookup(&f.value, "bash.backend"),
                f.value.get("provider"),
                f.value.get("model"),
                f.value.get("mcpServers"),
            ])
        })
        .collect();
    json!({
        "allow": settings.allow.len(),
        "deny": settings.deny.len(),
        "ask": settings.ask.len(),
        "dirs": settings.additional_directories,
        "mode": format!("{:?}", settings.mode(None).ok()),
        "bypassDisabled": settings.bypass_disabled_by.is_some(),
        "autoDisabled": settings.auto_disabled_by.is_some(),
        "autoAllowBash": settings.auto_allow_bash_if_sandboxed,
        "osSandboxOff": settings.os_sandbox_off().is_some(),
        "sandbox": format!("{sandbox:?}"),
        "hooks": hooks.hooks.len(),
        "hooksDisabled": hooks.disabled_by.is_some(),
        "hookEnv": format!("{:?}", hooks.environment),
        "files": per_file,
        "echo": format!("{:?}", decide("echo pwned > pwned.txt")),
        "python": format!("{:?}", decide("python3 -c 'print(1)'")),
    })
}

#[test]
fn every_loosening_value_from_an_untrusted_project_has_no_effect_and_is_named() {
    let f = Fixture::new();
    f.project_file(&json!({}));
    let baseline = effects(&f.load(false), &f.home, &f.project);
    let mut checked = 0;
    for key in KEYS {
        let Some(text) = key.loosening else { continue };
        let value: Value = serde_json::from_str(text).unwrap();
        f.project_file(&nested(key.path, value));
        let settings = f.load(false);
        let project = settings
            .files
            .iter()
            .find(|file| file.path.starts_with(&f.project))
            .unwrap();
        assert!(
            lookup(&project.value, key.path).is_none(),
            "{}: still in the untrusted file",
            key.path
        );
        assert!(
            settings
                .warnings
                .iter()
                .any(|w| w.contains(&format!("`{}", key.path)) && w.contains("not trusted")),
            "{}: no warning names it: {:?}",
            key.path,
            settings.warnings
        );
        assert_eq!(
            effects(&settings, &f.home, &f.project),
            baseline,
            "{}: {text} changed something from an untrusted project",
            key.path
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} keys checked");
}

#[test]
fn user_only_keys_have_no_effect_from_a_trusted_project_either() {
    let f = Fixture::new();
    f.user_file(&json!({"sandbox": {"enabled": true}}));
    f.project_file(&json!({}));
    let baseline = effects(&f.load(true), &f.home, &f.project);
    for key in KEYS.iter().filter(|k| k.granted_by == GrantedBy::UserOnly) {
        let value: Value = serde_json::from_str(key.loosening.unwrap()).unwrap();
        f.project_file(&nested(key.path, value));
        let settings = f.load(true);
        assert_eq!(
            effects(&settings, &f.home, &f.project),
            baseline,
            "{}",
            key.path
        );
        assert!(
            settings
                .warnings
                .iter()
                .any(|w| w.contains(&format!("`{}", key.path)) && w.contains("your own settings")),
            "{}: {:?}",
            key.path,
            settings.warnings
        );
    }
}

#[test]
fn tightening_values_from_an_untrusted_project_apply() {
    let f = Fixture::new();
    f.project_file(&json!({
        "permissions": {"deny": ["Bash(echo *)"], "ask": ["Bash(ls *)"], "defaultMode": "plan"},
        "sandbox": {"deniedCommands": ["rm"], "network": {"deniedDomains": ["evil.example"]},
                    "filesystem": {"denyRead": ["./secret"]}, "enabled": true, "failIfUnavailable": true},
        "bash": {"backend": "wasi"},
        "hookEnvironment": {"scrubSecrets": true}
    }));
    let s = f.load(false);
    assert_eq!((s.deny.len(), s.ask.len()), (1, 1));
    assert_eq!(
        s.mode(None).unwrap(),
        agent_core::permissions::PermissionMode::Plan
    );
    // `enabled: true` restricts, but a project never earns auto-approval with it.
    assert!(s.sandbox_enabled && !s.auto_allow_bash_if_sandboxed);
    let sandbox = SandboxSettings::from_settings(&s, &f.home).unwrap();
    assert_eq!(sandbox.denied_commands, ["rm"]);
    assert_eq!(sandbox.network.denied_domains, ["evil.example"]);
    assert_eq!(sandbox.denied_read_paths, [f.project.join("secret")]);
    let project = s
        .files
        .iter()
        .find(|x| x.path.starts_with(&f.project))
        .unwrap();
    assert_eq!(lookup(&project.value, "bash.backend"), Some(&json!("wasi")));
    assert!(
        HooksConfig::from_settings(&s)
            .unwrap()
            .environment
            .scrub_secrets
    );
}

#[test]
fn auto_allow_bash_needs_the_users_own_sandbox_setting() {
    let f = Fixture::new();
    let echo = |s: &Settings| {
        PermissionEngine::builder(&f.project, &f.home)
            .settings(s)
            .build()
            .unwrap()
            .check(
                &ToolCall::new("Bash", json!({"command": "echo pwned > pwned.txt"})),
                &PreToolUseOutcome::default(),
            )
            .behavior
    };
    // A project, trusted or not, turning the sandbox on approves nothing.
    f.project_file(&json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}}));
    for trusted in [false, true] {
        let s = f.load(trusted);
        assert!(!s.auto_allow_bash_if_sandboxed, "trusted {trusted}");
        assert_ne!(echo(&s), Behavior::Allow, "trusted {trusted}");
    }
    // The user's own `enabled: true` does (the option defaults to true, as in Claude Code)...
    f.project_file(&json!({}));
    f.user_file(&json!({"sandbox": {"enabled": true}}));
    assert_eq!(echo(&f.load(false)), Behavior::Allow);
    // ...unless the user turned the option off, or a trusted project turned the sandbox off.
    f.user_file(&json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false}}));
    assert_ne!(echo(&f.load(false)), Behavior::Allow);
    f.user_file(&json!({"sandbox": {"enabled": true}}));
    f.project_file(&json!({"sandbox": {"enabled": false}}));
    let s = f.load(true);
    assert!(!s.auto_allow_bash_if_sandboxed && s.os_sandbox_off().is_some());
    assert_ne!(echo(&s), Behavior::Allow);
    // An untrusted project cannot turn the user's sandbox off.
    let s = f.load(false);
    assert!(s.auto_allow_bash_if_sandboxed && s.os_sandbox_off().is_none());
}
