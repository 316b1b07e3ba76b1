//! Issue 14, item 1: an option takes exactly one value (repeat the flag for more), so it never
//! swallows a positional. For every verb with positionals: the same result with the options
//! before and after them; `--settings` repeated; `--settings FILE URL` reads URL as the URL.

use std::path::Path;
use std::process::{Command, Output};

fn agent(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(args)
        .env("HOME", home)
        .env("AGENT_HOME", home.join(".agent"))
        .current_dir(home)
        .output()
        .unwrap()
}

/// Runs both orders and checks they agree (exit code and stdout), returning the exit code.
fn same(home: &Path, before: &[&str], after: &[&str]) -> Option<i32> {
    let a = agent(home, before);
    let b = agent(home, after);
    assert_eq!(
        (a.status.code(), &a.stdout),
        (b.status.code(), &b.stdout),
        "{before:?} vs {after:?}:\n{}\n{}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    a.status.code()
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(
        home.join("a.json"),
        r#"{"sandbox":{"deniedCommands":["rm"]}}"#,
    )
    .unwrap();
    std::fs::write(
        home.join("b.json"),
        r#"{"sandbox":{"network":{"deniedDomains":["evil.test"]}}}"#,
    )
    .unwrap();
    (dir, home)
}

#[test]
fn sandbox_verbs_take_options_before_and_after_their_positionals() {
    let (_d, h) = setup();
    // check-url: the issue's example, `--settings FILE URL`.
    let code = same(
        &h,
        &[
            "sandbox",
            "check-url",
            "--settings",
            "a.json",
            "--resolve",
            "x.test=93.184.216.34",
            "https://x.test/",
        ],
        &[
            "sandbox",
            "check-url",
            "https://x.test/",
            "--settings",
            "a.json",
            "--resolve",
            "x.test=93.184.216.34",
        ],
    );
    assert_eq!(code, Some(0));
    // Both settings files apply when the flag is repeated.
    let code = same(
        &h,
        &[
            "sandbox",
            "check-url",
            "--settings",
            "a.json",
            "--settings",
            "b.json",
            "https://evil.test/",
        ],
        &[
            "sandbox",
            "check-url",
            "https://evil.test/",
            "--settings",
            "a.json",
            "--settings",
            "b.json",
        ],
    );
    assert_eq!(code, Some(1));
    // check-command: no `--` needed, and `--` still works for unquoted words.
    for cmd in ["rm -rf x", "git status"] {
        same(
            &h,
            &["sandbox", "check-command", "--settings", "a.json", cmd],
            &["sandbox", "check-command", cmd, "--settings", "a.json"],
        );
    }
    let code = same(
        &h,
        &[
            "sandbox",
            "check-command",
            "--settings",
            "a.json",
            "rm -rf x",
        ],
        &[
            "sandbox",
            "check-command",
            "--settings",
            "a.json",
            "--",
            "rm",
            "-rf",
            "x",
        ],
    );
    assert_eq!(code, Some(1));
    // check-path.
    let code = same(
        &h,
        &[
            "sandbox",
            "check-path",
            "--settings",
            "a.json",
            "--op",
            "read",
            "a.json",
        ],
        &[
            "sandbox",
            "check-path",
            "a.json",
            "--op",
            "read",
            "--settings",
            "a.json",
        ],
    );
    assert_eq!(code, Some(0));
}

#[test]
fn a_second_word_after_an_option_is_never_its_value() {
    let (_d, h) = setup();
    // `--settings a.json b.json` used to read both as settings; now b.json is an unexpected
    // positional for verbs without one, a usage error (exit 2).
    let out = agent(&h, &["hooks", "list", "--settings", "a.json", "b.json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = agent(
        &h,
        &[
            "permissions",
            "check",
            "--settings",
            "a.json",
            "b.json",
            "--tool",
            "Read",
            "--input",
            "{}",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn permissions_hooks_and_trust_take_options_in_any_order() {
    let (_d, h) = setup();
    let code = same(
        &h,
        &[
            "permissions",
            "check",
            "--settings",
            "a.json",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"ls"}"#,
        ],
        &[
            "permissions",
            "check",
            "--input",
            r#"{"command":"ls"}"#,
            "--tool",
            "Bash",
            "--settings",
            "a.json",
        ],
    );
    assert_eq!(code, Some(0));
    same(
        &h,
        &[
            "hooks",
            "list",
            "--settings",
            "a.json",
            "--settings",
            "b.json",
        ],
        &[
            "hooks",
            "list",
            "--settings",
            "b.json",
            "--settings",
            "a.json",
        ],
    );
    std::fs::create_dir_all(h.join("proj")).unwrap();
    let a = agent(&h, &["trust", "proj", "--list"]);
    let b = agent(&h, &["trust", "--list", "proj"]);
    assert_eq!(a.status.code(), b.status.code());
}

#[test]
fn session_verbs_take_options_before_and_after_their_positionals() {
    let (_d, h) = setup();
    let store = h.join("store");
    let store = store.to_str().unwrap();
    assert_eq!(
        agent(&h, &["sessions", "--store", store, "create", "--id", "s1"])
            .status
            .code(),
        Some(0)
    );
    for (before, after) in [
        (
            vec!["sessions", "--store", store, "show", "s1"],
            vec!["sessions", "show", "s1", "--store", store],
        ),
        (
            vec!["sessions", "show", "--store", store, "s1"],
            vec!["sessions", "show", "s1", "--store", store],
        ),
        (
            vec!["sessions", "export", "--store", store, "s1"],
            vec!["sessions", "export", "s1", "--store", store],
        ),
        (
            vec!["sessions", "list", "--store", store],
            vec!["sessions", "--store", store, "list"],
        ),
    ] {
        assert_eq!(same(&h, &before, &after), Some(0));
    }
    // Verbs that change the session: each order once, both must succeed.
    for args in [
        vec!["sessions", "rename", "--store", store, "s1", "first"],
        vec!["sessions", "rename", "s1", "second", "--store", store],
        vec!["sessions", "tag", "--store", store, "s1", "t1"],
        vec!["sessions", "tag", "s1", "t2", "--store", store],
        vec!["sessions", "fork", "--store", store, "s1", "--id", "f1"],
        vec!["sessions", "fork", "s1", "--id", "f2", "--store", store],
        vec!["sessions", "delete", "f1", "--store", store],
        vec!["sessions", "delete", "--store", store, "f2"],
    ] {
        let out = agent(&h, &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
