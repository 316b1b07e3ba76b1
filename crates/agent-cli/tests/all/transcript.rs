//! What a person reads (issue 26): `agent run`'s transcript as text (Bash output with its exit
//! status, paths relative to the folder, the calls of one answer numbered, a retry said, an
//! error once), and the colour rules (`--color`, `NO_COLOR`, `CLICOLOR_FORCE`) on `agent run`
//! and `agent workspace diff`, with clap's own error help kept. Against a loopback server
//! speaking the OpenAI wire format; stdout and stderr are pipes, as in a script.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::model::{call, calls, on_path, serve, text};

const ESC: char = '\u{1b}';

fn agent(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
    c.env("AGENT_HOME", home)
        .env("HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_BASE_URL")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .stdin(Stdio::null());
    c
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    settings: PathBuf,
}

/// A repository `repo/` with `src/app.py` (one line) and `notes.txt`.
fn env(settings: Value) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let repo = root.join("repo");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/app.py"), "print('one')\n").unwrap();
    std::fs::write(repo.join("notes.txt"), "a note\n").unwrap();
    let s = root.join("settings.json");
    std::fs::write(&s, settings.to_string()).unwrap();
    Env {
        _tmp: tmp,
        home,
        repo,
        settings: s,
    }
}

/// `agent run work` in the repository (no `--json`: the transcript is what is checked).
fn run(e: &Env, replies: Vec<String>, extra: &[&str], envs: &[(&str, &str)]) -> Output {
    let url = serve(replies);
    let mut c = agent(&e.home);
    c.args([
        "run",
        "work",
        "--no-commit",
        "--provider",
        "openai-compatible",
        "--base-url",
    ])
    .arg(&url)
    .args(["--model", "m", "--settings"])
    .arg(&e.settings)
    .args(extra)
    .current_dir(&e.repo);
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bash_output_reads_as_text_under_its_exit_status() {
    if !on_path("bwrap") {
        assert!(
            std::env::var_os("CI").is_none(),
            "bwrap is needed (.ci/run installs bubblewrap)"
        );
        return;
    }
    let e = env(json!({"permissions": {"allow": ["Bash"]}, "bash": {"backend": "native"}}));
    let out = run(
        &e,
        vec![
            call(
                "c1",
                "Bash",
                &json!({"command": "echo alpha; echo beta; echo oops >&2; exit 3"}),
            ),
            call("c2", "Bash", &json!({"command": "seq 1 200"})),
            text("done"),
        ],
        &[],
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let want = "● Bash(echo alpha; echo beta; echo oops >&2; exit 3)\n  ✓ allowed (allow_rule: Bash)\n  ⎿ exit 3\n    alpha\n    beta\n    stderr:\n    oops\n";
    assert!(err.contains(want), "{err}");
    // 200 lines: the head, the fold, the tail.
    assert!(
        err.contains("    8\n    … 184 lines folded …\n    193\n"),
        "{err}"
    );
    assert!(!err.contains("\"stdout\""), "no raw JSON: {err}");
    assert!(!err.contains(ESC), "no colour off a terminal: {err:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next(),
        Some("done")
    );
}

#[test]
fn paths_are_relative_to_the_folder_and_the_calls_of_one_answer_are_numbered() {
    let e = env(json!({"permissions": {"allow": ["Read", "Grep"]}}));
    let app = e.repo.join("src/app.py").display().to_string();
    let out = run(
        &e,
        vec![
            calls(&[
                ("r1", "Read", json!({"file_path": app})),
                (
                    "g1",
                    "Grep",
                    json!({"pattern": "note", "output_mode": "content"}),
                ),
            ]),
            text("read it"),
        ],
        &[],
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for want in [
        "● [1] Read(src/app.py)\n● [2] Grep(note)\n",
        "  ⎿ [1] Read src/app.py · 1 line\n",
        "  ⎿ [2] Grep 1 line\n    notes.txt:1:a note\n",
    ] {
        assert!(err.contains(want), "{want:?} in:\n{err}");
    }
    assert!(!err.contains("workspaces/"), "a shadow path: {err}");
    assert!(
        !err.contains(&e.repo.display().to_string()),
        "an absolute path: {err}"
    );
}

#[test]
fn a_provider_retry_is_said_with_its_wait_and_reason() {
    let e = env(json!({}));
    let out = run(&e, vec!["STATUS 503".into(), text("hello")], &[], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("  ↻ retrying in 0 s after HTTP 503 (retry 1 of "),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next(),
        Some("hello")
    );
}

#[test]
fn a_provider_failure_is_reported_once() {
    let e = env(json!({}));
    let out = run(&e, vec!["STATUS 400".into()], &[], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("the server is busy").count(),
        1,
        "the error once: {err}"
    );
}

#[test]
fn the_transcript_follows_the_colour_rules() {
    let e = env(json!({"permissions": {"allow": ["Read"]}}));
    let replies = || {
        vec![
            call("r1", "Read", &json!({"file_path": "src/app.py"})),
            text("ok"),
        ]
    };
    let always = run(&e, replies(), &["--color", "always"], &[]);
    assert!(stderr(&always).contains(ESC), "{}", stderr(&always));
    let forced = run(&e, replies(), &[], &[("CLICOLOR_FORCE", "1")]);
    assert!(stderr(&forced).contains(ESC), "{}", stderr(&forced));
    let no_color = run(
        &e,
        replies(),
        &[],
        &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")],
    );
    assert!(!stderr(&no_color).contains(ESC), "{:?}", stderr(&no_color));
    let never = run(
        &e,
        replies(),
        &["--color=never"],
        &[("CLICOLOR_FORCE", "1")],
    );
    assert!(!stderr(&never).contains(ESC), "{:?}", stderr(&never));
}

/// A folder imported into its shadow with one change, for `agent workspace diff`.
fn changed_workspace() -> Env {
    let e = env(json!({}));
    let out = agent(&e.home)
        .args(["workspace", "import", ".", "--json"])
        .current_dir(&e.repo)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let shadow = PathBuf::from(v["shadow"].as_str().unwrap());
    std::fs::write(shadow.join("src/app.py"), "print('two')\n").unwrap();
    e
}

fn diff(e: &Env, args: &[&str], envs: &[(&str, &str)]) -> String {
    let mut c = agent(&e.home);
    c.args(["workspace", "diff"])
        .args(args)
        .current_dir(&e.repo);
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("print('two')"), "{text}");
    text
}

#[test]
fn workspace_diff_is_coloured_only_when_the_rules_say_so() {
    let e = changed_workspace();
    assert!(!diff(&e, &[], &[]).contains(ESC), "off a terminal: none");
    let always = diff(&e, &["--color", "always"], &[]);
    assert!(always.contains("\u{1b}[32m+print('two')"), "{always:?}");
    assert!(diff(&e, &[], &[("CLICOLOR_FORCE", "1")]).contains(ESC));
    assert!(!diff(&e, &[], &[("NO_COLOR", "1")]).contains(ESC));
    assert!(!diff(&e, &["--color", "never"], &[("CLICOLOR_FORCE", "1")]).contains(ESC));
    // The flag is global: before the verb too.
    let mut c = agent(&e.home);
    let out = c
        .args(["--color", "always", "workspace", "diff"])
        .current_dir(&e.repo)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains(ESC));
}

#[test]
fn clap_keeps_its_help_and_its_suggestions() {
    let e = env(json!({}));
    let help = agent(&e.home).args(["run", "--help"]).output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("Usage: agent run") && text.contains("--color <WHEN>"),
        "{text}"
    );
    assert!(!text.contains(ESC), "help off a terminal is plain");

    let typo = agent(&e.home).arg("workspce").output().unwrap();
    assert_eq!(typo.status.code(), Some(2));
    let err = stderr(&typo);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("agent: error: unrecognized subcommand 'workspce'")
            && err.contains("a similar subcommand exists: 'workspace'"),
        "{err}"
    );

    let value = agent(&e.home)
        .args(["run", "x", "--mode", "plann"])
        .output()
        .unwrap();
    assert_eq!(value.status.code(), Some(2));
    let err = stderr(&value);
    assert!(
        err.contains("[possible values: default, manual, plan,")
            && err.contains("(see `agent run --help`)"),
        "{err}"
    );
    let colour = agent(&e.home)
        .args(["--color", "never", "bogus"])
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    assert!(!stderr(&colour).contains(ESC), "{:?}", stderr(&colour));
    let colour = agent(&e.home)
        .args(["--color", "always", "bogus"])
        .output()
        .unwrap();
    assert!(stderr(&colour).contains(ESC), "{:?}", stderr(&colour));
}

#[test]
fn the_demos_change_set_is_coloured_by_the_same_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let demo = |dir: &str, extra: &[&str]| {
        let out = agent(&home)
            .args(["demo", "--dir"])
            .arg(tmp.path().join(dir))
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let plain = demo("d1", &[]);
    assert!(
        plain.contains("\n+    return a + b\n") && !plain.contains(ESC),
        "{plain}"
    );
    let always = demo("d2", &["--color", "always"]);
    assert!(always.contains("\u{1b}[32m+    return a + b"), "{always:?}");
}
