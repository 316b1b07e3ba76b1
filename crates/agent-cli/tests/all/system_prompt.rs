//! What `agent run` tells the model about where it works (issue 27, part 3): the system prompt
//! of the request the loopback model server receives holds the memory files (`AGENTS.md`,
//! `CLAUDE.md` from the repository root down to the folder, and the user's own), the real
//! folder's path (never the shadow's), the Git branch, the permission mode and where Bash
//! commands run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::model::{serve_recording, text};

fn agent(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
    c.env("AGENT_HOME", home.join(".agent"))
        .env("HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_BASE_URL")
        .env_remove("AGENT_SETTING_SOURCES");
    c
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

/// A repository `repo/` on branch `topic`, with a subfolder `app/`.
fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let repo = root.join("repo");
    std::fs::create_dir_all(home.join(".agent")).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("app")).unwrap();
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/topic\n").unwrap();
    Env {
        _tmp: tmp,
        home,
        repo,
    }
}

/// Runs `agent run` in `cwd` against a loopback server answering "done"; the output and the
/// system prompt of the request the server received.
fn run(e: &Env, cwd: &Path, extra: &[&str]) -> (Output, String) {
    let replies = [text("done")];
    let (url, _, requests) = serve_recording(move |k| replies.get(k).cloned());
    let out = agent(&e.home)
        .args([
            "run",
            "work",
            "--provider",
            "openai-compatible",
            "--base-url",
        ])
        .arg(format!("{url}/v1"))
        .args(["--model", "m", "--json", "--mode", "plan"])
        .args(extra)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = requests.lock().unwrap();
    let first = requests.first().expect("the model was called");
    let system = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "system")
        .unwrap_or_else(|| panic!("no system message in {first}"));
    let system = match &system["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    (out, system)
}

fn shadow_of(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    v["shadow"].as_str().unwrap().to_owned()
}

#[test]
fn agents_md_and_the_real_folder_reach_the_model_in_the_system_prompt() {
    let e = env();
    std::fs::write(
        e.repo.join("AGENTS.md"),
        "Run `make check` before you finish.\n",
    )
    .unwrap();
    std::fs::write(e.repo.join("app/CLAUDE.md"), "The app uses tabs.\n").unwrap();
    std::fs::create_dir_all(e.home.join(".claude")).unwrap();
    std::fs::write(e.home.join(".claude/CLAUDE.md"), "Answer in English.\n").unwrap();
    std::fs::write(e.home.join(".agent/AGENTS.md"), "Prefer small diffs.\n").unwrap();
    let folder = e.repo.join("app");
    let (out, system) = run(&e, &folder, &[]);

    let at = |needle: &str| {
        system
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in the system prompt:\n{system}"))
    };
    // The memory files, the user's first, then the root's, then the folder's.
    assert!(at("Answer in English.") < at("Prefer small diffs."));
    assert!(at("Prefer small diffs.") < at("Run `make check` before you finish."));
    assert!(at("Run `make check` before you finish.") < at("The app uses tabs."));
    at(&format!(
        "Contents of {}",
        e.repo.join("AGENTS.md").display()
    ));
    // The facts: the real folder, never the shadow.
    at(&format!("Working folder: {}", folder.display()));
    let shadow = shadow_of(&out);
    assert!(!system.contains(&shadow), "{shadow} in:\n{system}");
    at("shadow copy of that folder");
    at("Git branch: topic");
    at(&format!("OS: {}", std::env::consts::OS));
    at("Today's date: ");
    at("Permission mode at the start of the session: plan");
    at("Bash: ");
    at("Pending changes: none");
}

#[test]
fn claude_md_files_stay_out_when_the_claude_sources_are_off() {
    let e = env();
    std::fs::write(e.repo.join("AGENTS.md"), "agents text\n").unwrap();
    std::fs::write(e.repo.join("CLAUDE.md"), "claude text\n").unwrap();
    let (_, system) = run(&e, &e.repo, &["--setting-sources", "user,project,local"]);
    assert!(system.contains("agents text"), "{system}");
    assert!(!system.contains("claude text"), "{system}");
}
