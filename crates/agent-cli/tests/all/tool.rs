//! `agent tool NAME --input JSON`: one built-in tool through the full gate, driven as a user
//! would: permissions (allow, deny rules, no prompter), PreToolUse and PostToolUse hooks,
//! shared session memory, exit codes and one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    settings: PathBuf,
}

fn env(settings: Value) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let ws = root.join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn one() -> u32 { 1 }\n").unwrap();
    std::fs::write(ws.join("secret.env"), "KEY=1\n").unwrap();
    let s = root.join("settings.json");
    std::fs::write(&s, settings.to_string()).unwrap();
    Env {
        _tmp: tmp,
        home,
        ws,
        settings: s,
    }
}

impl Env {
    fn tool(&self, name: &str, input: &Value, extra: &[&str]) -> (Option<i32>, Value, String) {
        let out: Output = Command::new(env!("CARGO_BIN_EXE_agent"))
            .args(["tool", name, "--input", &input.to_string(), "--workspace"])
            .arg(&self.ws)
            .arg("--settings")
            .arg(&self.settings)
            .args(extra)
            .env("HOME", &self.home)
            .env("AGENT_HOME", self.home.join(".agent"))
            .current_dir(&self.home)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        (out.status.code(), v, String::from_utf8(out.stderr).unwrap())
    }
}

#[test]
fn a_read_inside_runs_and_a_deny_rule_stops_it() {
    let e = env(json!({"permissions": {"deny": ["Read(./secret.env)"]}}));
    let (code, v, err) = e.tool("Read", &json!({"file_path": "src/lib.rs"}), &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["output"], "     1\tpub fn one() -> u32 { 1 }\n");
    let (code, v, _) = e.tool("Read", &json!({"file_path": "secret.env"}), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["step"], "deny_rule");
    assert_eq!(v["rule"], "Read(./secret.env)");
    assert!(v.get("output").is_none(), "the tool ran: {v}");
}

#[test]
fn an_ask_without_a_prompter_is_a_deny_and_nothing_is_written() {
    let e = env(json!({}));
    let (code, v, _) = e.tool(
        "Write",
        &json!({"file_path": "new.txt", "content": "x"}),
        &[],
    );
    assert_eq!(code, Some(1));
    assert_eq!(v["decision"], "deny");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("nobody can be asked"),
        "{v}"
    );
    assert!(!e.ws.join("new.txt").exists());
    // acceptEdits allows edits inside the working directories.
    let (code, v, err) = e.tool(
        "Write",
        &json!({"file_path": "new.txt", "content": "x"}),
        &["--mode", "acceptEdits"],
    );
    assert_eq!(code, Some(0), "{err} {v}");
    assert_eq!(std::fs::read_to_string(e.ws.join("new.txt")).unwrap(), "x");
}

#[test]
fn hooks_run_before_and_after_the_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("post.json");
    let e = env(json!({
        "permissions": {"allow": ["Edit"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Glob", "hooks": [{"type": "command",
                "command": "echo 'no globbing here' >&2; exit 2"}]}],
            "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command",
                "command": format!("cat > {}", log.display())}]}]
        }
    }));
    let (code, v, _) = e.tool("Glob", &json!({"pattern": "**/*"}), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(v["decision"], "deny");
    assert!(
        v["reason"].as_str().unwrap().contains("no globbing here"),
        "{v}"
    );
    let (code, _, err) = e.tool("Read", &json!({"file_path": "src/lib.rs"}), &[]);
    assert_eq!(code, Some(0), "{err}");
    let post: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(post["hook_event_name"], "PostToolUse");
    assert_eq!(post["tool_name"], "Read");
    assert_eq!(post["tool_response"], "     1\tpub fn one() -> u32 { 1 }\n");
}

#[test]
fn a_named_session_remembers_reads_across_runs() {
    let e = env(json!({"permissions": {"allow": ["Edit"]}}));
    let edit = json!({"file_path": "src/lib.rs", "old_string": "{ 1 }", "new_string": "{ 2 }"});
    let (code, v, _) = e.tool("Edit", &edit, &["--session", "s1"]);
    assert_eq!(code, Some(1));
    assert!(
        v["errorMessage"]
            .as_str()
            .unwrap()
            .contains("Read it first"),
        "{v}"
    );
    let (code, _, _) = e.tool(
        "Read",
        &json!({"file_path": "src/lib.rs"}),
        &["--session", "s1"],
    );
    assert_eq!(code, Some(0));
    let (code, v, err) = e.tool("Edit", &edit, &["--session", "s1"]);
    assert_eq!(code, Some(0), "{err} {v}");
    assert_eq!(
        std::fs::read_to_string(e.ws.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 2 }\n"
    );
}

fn one_line(code: Option<i32>, err: &str, needle: &str) {
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let e = env(json!({}));
    let (code, _, err) = e.tool("Nope", &json!({}), &[]);
    one_line(code, &err, "no built-in tool `Nope`");
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["tool", "Read", "--input", "{not json"])
        .env("HOME", &e.home)
        .output()
        .unwrap();
    one_line(
        out.status.code(),
        &String::from_utf8(out.stderr).unwrap(),
        "not valid JSON",
    );
    let (code, _, err) = e.tool("Read", &json!({}), &["--session", "../x"]);
    one_line(code, &err, "--session");
    let missing: &Path = Path::new("/nonexistent/ws");
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["tool", "Read", "--input", "{}", "--workspace"])
        .arg(missing)
        .env("HOME", &e.home)
        .output()
        .unwrap();
    one_line(
        out.status.code(),
        &String::from_utf8(out.stderr).unwrap(),
        "not a directory",
    );
    // A malformed tool input is a result (exit 1), not a usage error: the gate refuses it.
    let (code, v, _) = e.tool("Read", &json!({"file_path": 3}), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(v["decision"], "deny");
    assert!(v["reason"].as_str().unwrap().contains("file_path"), "{v}");
    // The tool's own input errors likewise.
    let (code, v, _) = e.tool("Grep", &json!({"pattern": "("}), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(v["errorType"], "invalid_input");
}

#[test]
fn options_come_before_or_after_the_tool_name() {
    let e = env(json!({}));
    let input = json!({"file_path": "src/lib.rs"}).to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["tool", "--input", &input, "--workspace"])
        .arg(&e.ws)
        .arg("Read")
        .env("HOME", &e.home)
        .env("AGENT_HOME", e.home.join(".agent"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let help = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["tool", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Example:"));
}

#[test]
fn bash_runs_in_the_workspace_through_the_gate_and_the_checker() {
    let e = env(json!({
        "permissions": {"allow": ["Bash(echo *)", "Bash(rm *)"], "deny": ["Bash(curl *)"]},
        "sandbox": {"deniedCommands": ["rm"]}
    }));
    let (code, v, err) = e.tool("Bash", &json!({"command": "echo hi"}), &[]);
    assert_eq!(code, Some(0), "{err} {v}");
    assert_eq!(v["output"]["stdout"], "hi\n");
    assert_eq!(v["output"]["exitCode"], 0);
    let (code, v, _) = e.tool("Bash", &json!({"command": "curl https://x"}), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(v["step"], "deny_rule");
    // Allowed by a rule, refused by the sandbox's command checker: nothing runs.
    let (code, v, _) = e.tool("Bash", &json!({"command": "rm -f src/lib.rs"}), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(v["errorType"], "sandbox_denied");
    assert!(e.ws.join("src/lib.rs").exists());
}

#[test]
fn the_bash_backend_comes_from_the_settings() {
    // `wasi` needs an installed bundle; this home has none, so it is a setup error naming the fix.
    let e = env(json!({"permissions": {"allow": ["Bash(echo *)"]}, "bash": {"backend": "wasi"}}));
    let (code, _, err) = e.tool("Bash", &json!({"command": "echo hi"}), &[]);
    one_line(code, &err, "no WASI bundle is installed");
    // `auto` falls back to the host's shell.
    let e = env(json!({"permissions": {"allow": ["Bash(echo *)"]}, "bash": {"backend": "auto"}}));
    let (code, v, _) = e.tool("Bash", &json!({"command": "echo hi"}), &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["output"]["stdout"], "hi\n");
    let e = env(json!({"bash": {"backend": "zsh"}}));
    let (code, _, err) = e.tool("Bash", &json!({"command": "echo hi"}), &[]);
    one_line(code, &err, "bash.backend");
}

#[test]
fn web_fetch_refuses_internal_addresses_even_when_a_rule_allows_the_domain() {
    let e = env(
        json!({"permissions": {"allow": ["WebFetch(domain:127.0.0.1)", "WebFetch(domain:169.254.169.254)"]}}),
    );
    for url in [
        "http://127.0.0.1:9/x",
        "http://169.254.169.254/latest/meta-data",
    ] {
        let (code, v, err) = e.tool("WebFetch", &json!({"url": url, "prompt": "p"}), &[]);
        assert_eq!(code, Some(1), "{err}");
        assert_eq!(v["decision"], "allow");
        assert_eq!(v["errorType"], "sandbox_denied", "{v}");
    }
}

#[test]
fn a_background_bash_run_is_complete_when_agent_tool_exits() {
    let e = env(json!({"permissions": {"allow": ["Bash(sleep *)", "Bash(echo *)"]}}));
    let (code, v, err) = e.tool(
        "Bash",
        &json!({"command": "sleep 0.2; echo bg", "run_in_background": true}),
        &[],
    );
    assert_eq!(code, Some(0), "{err} {v}");
    assert_eq!(v["output"]["status"], "running");
    let file = v["output"]["outputFile"].as_str().unwrap();
    assert!(
        Path::new(file).starts_with(e.ws.join(".agent/output")),
        "{file}"
    );
    let done: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["stdout"], "bg\n");
}
