//! One key casing in every verb's JSON output (issue 27, part 7; docs/cli.md, "JSON output"):
//! each verb that prints JSON (with `--json`, or always) is run here, and no key of what it
//! prints holds a `_`, except inside the values that are someone else's data: a tool's input
//! (`input`, `updatedInput`: the tool's own parameter names) and the events `sessions show
//! --json` prints exactly as logged.

use crate::support::model;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Keys whose values are someone else's data, not looked into.
const PASSTHROUGH: &[&str] = &["input", "updatedInput"];

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
        std::fs::create_dir_all(home.join(".agent")).unwrap();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(project.join("a.txt"), "one\n").unwrap();
        std::fs::write(
            project.join("hooks.json"),
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"additionalContext\": \"hi\"}}'", "statusMessage": "checking"}]}]}}"#,
        )
        .unwrap();
        Self {
            _tmp: tmp,
            home,
            project,
        }
    }

    /// Runs `agent ARGS` in the project; its stdout, after checking it exited 0.
    fn stdout(&self, args: &[&str]) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_agent"))
            .args(args)
            .env("HOME", &self.home)
            .env("AGENT_HOME", self.home.join(".agent"))
            .env_remove("AGENT_SETTING_SOURCES")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .current_dir(&self.project)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "agent {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The JSON values `agent ARGS` prints (one per line, or one pretty-printed document).
    fn json(&self, args: &[&str]) -> Vec<Value> {
        let text = self.stdout(args);
        let values: Vec<Value> = match serde_json::from_str(&text) {
            Ok(v) => vec![v],
            Err(_) => text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    serde_json::from_str(l)
                        .unwrap_or_else(|e| panic!("agent {}: not JSON ({e}): {l}", args.join(" ")))
                })
                .collect(),
        };
        assert!(
            !values.is_empty(),
            "agent {} printed nothing",
            args.join(" ")
        );
        values
    }
}

/// The dotted paths of the keys holding `_` in `v`.
fn snake_keys(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, inner) in map {
                let path = format!("{at}.{k}");
                if k.contains('_') {
                    out.push(path.clone());
                }
                if !PASSTHROUGH.contains(&k.as_str()) {
                    snake_keys(inner, &path, out);
                }
            }
        }
        Value::Array(items) => {
            for i in items {
                snake_keys(i, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

fn assert_camel(what: &str, values: &[Value]) {
    let mut found = Vec::new();
    for v in values {
        snake_keys(v, "", &mut found);
    }
    found.sort();
    found.dedup();
    assert!(found.is_empty(), "{what}: keys with `_`: {found:?}");
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

#[test]
fn every_verbs_json_output_uses_camel_case_keys() {
    let e = Env::new();
    let p = e.project.to_str().unwrap().to_owned();
    let hooks = e.project.join("hooks.json");
    let hooks = hooks.to_str().unwrap();
    let verbs: Vec<Vec<&str>> = vec![
        vec![
            "permissions",
            "check",
            "--tool",
            "Bash",
            "--input",
            r#"{"command": "curl x"}"#,
        ],
        vec!["trust", &p],
        vec!["trust", "--list"],
        vec![
            "hooks",
            "run",
            "--settings",
            hooks,
            "--event",
            "PreToolUse",
            "--input",
            r#"{"tool_name": "Bash", "tool_input": {"command": "ls"}}"#,
        ],
        vec!["hooks", "list", "--settings", hooks, "--json"],
        vec!["sandbox", "check-path", "--op", "read", "a.txt"],
        vec!["sandbox", "check-command", "ls"],
        vec!["tool", "Read", "--input", r#"{"file_path": "a.txt"}"#],
        vec!["demo", "--json"],
        vec!["sessions", "list", "--json"],
        vec!["workspace", "import", &p, "--json"],
        vec!["workspace", "status", "--json"],
        vec!["keys", "generate", "--id", "k1", "--json"],
        vec!["keys", "list", "--json"],
    ];
    for args in &verbs {
        assert_camel(&args.join(" "), &e.json(args));
    }
    // A change in the shadow, then its commit.
    let shadow = e.json(&["workspace", "status", "--json"])[0]["shadow"]
        .as_str()
        .map(PathBuf::from);
    if let Some(shadow) = shadow {
        std::fs::write(shadow.join("a.txt"), "two\n").unwrap();
        assert_camel(
            "workspace commit",
            &e.json(&["workspace", "commit", "--yes", "--json"]),
        );
    }
    // `agent run --json` against the loopback model server.
    let url = model::serve(vec![model::text("done")]);
    assert_camel(
        "run --json",
        &e.json(&[
            "run",
            "hello",
            "--provider",
            "openai-compatible",
            "--base-url",
            &url,
            "--model",
            "m",
            "--no-commit",
            "--json",
        ]),
    );
    // The bundle verbs, when the registry is built (`cargo xtask bundles`).
    let registry = target_dir().join("bundles/registry");
    if registry.join("index.json").exists() {
        let r = registry.to_str().unwrap();
        for args in [
            vec![
                "bundles",
                "install",
                "core-utils",
                "--registry",
                r,
                "--json",
            ],
            vec!["bundles", "list", "--json"],
            vec!["bundles", "which", "cat", "--json"],
            vec!["exec", "--json", "--", "cat", "a.txt"],
            vec!["shell", "--json", "cat a.txt | wc -l"],
        ] {
            assert_camel(&args.join(" "), &e.json(&args));
        }
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: `cargo xtask ci` builds it before the tests",
            registry.display()
        );
    }
}

#[test]
fn passthrough_values_keep_their_own_keys() {
    let e = Env::new();
    let v = e.json(&["tool", "Read", "--input", r#"{"file_path": "a.txt"}"#]);
    let mut found = Vec::new();
    snake_keys(&v[0], "", &mut found);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(v[0]["input"]["file_path"], "a.txt", "{}", v[0]);
}
