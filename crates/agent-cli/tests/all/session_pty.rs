//! The interactive session on a real terminal: `agent` alone, driven through a
//! pseudo-terminal (`setsid -c` makes it the session's controlling terminal, so a Ctrl-C typed
//! there is a SIGINT, as for a person) against a loopback model server speaking the OpenAI and
//! the Anthropic wire formats: a prompt and its streamed answer, an Edit approval answered `a`
//! (the second Edit is not asked), `/diff`, a Ctrl-C during `sleep 30` that returns to the
//! prompt within 3 s with no process left, `/commit`, `/exit` with status 0, and no colour
//! under `NO_COLOR=1`. Linux (bubblewrap runs the host command); skipped elsewhere.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::model::{Turn, anthropic, on_path, openai, serve_with};
use crate::support::terminal::{Terminal, running};

/// A loopback server answering each POST with the next of `bodies`; its base URL (no path).
fn serve(bodies: Vec<String>) -> String {
    serve_with(move |k| bodies.get(k).cloned()).0
}

fn session(wire: &str) {
    if !(on_path("bwrap") && on_path("setsid")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "bwrap and setsid are needed (.ci/run installs bubblewrap)"
        );
        eprintln!("skipped: bwrap or setsid missing");
        return;
    }
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
        json!({"permissions": {"allow": ["Bash(sleep *)"]}, "bash": {"backend": "native"}})
            .to_string(),
    )
    .unwrap();
    let marker = format!("30.{}", std::process::id());
    let turns = [
        Turn::Call("t1", "Read", json!({"file_path": "a.txt"})),
        Turn::Call(
            "t2",
            "Edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        ),
        Turn::Call(
            "t3",
            "Edit",
            json!({"file_path": "a.txt", "old_string": "two", "new_string": "three"}),
        ),
        Turn::Text("Edited a.txt twice.".into()),
        Turn::Call("t4", "Bash", json!({"command": "sleep MARKER"})),
    ];
    let bodies: Vec<String> = turns
        .iter()
        .map(|t| {
            let body = if wire == "openai" {
                openai(t)
            } else {
                anthropic(t)
            };
            body.replace("MARKER", &marker)
        })
        .collect();
    let url = serve(bodies);
    // `agent` alone with session options: the interactive session on a terminal.
    let mut args: Vec<String> = vec!["--settings".into(), settings.display().to_string()];
    let mut env = vec![("NO_COLOR", "1")];
    if wire == "openai" {
        args.extend([
            "--provider".into(),
            "openai-compatible".into(),
            "--base-url".into(),
            format!("{url}/v1"),
            "--model".into(),
            "m".into(),
        ]);
    } else {
        args.extend([
            "--provider".into(),
            "anthropic".into(),
            "--base-url".into(),
            url,
        ]);
        env.push(("ANTHROPIC_API_KEY", "test-key"));
    }
    let mut t = Terminal::start(
        std::path::Path::new(env!("CARGO_BIN_EXE_agent")),
        &home,
        &project,
        &args,
        &env,
    );
    let long = Duration::from_secs(60);
    let at = t.wait_for("/help for the commands", 0, long);

    t.type_in("please edit a.txt\r");
    let at = t.wait_for("[a] this session", at, long);
    t.type_in("a\r");
    let at = t.wait_for("Edited a.txt twice.", at, long);
    assert_eq!(
        t.screen()[at..].matches("[a] this session").count(),
        0,
        "the second Edit was asked again"
    );
    let at = t.wait_for("› ", at, long);

    t.type_in("/diff\r");
    let at = t.wait_for("+three", at, long);

    t.type_in("now wait\r");
    let at = t.wait_for("sleep", at, long);
    let started = Instant::now();
    while !running(&format!("sleep {marker}")) {
        assert!(started.elapsed() < long, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let pressed = Instant::now();
    t.type_in("\x03");
    let at = t.wait_for("› ", at, Duration::from_secs(10));
    let back = pressed.elapsed();
    assert!(
        back < Duration::from_secs(3),
        "Ctrl-C took {back:?} to give the prompt back"
    );
    assert!(
        !running(&format!("sleep {marker}")),
        "the command outlived Ctrl-C"
    );

    t.type_in("/commit\r");
    let at = t.wait_for("[y/N]", at, long);
    t.type_in("y\r");
    let at = t.wait_for("committed 1 path(s)", at, long);
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "three\n"
    );

    t.type_in("/exit\r");
    let _ = t.wait_for("", at, long);
    let started = Instant::now();
    let status = loop {
        if let Some(s) = t.child.try_wait().unwrap() {
            break s;
        }
        assert!(started.elapsed() < long, "the session did not end");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{}", t.screen());
    let screen = t.screen();
    // Colour is a Select Graphic Rendition sequence (`ESC [ ... m`); the line editor's own
    // cursor movements are not colour.
    let sgr = screen.match_indices("\x1b[").any(|(i, _)| {
        screen[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ';')
            .count()
            .checked_add(i + 2)
            .and_then(|end| screen.get(end..end + 1))
            == Some("m")
    });
    assert!(!sgr, "colour under NO_COLOR=1:\n{screen:?}");
    assert!(
        !screen.contains("/workspaces/"),
        "the shadow's path was shown:\n{screen}"
    );
    if std::env::var_os("SHOW_SCREEN").is_some() {
        eprintln!("{screen}");
    }
}

#[test]
fn a_terminal_session_over_the_openai_wire_format() {
    session("openai");
}

#[test]
fn a_terminal_session_over_the_anthropic_wire_format() {
    session("anthropic");
}

#[test]
fn ctrl_c_at_a_permission_question_returns_to_the_prompt_and_keeps_the_next_line() {
    if !on_path("setsid") {
        assert!(std::env::var_os("CI").is_none(), "setsid is needed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    let url = serve(vec![
        openai(&Turn::Call("t1", "Read", json!({"file_path": "a.txt"}))),
        openai(&Turn::Call(
            "t2",
            "Edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        )),
    ]);
    let args: Vec<String> = [
        "--provider",
        "openai-compatible",
        "--base-url",
        &format!("{url}/v1"),
        "--model",
        "m",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut t = Terminal::start(
        std::path::Path::new(env!("CARGO_BIN_EXE_agent")),
        &home,
        &project,
        &args,
        &[("NO_COLOR", "1")],
    );
    let long = Duration::from_secs(60);
    let at = t.wait_for("/help for the commands", 0, long);
    t.type_in("edit it\r");
    let at = t.wait_for("[n] no", at, long);
    std::thread::sleep(Duration::from_millis(200));
    let pressed = Instant::now();
    t.type_in("\x03");
    let at = t.wait_for("› ", at, Duration::from_secs(10));
    assert!(pressed.elapsed() < Duration::from_secs(3));
    t.type_in("/help\r");
    let at = t.wait_for("/status", at, long);
    t.type_in("/exit\r");
    let _ = at;
    let started = Instant::now();
    let status = loop {
        if let Some(s) = t.child.try_wait().unwrap() {
            break s;
        }
        assert!(started.elapsed() < long, "the session did not end");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{}", t.screen());
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "one\n"
    );
}
