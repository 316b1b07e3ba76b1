//! Settings files on disk: precedence, merging, trust, Claude sources, malformed files.

use std::path::{Path, PathBuf};

use agent_core::permissions::{
    Behavior, PermissionEngine, PermissionMode, PreToolUseOutcome, Step, ToolCall,
};
use agent_core::settings::{
    SettingSources, Settings, SettingsError, SettingsLoader, TrustedFolders,
};
use serde_json::json;

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let project = root.join("proj");
        std::fs::create_dir_all(home.join(".agent")).unwrap();
        std::fs::create_dir_all(project.join(".agent")).unwrap();
        Self {
            _tmp: tmp,
            home,
            project,
        }
    }

    fn write(&self, rel: &str, value: serde_json::Value) -> PathBuf {
        let path = if let Some(r) = rel.strip_prefix("~/") {
            self.home.join(r)
        } else {
            self.project.join(rel)
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        path
    }

    fn loader(&self) -> SettingsLoader {
        SettingsLoader::new(&self.home, &self.project, &self.project)
    }

    fn engine(&self, settings: &Settings) -> PermissionEngine {
        PermissionEngine::builder(&self.project, &self.home)
            .settings(settings)
            .mode(settings.mode(None).unwrap())
            .build()
            .unwrap()
    }
}

fn bash(e: &PermissionEngine, cmd: &str) -> (Behavior, Step) {
    let d = e.check(
        &ToolCall::new("Bash", json!({"command": cmd})),
        &PreToolUseOutcome::default(),
    );
    (d.behavior, d.step)
}

#[test]
fn deny_anywhere_beats_allow_anywhere() {
    let f = Fixture::new();
    f.write(
        "~/.agent/settings.json",
        json!({"permissions": {"deny": ["Bash(npm publish)"], "allow": ["Bash(git push *)"]}}),
    );
    f.write(
        ".agent/settings.json",
        json!({"permissions": {"allow": ["Bash(npm publish)"], "deny": ["Bash(git push *)"]}}),
    );
    f.write(
        ".agent/settings.local.json",
        json!({"permissions": {"allow": ["Bash(npm *)"], "ask": ["Bash(npm test)"]}}),
    );
    let s = f.loader().trusted(true).load().unwrap();
    let e = f.engine(&s);
    assert_eq!(
        bash(&e, "npm publish"),
        (Behavior::Deny, Step::DenyRule),
        "user deny beats project allow"
    );
    assert_eq!(
        bash(&e, "git push x"),
        (Behavior::Deny, Step::DenyRule),
        "project deny beats user allow"
    );
    assert_eq!(
        bash(&e, "npm test"),
        (Behavior::Ask, Step::AskRule),
        "local allow does not outrank an ask"
    );
    assert_eq!(bash(&e, "npm install"), (Behavior::Allow, Step::AllowRule));
}

#[test]
fn lists_concatenate_without_duplicates_and_scalars_follow_precedence() {
    let f = Fixture::new();
    f.write("~/.agent/settings.json", json!({"permissions": {"allow": ["Bash(make *)"], "defaultMode": "plan"}, "sandbox": {"enabled": true}}));
    f.write(".agent/settings.json", json!({"permissions": {"allow": ["Bash(make *)", "Bash(ls)"], "defaultMode": "acceptEdits"}}));
    let cli = f.write(
        "cli.json",
        json!({"permissions": {"defaultMode": "dontAsk"}, "sandbox": {"enabled": false}}),
    );
    let s = f.loader().trusted(true).load().unwrap();
    assert_eq!(s.allow.len(), 2, "duplicates across files collapse");
    assert_eq!(
        s.mode(None).unwrap(),
        PermissionMode::AcceptEdits,
        "project beats user"
    );
    assert!(s.sandbox_enabled);
    let s = f.loader().trusted(true).settings_file(&cli).load().unwrap();
    assert_eq!(
        s.mode(None).unwrap(),
        PermissionMode::DontAsk,
        "--settings beats project"
    );
    assert!(!s.sandbox_enabled);
    assert_eq!(
        s.mode(Some(PermissionMode::Default)).unwrap(),
        PermissionMode::Default,
        "an explicit mode wins"
    );
    assert_eq!(s.files.len(), 3);
}

#[test]
fn untrusted_project_keeps_its_denies_but_not_its_allows() {
    let f = Fixture::new();
    f.write(
        ".agent/settings.json",
        json!({"permissions": {
        "allow": ["Bash(curl *)"], "deny": ["Bash(rm *)"], "ask": ["Bash(git push *)"],
        "additionalDirectories": ["../shared"], "defaultMode": "bypassPermissions"}}),
    );
    let s = f.loader().load().unwrap();
    assert!(!s.project_trusted);
    assert!(s.allow.is_empty() && s.additional_directories.is_empty() && s.default_mode.is_none());
    assert!(
        s.warnings.iter().any(|w| w.contains("not trusted")),
        "{:?}",
        s.warnings
    );
    let e = f.engine(&s);
    assert_eq!(bash(&e, "curl x").0, Behavior::Ask);
    assert_eq!(bash(&e, "rm x").0, Behavior::Deny);
    assert_eq!(bash(&e, "git push").1, Step::AskRule);
    // Trusting the folder through the store applies the rest.
    TrustedFolders::load(f.home.join(".agent/trust.json"))
        .unwrap()
        .trust(&f.project)
        .unwrap();
    let s = f.loader().load().unwrap();
    assert!(s.project_trusted);
    assert_eq!(s.allow.len(), 1);
    assert_eq!(s.additional_directories, vec![f.project.join("../shared")]);
    assert_eq!(s.mode(None).unwrap(), PermissionMode::BypassPermissions);
}

#[test]
fn malformed_files_are_refused_whole_with_file_index_and_reason() {
    let f = Fixture::new();
    let p = f.write(
        ".agent/settings.json",
        json!({"permissions": {"deny": ["Bash(rm *)", "Read(src/[a)"]}}),
    );
    let err = f.loader().load().unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, SettingsError::Rule { index: 1, .. }));
    assert!(
        msg.contains(&p.display().to_string())
            && msg.contains("permissions.deny[1]")
            && msg.contains("invalid glob"),
        "{msg}"
    );

    f.write(
        ".agent/settings.json",
        json!({"permissions": {"allow": ["Bash(ls)", 7]}}),
    );
    let msg = f.loader().load().unwrap_err().to_string();
    assert!(
        msg.contains("permissions.allow[1]") && msg.contains("must be a string"),
        "{msg}"
    );

    std::fs::write(
        f.project.join(".agent/settings.json"),
        "{\n  \"permissions\": {,\n}",
    )
    .unwrap();
    let msg = f.loader().load().unwrap_err().to_string();
    assert!(
        msg.contains(":2:") && msg.contains("not valid JSON"),
        "{msg}"
    );

    f.write(
        ".agent/settings.json",
        json!({"permissions": {"defaultMode": "yolo"}}),
    );
    let msg = f.loader().load().unwrap_err().to_string();
    assert!(
        msg.contains("permissions.defaultMode") && msg.contains("acceptEdits"),
        "{msg}"
    );

    f.write(".agent/settings.json", json!({"permissions": []}));
    assert!(
        f.loader()
            .load()
            .unwrap_err()
            .to_string()
            .contains("must be an object")
    );

    f.write(".agent/settings.json", json!({"hooks": []}));
    assert!(
        f.loader()
            .load()
            .unwrap_err()
            .to_string()
            .contains("`hooks`")
    );

    f.write(".agent/settings.json", json!({}));
    let missing = f.project.join("nope.json");
    assert!(matches!(
        f.loader().settings_file(&missing).load(),
        Err(SettingsError::Io { .. })
    ));
}

#[test]
fn ignored_rules_warn_instead_of_failing() {
    let s = Settings::from_value(
        json!({"permissions": {"allow": ["*", "Agent(model:opus)", "Write(src/**)"], "deny": ["Bash(command:rm *)", "Write(.env)"]}}),
        "x.json",
        Path::new("/p"),
        Path::new("/h"),
    )
    .unwrap();
    assert_eq!(s.allow.len(), 0);
    assert_eq!(s.deny.len(), 1, "Write(path) deny applies to Write");
    assert_eq!(s.warnings.len(), 5, "{:?}", s.warnings);
}

#[test]
fn claude_sources_load_by_default_below_agent_files() {
    let f = Fixture::new();
    f.write(
        "~/.claude/settings.json",
        json!({"permissions": {"deny": ["Bash(curl *)"], "defaultMode": "plan"}}),
    );
    f.write(
        ".claude/settings.json",
        json!({"permissions": {"allow": ["Bash(make)"]}}),
    );
    f.write(
        ".agent/settings.json",
        json!({"permissions": {"defaultMode": "acceptEdits"}}),
    );
    let off: SettingSources = "user,project,local".parse().unwrap();
    let s = f.loader().trusted(true).sources(off).load().unwrap();
    assert!(
        s.deny.is_empty(),
        "claude files are off when the source is left out"
    );
    let s = f.loader().trusted(true).load().unwrap();
    assert_eq!(s.deny.len(), 1);
    assert_eq!(s.allow.len(), 1);
    assert_eq!(
        s.mode(None).unwrap(),
        PermissionMode::AcceptEdits,
        ".agent wins over .claude at the same scope"
    );
    assert!(s.files.iter().any(|f| f.claude));
    assert!("user,bogus".parse::<SettingSources>().is_err());
    // An untrusted project's `.claude/` files may not grant, as its `.agent/` files.
    let s = f.loader().trusted(false).load().unwrap();
    assert!(s.allow.is_empty(), "{:?}", s.allow);
    assert_eq!(s.deny.len(), 1, "the user's own ~/.claude deny holds");
}

#[test]
fn slash_paths_anchor_at_the_settings_source() {
    let f = Fixture::new();
    f.write(
        "~/.agent/settings.json",
        json!({"permissions": {"deny": ["Read(/secrets/**)"]}}),
    );
    f.write(
        ".agent/settings.json",
        json!({"permissions": {"deny": ["Edit(/locked/**)"]}}),
    );
    let cli = f.write(
        "conf/cli.json",
        json!({"permissions": {"deny": ["Read(/cli-only/**)"]}}),
    );
    let s = f.loader().trusted(true).settings_file(&cli).load().unwrap();
    let e = f.engine(&s);
    let read = |p: &Path| {
        e.check(
            &ToolCall::new("Read", json!({"file_path": p})),
            &PreToolUseOutcome::default(),
        )
        .behavior
    };
    let write = |p: &Path| {
        e.check(
            &ToolCall::new("Write", json!({"file_path": p, "content": ""})),
            &PreToolUseOutcome::default(),
        )
        .behavior
    };
    assert_eq!(read(&f.home.join(".agent/secrets/k")), Behavior::Deny);
    assert_ne!(read(&f.project.join("secrets/k")), Behavior::Deny);
    assert_eq!(write(&f.project.join("locked/x")), Behavior::Deny);
    assert_eq!(read(&f.project.join("conf/cli-only/x")), Behavior::Deny);
}

#[test]
fn disabled_modes_are_refused() {
    let f = Fixture::new();
    f.write("~/.agent/settings.json", json!({"permissions": {"disableBypassPermissionsMode": "disable", "disableAutoMode": "disable"}}));
    let s = f.loader().load().unwrap();
    assert!(
        s.mode(Some(PermissionMode::BypassPermissions))
            .unwrap_err()
            .to_string()
            .contains("disableBypassPermissionsMode")
    );
    assert!(s.mode(Some(PermissionMode::Auto)).is_err());
    assert_eq!(
        s.mode(Some(PermissionMode::Plan)).unwrap(),
        PermissionMode::Plan
    );
}

#[test]
fn symlinks_need_both_forms_for_allow_and_either_for_deny() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.project.join("src")).unwrap();
    let outside = f.project.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "x").unwrap();
    std::os::unix::fs::symlink(&outside, f.project.join("src/link")).unwrap();
    let s = Settings::from_value(
        json!({"permissions": {"allow": ["Edit(./src/**)"], "deny": [format!("Read(/{}/**)", outside.display())]}}),
        "x", &f.project, &f.home,
    )
    .unwrap();
    let e = PermissionEngine::builder(&f.project, &f.home)
        .settings(&s)
        .build()
        .unwrap();
    let none = PreToolUseOutcome::default();
    let d = e.check(
        &ToolCall::new("Read", json!({"file_path": "src/link/secret.txt"})),
        &none,
    );
    assert_eq!(
        d.behavior,
        Behavior::Deny,
        "deny fires on the target: {}",
        d.reason
    );
    let d = e.check(
        &ToolCall::new("Edit", json!({"file_path": "src/link/new.txt"})),
        &none,
    );
    assert_eq!(
        d.behavior,
        Behavior::Deny,
        "Read deny on the target blocks the edit too"
    );
    let s2 = Settings::from_value(
        json!({"permissions": {"allow": ["Edit(./src/**)"]}}),
        "x",
        &f.project,
        &f.home,
    )
    .unwrap();
    let e2 = PermissionEngine::builder(&f.project, &f.home)
        .settings(&s2)
        .build()
        .unwrap();
    let d = e2.check(
        &ToolCall::new("Edit", json!({"file_path": "src/link/new.txt"})),
        &none,
    );
    assert_eq!(
        d.behavior,
        Behavior::Ask,
        "the allow matches the link path only, not the target"
    );
    let d = e2.check(
        &ToolCall::new("Read", json!({"file_path": "src/link/secret.txt"})),
        &none,
    );
    assert_eq!(
        d.behavior,
        Behavior::Ask,
        "a read through a symlink leaving the project is not inside it"
    );
}

#[test]
fn the_projects_rules_hold_in_its_shadow_copy() {
    let f = Fixture::new();
    let shadow = f.home.join("shadow");
    std::fs::create_dir_all(shadow.join("secrets")).unwrap();
    std::fs::create_dir_all(shadow.join("src")).unwrap();
    std::fs::write(shadow.join("secrets/k"), "k").unwrap();
    std::fs::write(shadow.join("src/a.py"), "a").unwrap();
    std::fs::create_dir_all(shadow.join("vendor")).unwrap();
    let vendor = f.project.join("vendor").display().to_string();
    f.write(
        ".agent/settings.json",
        json!({"permissions": {
            "deny": ["Read(/secrets/**)", format!("Edit(/{vendor}/**)")],
            "allow": ["Edit(/src/**)"]
        }}),
    );
    let s = f.loader().trusted(true).load().unwrap();
    let engine = PermissionEngine::builder(&shadow, &f.home)
        .settings(&s)
        .shadow_of(&f.project, &shadow)
        .build()
        .unwrap();
    let decide = |tool: &str, path: &Path| {
        engine
            .check(
                &ToolCall::new(
                    tool,
                    json!({"file_path": path, "old_string": "a", "new_string": "b"}),
                ),
                &PreToolUseOutcome::default(),
            )
            .behavior
    };
    assert_eq!(decide("Read", &shadow.join("secrets/k")), Behavior::Deny);
    assert_eq!(decide("Read", &f.project.join("secrets/k")), Behavior::Deny);
    assert_eq!(decide("Edit", &shadow.join("src/a.py")), Behavior::Allow);
    assert_eq!(decide("Edit", &shadow.join("vendor/x.py")), Behavior::Deny);
    // Without the view, the project's anchored rules do not reach the copy.
    let blind = PermissionEngine::builder(&shadow, &f.home)
        .settings(&s)
        .build()
        .unwrap();
    let read = blind.check(
        &ToolCall::new("Read", json!({"file_path": shadow.join("secrets/k")})),
        &PreToolUseOutcome::default(),
    );
    assert_ne!(read.behavior, Behavior::Deny);
}

#[test]
fn a_deny_rule_on_a_home_file_holds_with_repeated_slashes() {
    let f = Fixture::new();
    f.write(
        "~/.agent/settings.json",
        json!({"permissions": {"deny": ["Edit(~/.bashrc)"], "allow": ["Bash(echo *)"]}}),
    );
    let s = f.loader().trusted(true).load().unwrap();
    let e = f.engine(&s);
    for cmd in [
        "echo x > ~//.bashrc",
        "echo x > $HOME//.bashrc",
        "echo x >> ~///.bashrc",
    ] {
        let (behavior, _) = bash(&e, cmd);
        assert_eq!(behavior, Behavior::Deny, "{cmd}");
    }
}

#[test]
fn an_unknown_key_is_warned_once_per_file_naming_the_file_and_the_key_meant() {
    let f = Fixture::new();
    let user = f.write(
        "~/.agent/settings.json",
        json!({"permisions": {"deny": ["Bash(curl *)"]}, "sandbox": {"enabeld": true}}),
    );
    let project = f.write(
        ".claude/settings.json",
        json!({"permissions": {"alow": ["Read"]}, "statusLine": {"type": "command"}, "enabledPlugins": {}}),
    );
    let s = f.loader().load().unwrap();
    let about = |path: &Path| -> Vec<&String> {
        s.warnings
            .iter()
            .filter(|w| w.starts_with(&format!("{}:", path.display())))
            .collect()
    };
    let user_warnings = about(&user);
    assert_eq!(user_warnings.len(), 1, "{:?}", s.warnings);
    assert_eq!(
        user_warnings[0],
        &format!(
            "{}: unknown settings keys ignored: `permisions` (did you mean `permissions`?), `sandbox.enabeld` (did you mean `sandbox.enabled`?)",
            user.display()
        )
    );
    // The untrusted project's Claude Code-only keys draw no warning; its typo does.
    let project_warnings = about(&project);
    assert_eq!(project_warnings.len(), 1, "{:?}", s.warnings);
    assert!(
        project_warnings[0].contains("`permissions.alow` (did you mean `permissions.allow`?)"),
        "{}",
        project_warnings[0]
    );
    assert!(s.deny.is_empty(), "the misspelt block is not read");
}
