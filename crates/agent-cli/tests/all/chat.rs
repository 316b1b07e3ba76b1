//! `agent chat`: the interactive session, scripted through its standard input (off a
//! terminal the line editor reads plain lines), against a loopback server speaking the OpenAI
//! wire format.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::support::model::{call, serve, text};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    settings: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    let settings = root.join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Write"]}}).to_string(),
    )
    .unwrap();
    Env {
        _tmp: tmp,
        home,
        project,
        settings,
    }
}

/// Runs `agent chat` with `input` as what the person types.
fn chat(e: &Env, url: &str, input: &str, extra: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["chat", "--provider", "openai-compatible", "--base-url", url])
        .args(["--model", "gpt-4.1", "--settings"])
        .arg(&e.settings)
        .args(extra)
        .env("AGENT_HOME", &e.home)
        .env("HOME", &e.home)
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_COMPATIBLE_API_KEY")
        .current_dir(&e.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text_of(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_session_prompts_reviews_switches_and_commits_then_leaves_with_status_0() {
    let e = env();
    let url = serve(vec![
        call(
            "call_1",
            "Write",
            &json!({"file_path": "b.txt", "content": "two\n"}),
        ),
        text("I wrote b.txt."),
        text("Now with the other model."),
    ]);
    let out = chat(
        &e,
        &url,
        "please write b.txt\n/status\n/diff b.txt\n/mode acceptEdits\n/model gpt-4o\nand \\\nagain\n/cost\n/comit\n/commit\ny\n/exit\n",
        &[],
    );
    let (stdout, stderr) = text_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("I wrote b.txt."), "{stdout}");
    assert!(
        stdout.contains("A  b.txt"),
        "/status lists the change: {stdout}"
    );
    assert!(stdout.contains("+two"), "/diff shows it: {stdout}");
    assert!(stdout.contains("mode: acceptEdits"), "{stdout}");
    assert!(stdout.contains("model: gpt-4o"), "{stdout}");
    assert!(stdout.contains("Now with the other model."), "{stdout}");
    assert!(stdout.contains("tokens: "), "/cost: {stdout}");
    assert!(
        stderr.contains("did you mean /commit?"),
        "a mistyped command says what to type: {stderr}"
    );
    assert!(stdout.contains("committed 1 path(s)"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(e.project.join("b.txt")).unwrap(),
        "two\n"
    );
    assert!(!stdout.contains('\u{1b}'), "no colour under NO_COLOR");
}

#[test]
fn the_end_of_input_leaves_and_names_what_waits_in_the_shadow() {
    let e = env();
    let url = serve(vec![
        call(
            "call_1",
            "Write",
            &json!({"file_path": "c.txt", "content": "three\n"}),
        ),
        text("done"),
    ]);
    let out = chat(&e, &url, "write c.txt\n/commit\nn\n", &[]);
    let (stdout, stderr) = text_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("nothing was applied"), "{stdout}");
    assert!(!e.project.join("c.txt").exists());
    assert!(
        stdout.contains("1 change(s) wait in the shadow workspace"),
        "{stdout}"
    );
}

#[test]
fn agent_alone_off_a_terminal_prints_the_help() {
    let e = env();
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .env("AGENT_HOME", &e.home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("chat"), "{all}");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn clear_starts_a_new_session_and_resume_picks_the_first_up_again() {
    let e = env();
    let url = serve(vec![
        text("first answer"),
        text("second answer"),
        text("back in the first"),
    ]);
    let first = chat(&e, &url, "hello\n/exit\n", &[]);
    let (stdout, stderr) = text_of(&first);
    assert_eq!(first.status.code(), Some(0), "{stdout}\n{stderr}");
    let sessions = |home: &std::path::Path| -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(home.join("sessions"))
            .unwrap()
            .flatten()
            .filter(|d| d.path().join("events.jsonl").is_file())
            .map(|d| d.file_name().to_string_lossy().into_owned())
            .collect();
        ids.sort();
        ids
    };
    let before = sessions(&e.home);
    assert_eq!(before.len(), 1);
    let first_id = before[0].clone();
    let out = chat(
        &e,
        &url,
        &format!("/clear\nagain\n/resume\n/resume {first_id}\nand now?\n/exit\n"),
        &[],
    );
    let (stdout, stderr) = text_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("a new session: "), "{stdout}");
    assert!(stdout.contains("second answer"), "{stdout}");
    assert!(
        stdout.contains(&first_id),
        "/resume lists the folder's sessions: {stdout}"
    );
    assert!(
        stdout.contains(&format!("resumed session {first_id}")),
        "{stdout}"
    );
    assert!(stdout.contains("back in the first"), "{stdout}");
    // The opening session, the one /clear made: two more in all.
    assert_eq!(sessions(&e.home).len(), 3, "{stdout}");
    let log = std::fs::read_to_string(e.home.join("sessions").join(&first_id).join("events.jsonl"))
        .unwrap();
    assert!(
        log.contains("and now?"),
        "the resumed prompt went to the first session"
    );
}

#[test]
fn add_dir_lets_the_agent_work_in_one_more_directory_in_the_same_session() {
    let e = env();
    let other = e.home.parent().unwrap().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "OTHER-NOTES\n").unwrap();
    let url = serve(vec![
        call(
            "call_1",
            "Read",
            &json!({"file_path": other.join("notes.txt")}),
        ),
        text("read them"),
    ]);
    let out = chat(
        &e,
        &url,
        &format!("/add-dir {}\nread the notes\n/exit\n", other.display()),
        &[],
    );
    let (stdout, stderr) = text_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("is a working directory of this session now"),
        "{stdout}"
    );
    let sessions: Vec<PathBuf> = std::fs::read_dir(e.home.join("sessions"))
        .unwrap()
        .flatten()
        .map(|d| d.path())
        .filter(|p| p.join("events.jsonl").is_file())
        .collect();
    assert_eq!(sessions.len(), 1, "the same session goes on");
    let log = std::fs::read_to_string(sessions[0].join("events.jsonl")).unwrap();
    assert!(log.contains("OTHER-NOTES"), "the read was allowed: {log}");
}
