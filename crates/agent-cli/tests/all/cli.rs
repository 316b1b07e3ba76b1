//! The `agent` binary, driven as a user would: every verb, exit codes, one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let project = root.join("proj");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join(".agent")).unwrap();
        Self {
            _tmp: tmp,
            home,
            project,
        }
    }

    fn agent(&self, args: &[&str]) -> Output {
        self.agent_with_env(args, &[])
    }

    fn agent_with_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_agent"))
            .args(args)
            .env("HOME", &self.home)
            .env_remove("AGENT_HOME")
            .env_remove("AGENT_SETTING_SOURCES")
            .envs(vars.iter().copied())
            .current_dir(&self.project)
            .output()
            .unwrap()
    }

    fn check(&self, extra: &[&str], tool: &str, input: Value) -> (Value, String) {
        let input = input.to_string();
        let mut args = vec!["permissions", "check", "--tool", tool, "--input", &input];
        args.extend_from_slice(extra);
        let out = self.agent(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "one JSON object: {stdout}");
        (
            serde_json::from_str(&stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    fn write(&self, path: &Path, v: Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, v.to_string()).unwrap();
    }
}

fn example() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/settings.json").to_owned()
}

#[test]
fn check_prints_decision_step_rule_and_reason() {
    let env = Env::new();
    let ex = example();
    let (v, _) = env.check(
        &["--settings", &ex],
        "Bash",
        json!({"command": "git status && curl x | sh"}),
    );
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["step"], "deny_rule");
    assert_eq!(v["stepNumber"], 2);
    assert_eq!(v["rule"], "Bash(curl *)");
    assert!(
        v["ruleSource"]
            .as_str()
            .unwrap()
            .ends_with("settings.json#permissions.deny[1]")
    );
    let (v, _) = env.check(
        &["--settings", &ex],
        "Bash",
        json!({"command": "git status"}),
    );
    assert_eq!(
        (v["decision"].as_str(), v["rule"].as_str()),
        (Some("allow"), Some("Bash(git status)"))
    );
    let (v, _) = env.check(
        &["--settings", &ex],
        "Bash",
        json!({"command": "npm install"}),
    );
    assert_eq!(v["decision"], "ask", "no prompter: ask stays ask");
    assert_eq!(v["suggestions"][0], "Bash(npm install *)");
    let (v, _) = env.check(
        &["--settings", &ex, "--mode", "dontAsk"],
        "Bash",
        json!({"command": "npm install"}),
    );
    assert_eq!(v["decision"], "deny");
    let (v, _) = env.check(
        &["--settings", &ex, "--mode", "plan"],
        "Edit",
        json!({"file_path": "src/x.rs"}),
    );
    assert_eq!(
        (v["decision"].as_str(), v["step"].as_str()),
        (Some("deny"), Some("mode"))
    );
}

#[test]
fn user_project_and_local_settings_are_found() {
    let env = Env::new();
    env.write(
        &env.home.join(".agent/settings.json"),
        json!({"permissions": {"deny": ["Bash(npm publish)"]}}),
    );
    env.write(
        &env.project.join(".agent/settings.json"),
        json!({"permissions": {"allow": ["Bash(npm *)"]}}),
    );
    let (v, stderr) = env.check(&[], "Bash", json!({"command": "npm install"}));
    assert_eq!(v["decision"], "ask", "untrusted project allow is ignored");
    assert!(
        stderr.contains("agent: warning:") && stderr.contains("not trusted"),
        "{stderr}"
    );
    let (v, _) = env.check(&["--trust"], "Bash", json!({"command": "npm install"}));
    assert_eq!(v["decision"], "allow");
    let (v, _) = env.check(&["--trust"], "Bash", json!({"command": "npm publish"}));
    assert_eq!(v["decision"], "deny");
    // `agent trust` persists trust.
    let out = env.agent(&["trust"]);
    assert_eq!(out.status.code(), Some(0));
    let (v, stderr) = env.check(&[], "Bash", json!({"command": "npm install"}));
    assert_eq!(v["decision"], "allow");
    assert!(stderr.is_empty(), "{stderr}");
    let listed: Value = serde_json::from_slice(&env.agent(&["trust", "--list"]).stdout).unwrap();
    assert_eq!(listed[0]["path"], json!(env.project));
    assert_eq!(env.agent(&["trust", "--revoke"]).status.code(), Some(0));
    assert_eq!(
        env.check(&[], "Bash", json!({"command": "npm install"})).0["decision"],
        "ask"
    );
    // --project-dir and --cwd.
    let other = env.home.join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let proj = env.project.to_string_lossy().to_string();
    let (v, _) = env.check(
        &[
            "--cwd",
            other.to_str().unwrap(),
            "--project-dir",
            &proj,
            "--trust",
        ],
        "Bash",
        json!({"command": "npm install"}),
    );
    assert_eq!(v["decision"], "allow");
    let (v, _) = env.check(
        &["--cwd", other.to_str().unwrap()],
        "Read",
        json!({"file_path": "x"}),
    );
    assert_eq!(v["step"], "mode", "reads inside the given cwd");
}

#[test]
fn claude_settings_load_by_default_and_turn_off_with_setting_sources() {
    let env = Env::new();
    env.write(
        &env.home.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Bash(curl *)"]}}),
    );
    env.write(
        &env.project.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Bash(wget *)"], "allow": ["Bash(npm install)"]}}),
    );
    env.write(
        &env.project.join(".claude/settings.local.json"),
        json!({"permissions": {"deny": ["Bash(scp *)"]}}),
    );
    for command in ["curl x", "wget x", "scp x y"] {
        let (v, _) = env.check(&[], "Bash", json!({"command": command}));
        assert_eq!(v["decision"], "deny", "{command}: {v}");
    }
    // The untrusted project's allow rule does not grant.
    let (v, stderr) = env.check(&[], "Bash", json!({"command": "npm install"}));
    assert_eq!(v["decision"], "ask", "{v}");
    assert!(stderr.contains("not trusted"), "{stderr}");
    let (v, _) = env.check(
        &["--setting-sources", "user,project,local"],
        "Bash",
        json!({"command": "curl x"}),
    );
    assert_eq!(v["decision"], "ask");
    let off = env
        .agent_with_env(
            &[
                "permissions",
                "check",
                "--tool",
                "Bash",
                "--input",
                r#"{"command": "curl x"}"#,
            ],
            &[("AGENT_SETTING_SOURCES", "user,project,local")],
        )
        .stdout;
    let v: Value = serde_json::from_slice(&off).unwrap();
    assert_eq!(v["decision"], "ask", "{v}");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let env = Env::new();
    env.write(
        &env.project.join("bad.json"),
        json!({"permissions": {"deny": ["Bash(rm"]}}),
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["permissions", "check", "--tool", "Bash", "--input", "nope"],
            "not valid JSON",
        ),
        (
            vec!["permissions", "check", "--tool", "Bash", "--input", "[1]"],
            "must be a JSON object",
        ),
        (vec!["permissions", "check", "--tool", "Bash"], "--input"),
        (
            vec![
                "permissions",
                "check",
                "--tool",
                "Bash",
                "--input",
                "{}",
                "--mode",
                "yolo",
            ],
            "yolo",
        ),
        (
            vec![
                "permissions",
                "check",
                "--tool",
                "Bash",
                "--input",
                "{}",
                "--settings",
                "missing.json",
            ],
            "missing.json",
        ),
        (
            vec![
                "permissions",
                "check",
                "--tool",
                "Bash",
                "--input",
                "{}",
                "--settings",
                "bad.json",
            ],
            "permissions.deny[0]",
        ),
        (
            vec![
                "permissions",
                "check",
                "--tool",
                "Bash",
                "--input",
                "{}",
                "--setting-sources",
                "user,nope",
            ],
            "nope",
        ),
        (vec!["bogus"], "bogus"),
    ];
    for (args, want) in cases {
        let out = env.agent(&args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("agent: error: ") && stderr.contains(want),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_exits_0() {
    let env = Env::new();
    let out = env.agent(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("permissions"));
    let out = env.agent(&["permissions", "check", "--help"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("--project-dir"));
}

#[test]
fn an_unknown_settings_key_is_warned_once_with_the_key_meant() {
    let env = Env::new();
    let file = env.project.join(".agent/settings.json");
    env.write(&file, json!({"permisions": {"deny": ["Bash(curl *)"]}}));
    let (v, stderr) = env.check(&[], "Bash", json!({"command": "curl x"}));
    assert_eq!(v["decision"], "ask", "the misspelt block is not read: {v}");
    let expected = format!(
        "agent: warning: {}: unknown settings key ignored: `permisions` (did you mean `permissions`?)",
        file.display()
    );
    assert_eq!(
        stderr.lines().filter(|l| *l == expected).count(),
        1,
        "{stderr}"
    );
}
