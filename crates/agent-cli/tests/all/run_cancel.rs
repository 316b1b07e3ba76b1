//! Ctrl-C during a tool in `agent run` (issue 26): the command's processes are ended at once,
//! the process exits within 3 s with status 130, the session log says the call was cancelled
//! by the user after it started (never "not run"), and `--continue` resumes the session.
//! Against a loopback server speaking the OpenAI wire format; the command runs in the host's
//! bash inside bubblewrap.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::model::{call, on_path, serve, text};

/// The bound the issue sets for Ctrl-C to give control back.
const BOUND: Duration = Duration::from_secs(3);

fn agent(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
    c.env("AGENT_HOME", home)
        .env("HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_BASE_URL");
    c
}

/// Processes on this machine whose command line holds `marker` (zombies aside).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && text.contains(marker) {
            found.push(format!("{name}: {text}"));
        }
    }
    found
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    settings: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let repo = root.join("repo");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(repo.join("notes.txt"), "one\n").unwrap();
    let settings = root.join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Bash"]}, "bash": {"backend": "native"}}).to_string(),
    )
    .unwrap();
    Env {
        _tmp: tmp,
        home,
        repo,
        settings,
    }
}

fn run_command(e: &Env, url: &str, extra: &[&str]) -> Command {
    let mut c = agent(&e.home);
    c.args([
        "run",
        "work",
        "--provider",
        "openai-compatible",
        "--base-url",
        url,
        "--model",
        "m",
        "--json",
        "--settings",
    ])
    .arg(&e.settings)
    .args(extra)
    .current_dir(&e.repo);
    c
}

fn last_json(o: &Output) -> Value {
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(text.lines().last().unwrap_or("")).unwrap_or_else(|err| {
        panic!(
            "not JSON ({err}): {text}\nstderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

#[test]
fn ctrl_c_during_a_command_ends_it_at_once_and_the_log_says_it_was_cancelled() {
    if !on_path("bwrap") {
        assert!(
            std::env::var_os("CI").is_none(),
            "bwrap is needed (.ci/run installs bubblewrap)"
        );
        eprintln!("skipped: bubblewrap is not installed");
        return;
    }
    let e = env();
    let marker = format!("30.123{}", std::process::id());
    let url = serve(vec![call(
        "c1",
        "Bash",
        &json!({"command": format!("echo started; sleep {marker}")}),
    )]);
    let mut child = run_command(&e, &url, &[])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-C once the command runs (its `sleep` is seen), or after 10 s at the latest.
    let waited = Instant::now();
    while processes_with(&marker).is_empty() && waited.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !processes_with(&marker).is_empty(),
        "the command never started"
    );
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut exited = None;
    while sent.elapsed() < Duration::from_secs(30) {
        if let Some(status) = child.try_wait().unwrap() {
            exited = Some((status, sent.elapsed()));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let (status, took) = exited.unwrap_or_else(|| panic!("still running 30 s after Ctrl-C"));
    assert!(took < BOUND, "exited {took:?} after Ctrl-C: {stderr}");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        processes_with(&marker).is_empty(),
        "left running: {:?}",
        processes_with(&marker)
    );

    let v = last_json(&out);
    assert_eq!(v["stopReason"], "interrupted", "{v}");
    let id = v["sessionId"].as_str().unwrap();
    let log =
        std::fs::read_to_string(e.home.join("sessions").join(id).join("events.jsonl")).unwrap();
    let result = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["type"] == "tool.result" && l["toolUseId"] == "c1")
        .unwrap_or_else(|| panic!("no result for c1 in {log}"));
    assert_eq!(result["errorType"], "cancelled", "{result}");
    let message = result["errorMessage"].as_str().unwrap();
    assert!(
        message.starts_with("cancelled by the user after it started: it ran for ")
            && message.contains("every process it started were killed"),
        "{result}"
    );
    assert!(!message.contains("not run"), "{result}");
    assert_eq!(result["output"]["stdout"], "started\n", "{result}");

    // The session resumes.
    let url = serve(vec![text("went on")]);
    let again = run_command(&e, &url, &["--continue"]).output().unwrap();
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let v = last_json(&again);
    assert_eq!(v["sessionId"], id, "{v}");
    assert_eq!(v["finalText"], "went on", "{v}");
}
