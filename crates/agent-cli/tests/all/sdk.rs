//! The Claude Agent SDK drives `agent` unchanged (issue 27, part 1): the real Python SDK
//! (PyPI `claude-agent-sdk`, installed by `.ci/run`) runs `tests/sdk/drive.py` with
//! `cli_path` set to the built `agent`, against a loopback model server named by `agent`'s own
//! settings. Covered: `query()` with a `can_use_tool` callback (its `updatedInput` is what
//! runs) and a PreToolUse hook (it sees the real folder's paths); `ClaudeSDKClient` for two
//! turns of one session; an interrupt while a permission question is pending, answered by a
//! prompt `result`, after which the session takes the next prompt.
//!
//! The SDK is found at `$AGENT_SDK_PYTHON`, else `target/sdk-py/bin/python`. Without it the
//! tests say so and pass, except under `CI`, where they fail.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::model::{call, serve, text};

/// The Python that has `claude_agent_sdk`, or `None` (and why).
fn python() -> Option<PathBuf> {
    let candidate = std::env::var_os("AGENT_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/sdk-py/bin/python")
        });
    let ok = Command::new(&candidate)
        .args(["-c", "import claude_agent_sdk"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(candidate);
    }
    let why = format!(
        "the Claude Agent SDK is not installed at {} (.ci/run installs it: python3 -m venv target/sdk-py && target/sdk-py/bin/pip install claude-agent-sdk)",
        candidate.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("skipped: {why}");
    None
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    folder: PathBuf,
}

/// A home whose `settings.json` names the loopback server as the provider, and a project
/// folder with one file.
fn env(replies: Vec<String>) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let folder = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("README.md"), "# project\n").unwrap();
    let url = serve(replies);
    std::fs::write(
        home.join("settings.json"),
        json!({"provider": {"name": "openai-compatible", "baseUrl": url}, "model": "loopback-model"})
            .to_string(),
    )
    .unwrap();
    Env {
        _tmp: tmp,
        home,
        folder,
    }
}

/// Runs one scenario of drive.py; its JSON.
fn drive(python: &Path, scenario: &str, e: &Env) -> Value {
    drive_on(python, scenario, &e.home, &e.folder)
}

/// Runs one scenario of drive.py with `home` as `$HOME` and `$AGENT_HOME` and `arg` as its
/// folder (or file) argument; its JSON.
fn drive_on(python: &Path, scenario: &str, home: &Path, arg: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/drive.py");
    let out = Command::new(python)
        .arg(script)
        .args([scenario, env!("CARGO_BIN_EXE_agent")])
        .arg(arg)
        .env("AGENT_HOME", home)
        .env("HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CLAUDECODE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "drive.py {scenario} failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("drive.py printed no JSON ({e}): {stdout}\n{stderr}"))
}

fn kinds(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let k = m["kind"].as_str().unwrap().to_owned();
            match m["subtype"].as_str() {
                Some(s) => format!("{k}/{s}"),
                None => k,
            }
        })
        .collect()
}

#[test]
fn query_runs_with_the_sdks_permission_callback_and_hook() {
    let Some(py) = python() else { return };
    // The model writes by the real folder's absolute path, as models do under Claude Code.
    let e = {
        let e = env(Vec::new());
        let notes = e.folder.join("notes.txt");
        let replies = vec![
            call(
                "call_1",
                "Write",
                &json!({"file_path": notes, "content": "the model's text\n"}),
            ),
            text("Wrote the notes."),
        ];
        let url = serve(replies);
        std::fs::write(
            e.home.join("settings.json"),
            json!({"provider": {"name": "openai-compatible", "baseUrl": url}, "model": "loopback-model"})
                .to_string(),
        )
        .unwrap();
        e
    };
    let got = drive(&py, "query", &e);
    let messages = &got["messages"];
    assert_eq!(
        kinds(messages),
        [
            "system/init",
            "assistant",
            "user",
            "assistant",
            "system/workspace_commit",
            "result/success"
        ],
        "{got:#}"
    );
    let init = &messages[0]["data"];
    assert_eq!(init["cwd"], json!(e.folder), "init shows the real folder");
    assert_eq!(init["model"], "loopback-model");
    assert!(
        init["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "Write")
    );
    // The callback was asked once, with the real path, and its input is what ran.
    assert_eq!(got["asked"].as_array().unwrap().len(), 1, "{got:#}");
    assert_eq!(got["asked"][0]["tool"], "Write");
    assert_eq!(got["asked"][0]["tool_use_id"], "call_1");
    assert_eq!(
        got["asked"][0]["input"]["file_path"],
        json!(e.folder.join("notes.txt"))
    );
    assert_eq!(
        std::fs::read_to_string(e.folder.join("notes.txt")).unwrap(),
        "written as the callback said\n",
        "the edit landed in the folder with the callback's input"
    );
    // The hook ran for the Write, seeing the real folder.
    let hooked = got["hooked"].as_array().unwrap();
    assert_eq!(hooked.len(), 1, "{got:#}");
    assert_eq!(hooked[0]["event"], "PreToolUse");
    assert_eq!(hooked[0]["tool"], "Write");
    assert_eq!(hooked[0]["cwd"], json!(e.folder));
    // The tool result reached the SDK, and the result closes the turn.
    assert_eq!(messages[2]["blocks"][0]["tool_result"], "call_1");
    assert_eq!(messages[2]["blocks"][0]["is_error"], false);
    let result = &messages[5];
    assert_eq!(result["result"], "Wrote the notes.");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 2);
}

#[test]
fn a_client_keeps_one_session_over_two_turns() {
    let Some(py) = python() else { return };
    let e = env(vec![text("one"), text("two")]);
    let got = drive(&py, "client", &e);
    let turns = got["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{got:#}");
    for (turn, answer) in turns.iter().zip(["one", "two"]) {
        assert_eq!(
            kinds(turn),
            ["system/init", "assistant", "result/success"],
            "{got:#}"
        );
        assert_eq!(turn[2]["result"], answer);
    }
    assert_eq!(turns[0][2]["session_id"], turns[1][2]["session_id"]);
    assert_eq!(turns[1][2]["num_turns"], 1);
}

#[test]
fn an_interrupt_ends_the_turn_promptly_and_the_session_goes_on() {
    let Some(py) = python() else { return };
    let e = env(Vec::new());
    let replies = vec![
        call(
            "call_1",
            "Write",
            &json!({"file_path": e.folder.join("slow.txt"), "content": "x"}),
        ),
        text("ready again"),
    ];
    let url = serve(replies);
    std::fs::write(
        e.home.join("settings.json"),
        json!({"provider": {"name": "openai-compatible", "baseUrl": url}, "model": "loopback-model"})
            .to_string(),
    )
    .unwrap();
    let got = drive(&py, "interrupt", &e);
    let interrupted = &got["interrupted"];
    let last = interrupted.as_array().unwrap().last().unwrap();
    assert_eq!(last["kind"], "result", "{got:#}");
    assert_eq!(last["subtype"], "error_during_execution");
    assert_eq!(last["is_error"], true);
    assert!(
        got["seconds_to_result"].as_f64().unwrap() < 10.0,
        "the result came promptly after the interrupt: {got:#}"
    );
    assert!(!e.folder.join("slow.txt").exists(), "nothing was written");
    let after = &got["after"];
    assert_eq!(
        after.as_array().unwrap().last().unwrap()["result"],
        "ready again",
        "{got:#}"
    );
}

#[test]
fn agent_run_stream_json_lines_pass_the_sdks_own_message_parser() {
    let Some(py) = python() else { return };
    let e = env(vec![
        call("call_1", "Read", &json!({"file_path": "README.md"})),
        text("It is a project."),
    ]);
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args([
            "run",
            "what is this?",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
        ])
        .current_dir(&e.folder)
        .env("AGENT_HOME", &e.home)
        .env("HOME", &e.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = e.home.join("stream.jsonl");
    std::fs::write(&lines, &out.stdout).unwrap();
    let got = drive_on(&py, "parse", &e.home, &lines);
    let parsed = kinds(&got["messages"]);
    assert_eq!(
        parsed.first().map(String::as_str),
        Some("system/init"),
        "{got:#}"
    );
    assert_eq!(
        parsed.last().map(String::as_str),
        Some("result/success"),
        "{got:#}"
    );
    for kind in ["assistant", "user", "StreamEvent"] {
        assert!(parsed.iter().any(|k| k == kind), "{kind} in {parsed:?}");
    }
    assert!(!parsed.iter().any(|k| k == "skipped"), "{parsed:?}");
}
