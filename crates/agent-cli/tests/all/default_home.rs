//! The default `AGENT_HOME` (`~/.agent`, with `AGENT_HOME` unset): the shadow workspace then
//! lives under `~/.agent/workspaces/…`, inside a protected directory. Edits inside the shadow
//! are ordinary edits (acceptEdits allows them without asking), while the protected paths below
//! the shadow (`.git/config`, `.agent/settings.json`) are still never auto-allowed. Driven as a
//! user would: `agent workspace import` + `agent tool`, and `agent run` through the agent loop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

/// HOME is a fresh folder and `AGENT_HOME` is unset, so the agent's home is `$HOME/.agent`.
fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = home.join("src/app");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/lib.rs"), "pub fn one() -> u32 { 1 }\n").unwrap();
    std::fs::write(project.join("README.md"), "# app\n").unwrap();
    Env {
        _tmp: tmp,
        home,
        project,
    }
}

impl Env {
    fn agent(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
        c.env("HOME", &self.home)
            .env_remove("AGENT_HOME")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_COMPATIBLE_API_KEY")
            .env_remove("OPENAI_COMPATIBLE_BASE_URL")
            .current_dir(&self.home)
            .stdin(Stdio::null());
        c
    }

    /// `agent workspace import`: the shadow is under `$HOME/.agent/workspaces`.
    fn import(&self) -> PathBuf {
        let out = self
            .agent()
            .args(["workspace", "import", "--json"])
            .arg(&self.project)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let shadow = PathBuf::from(v["shadow"].as_str().unwrap());
        assert!(
            shadow.starts_with(self.home.join(".agent/workspaces")),
            "the default layout puts the shadow under ~/.agent/workspaces: {}",
            shadow.display()
        );
        shadow
    }

    /// `agent tool NAME` in the shadow, in acceptEdits, sharing one tool session.
    fn tool(&self, shadow: &Path, name: &str, input: &Value) -> (Option<i32>, Value) {
        let out = self
            .agent()
            .args(["tool", name, "--input", &input.to_string(), "--workspace"])
            .arg(shadow)
            .args(["--mode", "acceptEdits", "--session", "s1"])
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(&out)));
        (out.status.code(), v)
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The safety step asked; with nobody to ask, the prompt step denied.
fn assert_protected(v: &Value) {
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["step"], "prompt", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("protected path"),
        "{v}"
    );
}

#[test]
fn accept_edits_allows_edits_in_a_shadow_under_the_default_agent_home() {
    let e = env();
    let shadow = e.import();
    let (code, v) = e.tool(&shadow, "Read", &json!({"file_path": "src/lib.rs"}));
    assert_eq!(code, Some(0), "{v}");
    // Edit and Write of ordinary files: allowed by the mode, nobody asked.
    let (code, v) = e.tool(
        &shadow,
        "Edit",
        &json!({"file_path": "src/lib.rs", "old_string": "{ 1 }", "new_string": "{ 2 }"}),
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(
        (&v["decision"], &v["step"]),
        (&json!("allow"), &json!("mode"))
    );
    let (code, v) = e.tool(
        &shadow,
        "Write",
        &json!({"file_path": shadow.join("src/new.rs"), "content": "pub fn two() {}\n"}),
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(
        (&v["decision"], &v["step"]),
        (&json!("allow"), &json!("mode"))
    );
    assert_eq!(
        std::fs::read_to_string(shadow.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 2 }\n"
    );
    assert!(shadow.join("src/new.rs").exists());
    // Protected paths below the shadow still ask, which is a deny without a prompter.
    for p in [
        ".git/config",
        ".agent/settings.json",
        "src/.git/hooks/pre-commit",
        ".bashrc",
    ] {
        let (code, v) = e.tool(&shadow, "Write", &json!({"file_path": p, "content": "x\n"}));
        assert_eq!(code, Some(1), "{p}: {v}");
        assert_protected(&v);
        assert!(!shadow.join(p).exists(), "{p} was written");
    }
    // And so does everything outside the shadow under ~/.agent.
    let user_settings = e.home.join(".agent/settings.json");
    let (code, v) = e.tool(
        &shadow,
        "Write",
        &json!({"file_path": user_settings, "content": "{}\n"}),
    );
    assert_eq!(code, Some(1), "{v}");
    assert_protected(&v);
    assert!(!user_settings.exists());
    let (code, v) = e.tool(
        &shadow,
        "Write",
        &json!({"file_path": "../escape.txt", "content": "x\n"}),
    );
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["decision"], "deny", "{v}");
    // The real folder is untouched until a commit.
    assert_eq!(
        std::fs::read_to_string(e.project.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 1 }\n"
    );
}

/// A loopback server speaking the OpenAI streaming format: each POST gets the next body.
fn serve(bodies: Vec<String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for (body, stream) in bodies.into_iter().zip(listener.incoming()) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut req = vec![0; len];
            reader.read_exact(&mut req).unwrap();
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body.as_bytes()).unwrap();
        }
    });
    url
}

fn chunk(delta: &Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

fn tool_call(id: &str, name: &str, args: &Value) -> String {
    chunk(
        &json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}]}),
        None,
    ) + &chunk(&json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n"
}

fn text(t: &str) -> String {
    chunk(&json!({"role": "assistant", "content": t}), None)
        + &chunk(&json!({}), Some("stop"))
        + "data: [DONE]\n\n"
}

#[test]
fn the_agent_loop_in_accept_edits_edits_a_shadow_under_the_default_agent_home() {
    let e = env();
    let calls = [
        ("c1", "Read", json!({"file_path": "src/lib.rs"})),
        (
            "c2",
            "Edit",
            json!({"file_path": "src/lib.rs", "old_string": "{ 1 }", "new_string": "{ 3 }"}),
        ),
        (
            "c3",
            "Write",
            json!({"file_path": "src/new.rs", "content": "x\n"}),
        ),
        (
            "c4",
            "Write",
            json!({"file_path": ".git/config", "content": "[core]\n"}),
        ),
        (
            "c5",
            "Write",
            json!({"file_path": ".agent/settings.json", "content": "{}\n"}),
        ),
    ];
    let mut bodies: Vec<String> = calls
        .iter()
        .map(|(id, name, args)| tool_call(id, name, args))
        .collect();
    bodies.push(text("done"));
    let url = serve(bodies);
    let out = e
        .agent()
        .args([
            "run",
            "change one",
            "--provider",
            "openai-compatible",
            "--base-url",
            &url,
        ])
        .args([
            "--model",
            "m",
            "--json",
            "--mode",
            "acceptEdits",
            "--workspace",
        ])
        .arg(&e.project)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(v["finalText"], "done", "{v}");
    let shadow = PathBuf::from(v["shadow"].as_str().unwrap());
    assert!(
        shadow.starts_with(e.home.join(".agent/workspaces")),
        "{}",
        shadow.display()
    );
    assert_eq!(
        std::fs::read_to_string(shadow.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 3 }\n"
    );
    assert!(shadow.join("src/new.rs").exists());
    assert!(!shadow.join(".git/config").exists());
    assert!(!shadow.join(".agent/settings.json").exists());
    // The log, under the default ~/.agent/sessions: who decided each call. The protected
    // writes: the safety step asked, and with nobody to ask the prompt step denied.
    let id = v["sessionId"].as_str().unwrap();
    let log = std::fs::read_to_string(e.home.join(".agent/sessions").join(id).join("events.jsonl"))
        .unwrap();
    let decisions: Vec<(String, bool, String, bool)> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "permission.decision")
        .map(|l| {
            (
                l["questionId"].as_str().unwrap().to_owned(),
                l["allowed"].as_bool().unwrap(),
                l["step"].as_str().unwrap_or("").to_owned(),
                l["reason"]
                    .as_str()
                    .unwrap_or("")
                    .contains("writes to protected path"),
            )
        })
        .collect();
    let expected: Vec<(String, bool, String, bool)> = [
        ("c1", true, "mode", false),
        ("c2", true, "mode", false),
        ("c3", true, "mode", false),
        ("c4", false, "prompt", true),
        ("c5", false, "prompt", true),
    ]
    .iter()
    .map(|(id, a, s, p)| ((*id).to_owned(), *a, (*s).to_owned(), *p))
    .collect();
    assert_eq!(decisions, expected, "{log}");
}
