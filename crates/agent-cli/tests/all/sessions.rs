//! `agent sessions`, driven as a user would: every verb, JSON shapes, exit codes, one-line errors.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let cwd = root.join("proj");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        Self {
            _tmp: tmp,
            home,
            cwd,
        }
    }

    fn store(&self) -> PathBuf {
        self.home.join(".agent").join("sessions")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
        c.arg("sessions")
            .args(args)
            .env("HOME", &self.home)
            .env_remove("AGENT_HOME")
            .current_dir(&self.cwd);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs a verb that must succeed; returns its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "agent sessions {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs a verb that must fail with exit 2 and one line on stderr; returns that line.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "agent sessions {args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(out.stdout.is_empty(), "nothing on stdout");
        stderr.trim_end().to_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }

    fn say(&self, id: &str, kind: &str, text: &str) -> Value {
        let event = json!({"type": kind, "text": text}).to_string();
        self.json(&["append", id, "--event", &event])
    }
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect()
}

#[test]
fn create_append_list_and_show() {
    let env = Env::new();
    assert_eq!(
        env.ok(&["create", "--id", "a", "--title", "First", "--tag", "x"]),
        "a\n"
    );
    let e1 = env.say("a", "user.message", "hello there");
    assert_eq!(e1["seq"], 4, "after system.init, title and tag");
    assert_eq!(e1["type"], "user.message");
    assert!(
        e1["id"].as_str().unwrap().len() >= 32,
        "an id was filled in"
    );
    let e2 = env.say("a", "assistant.message", "hi");
    assert_eq!(e2["parent"], e1["id"], "linked to the previous event");
    std::thread::sleep(std::time::Duration::from_millis(2));
    let b = env.ok(&["create", "--cwd", "/elsewhere"]);
    let b = b.trim();
    assert_eq!(b.len(), 36, "a UUID: {b}");

    // JSON list: newest first, with the documented fields.
    let list = env.json(&["list", "--json"]);
    assert_eq!(ids(&list), [b, "a"]);
    let a = &list[1];
    for key in [
        "id",
        "title",
        "tags",
        "createdAt",
        "updatedAt",
        "messageCount",
        "cwd",
    ] {
        assert!(a.get(key).is_some(), "{key} in {a}");
    }
    assert_eq!(a["title"], "First");
    assert_eq!(a["tags"], json!(["x"]));
    assert_eq!(a["messageCount"], 2);
    assert_eq!(a["cwd"], env.cwd.display().to_string());
    assert_eq!(a["firstPrompt"], "hello there");
    assert_eq!(a["updatedAt"], e2["ts"]);
    // Filters and limit.
    assert_eq!(ids(&env.json(&["list", "--json", "--limit", "1"])), [b]);
    assert_eq!(ids(&env.json(&["list", "--json", "--cwd", "."])), ["a"]);
    assert_eq!(
        ids(&env.json(&["list", "--json", "--cwd", "/elsewhere"])),
        [b]
    );
    assert_eq!(ids(&env.json(&["list", "--json", "--tag", "x"])), ["a"]);
    assert_eq!(
        ids(&env.json(&["list", "--json", "--search", "HELLO"])),
        ["a"]
    );
    assert_eq!(env.json(&["list", "--json", "--tag", "none"]), json!([]));
    // Text list: one line per session.
    let text = env.ok(&["list"]);
    assert_eq!(text.lines().count(), 2);
    assert!(text.lines().nth(1).unwrap().starts_with("a  "), "{text}");
    assert!(text.contains("First [x]"), "{text}");

    // show: header then one line per event; --json: the events as logged.
    let shown = env.ok(&["show", "a"]);
    assert!(shown.starts_with("session a\ntitle    First\n"), "{shown}");
    assert!(shown.contains("events   5 (2 messages"), "{shown}");
    assert!(
        shown
            .lines()
            .last()
            .unwrap()
            .contains("assistant.message    hi"),
        "{shown}"
    );
    let lines = env.ok(&["show", "a", "--json"]);
    assert_eq!(lines.lines().count(), 5);
    let logged = std::fs::read_to_string(env.store().join("a").join("events.jsonl")).unwrap();
    assert_eq!(lines, logged);
    // Pagination from the tail.
    let page = env.ok(&["show", "a", "--json", "--limit", "2", "--offset", "1"]);
    let seqs: Vec<u64> = page
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [3, 4]);
    let page = env.ok(&["show", "a", "--json", "--offset", "3"]);
    assert_eq!(page.lines().count(), 2);
    assert_eq!(env.ok(&["show", "a", "--json", "--offset", "9"]), "");
}

#[test]
fn fork_rename_tag_delete_and_reindex() {
    let env = Env::new();
    env.ok(&["create", "--id", "src"]);
    let first = env.say("src", "user.message", "one");
    env.say("src", "assistant.message", "reply one");
    env.say("src", "user.message", "two");
    // Whole, with an id.
    assert_eq!(env.ok(&["fork", "src", "--id", "whole"]), "whole\n");
    // Up to the first message.
    let upto = env.ok(&["fork", "src", "--upto", "1"]);
    let upto = upto.trim();
    // Up to an event.
    let at = env.ok(&[
        "fork",
        "src",
        "--at",
        first["id"].as_str().unwrap(),
        "--id",
        "at",
    ]);
    assert_eq!(at, "at\n");
    let list = env.json(&["list", "--json"]);
    let row = |id: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(row("whole")["messageCount"], 3);
    assert_eq!(row(upto)["messageCount"], 1);
    assert_eq!(row("at")["messageCount"], 1);
    assert_eq!(row("at")["parentId"], "src");
    assert_eq!(row("at")["forkPoint"], first["id"]);
    assert_eq!(row("whole")["parentId"], "src");
    assert_eq!(row("src")["messageCount"], 3, "the source is unchanged");

    let meta = env.json(&["rename", "whole", "Renamed"]);
    assert_eq!(meta["title"], "Renamed");
    let meta = env.json(&["tag", "whole", "keep"]);
    assert_eq!(meta["tags"], json!(["keep"]));
    env.json(&["tag", "whole", "also"]);
    let meta = env.json(&["tag", "whole", "also", "--remove"]);
    assert_eq!(meta["tags"], json!(["keep"]));
    assert_eq!(
        ids(&env.json(&["list", "--json", "--tag", "keep"])),
        ["whole"]
    );

    assert_eq!(
        env.json(&["delete", "src"]),
        json!({"id": "src", "deleted": true})
    );
    assert!(!env.store().join("src").exists());
    assert!(env.fails(&["show", "src"]).contains("no session `src`"));
    // The index is rebuilt from the logs, and agrees with what it had.
    let before = env.json(&["list", "--json"]);
    std::fs::remove_dir_all(env.store().join(".index")).unwrap();
    assert_eq!(env.json(&["reindex"]), json!({"sessions": 3}));
    assert_eq!(env.json(&["list", "--json"]), before);
    // Bad fork points.
    let err = env.fails(&["fork", "whole", "--at", "no-such-event"]);
    assert!(err.contains("no event with id `no-such-event`"), "{err}");
    env.fails(&["fork", "whole", "--at", "x", "--upto", "1"]);
    env.fails(&["fork", "whole", "--id", "at"]);
}

#[test]
fn export_import_round_trip_and_claude_view() {
    let env = Env::new();
    env.ok(&["create", "--id", "s", "--title", "Chat"]);
    env.say("s", "user.message", "hi");
    env.say("s", "assistant.message", "hello");
    // An event type this version does not know is kept as is.
    env.ok(&[
        "append",
        "s",
        "--event",
        r#"{"type":"future.thing","payload":{"x":1}}"#,
    ]);
    let jsonl = env.ok(&["export", "s"]);
    assert_eq!(jsonl, env.ok(&["export", "s", "--format", "jsonl"]));
    assert!(jsonl.contains(r#""type":"future.thing""#));
    let file = env.cwd.join("s.jsonl");
    std::fs::write(&file, &jsonl).unwrap();
    assert_eq!(env.ok(&["import", "s.jsonl", "--id", "copy"]), "copy\n");
    // Under a new id the log's own sessionId names the new session; every other line is as
    // exported.
    assert_eq!(
        env.ok(&["export", "copy"]),
        jsonl.replacen(r#""sessionId":"s""#, r#""sessionId":"copy""#, 1),
        "re-exported unchanged but for its own id"
    );
    // From stdin, with a new id.
    let mut child = env
        .command(&["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(jsonl.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let id = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        env.ok(&["export", id.trim()]),
        jsonl.replacen(
            r#""sessionId":"s""#,
            &format!(r#""sessionId":"{}""#, id.trim()),
            1
        )
    );
    // Into another store under its own id: byte for byte.
    let elsewhere = env.cwd.join("elsewhere");
    let elsewhere = elsewhere.to_str().unwrap();
    assert_eq!(
        env.ok(&["--store", elsewhere, "import", "s.jsonl", "--id", "s"]),
        "s\n"
    );
    assert_eq!(env.ok(&["--store", elsewhere, "export", "s"]), jsonl);

    let claude = env.ok(&["export", "s", "--format", "claude"]);
    let lines: Vec<Value> = claude
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["summary", "user", "assistant"]);
    assert_eq!(lines[0]["summary"], "Chat");
    assert_eq!(lines[0]["leafUuid"], lines[2]["uuid"]);
    assert_eq!(lines[2]["parentUuid"], lines[1]["uuid"]);
    assert_eq!(lines[1]["sessionId"], "s");

    // Bad imports: a bad line is named; nothing is created.
    std::fs::write(env.cwd.join("bad.jsonl"), format!("{jsonl}{{oops\n")).unwrap();
    let err = env.fails(&["import", "bad.jsonl", "--id", "bad"]);
    assert!(err.contains("line 6"), "{err}");
    assert!(
        env.fails(&["import", "missing.jsonl"])
            .contains("cannot read")
    );
    assert!(
        env.fails(&["import", "s.jsonl", "--id", "copy"])
            .contains("already exists")
    );
    assert_eq!(env.json(&["list", "--json"]).as_array().unwrap().len(), 3);
}

#[test]
fn invalid_and_unknown_ids_exit_2_with_one_line() {
    let env = Env::new();
    env.ok(&["create", "--id", "real"]);
    let long = "x".repeat(129);
    let bad: &[(&str, &str)] = &[
        ("", "empty"),
        ("../etc", "`/`"),
        ("a/b", "`/`"),
        ("a\\b", "`\\`"),
        ("..", "`..`"),
        (".hidden", "leading `.`"),
        ("nul\0", "control"),
        (&long, "128"),
    ];
    for (id, why) in bad {
        for verb in [
            vec!["show", id],
            vec!["fork", "real", "--id", id],
            vec!["rename", id, "t"],
            vec!["tag", id, "t"],
            vec!["delete", id],
            vec!["export", id],
            vec![
                "append",
                id,
                "--event",
                r#"{"type":"user.message","text":"x"}"#,
            ],
            vec!["create", "--id", id],
        ] {
            if id.contains('\0') {
                // An argument cannot hold NUL; the library's table test covers it.
                continue;
            }
            let err = env.fails(&verb);
            assert!(
                err.starts_with("agent: error: invalid session id"),
                "{verb:?}: {err}"
            );
            assert!(err.contains(why), "{verb:?}: {err}");
        }
    }
    for verb in [
        vec!["show", "nope"],
        vec!["fork", "nope"],
        vec!["rename", "nope", "t"],
        vec!["tag", "nope", "t"],
        vec!["delete", "nope"],
        vec!["export", "nope"],
        vec![
            "append",
            "nope",
            "--event",
            r#"{"type":"user.message","text":"x"}"#,
        ],
    ] {
        let err = env.fails(&verb);
        assert_eq!(
            err,
            format!(
                "agent: error: no session `nope` in {}; `agent sessions list` shows the sessions there",
                env.store().display()
            ),
            "{verb:?}"
        );
    }
    // Nothing was created by any of it.
    assert_eq!(ids(&env.json(&["list", "--json"])), ["real"]);
}

#[test]
fn bad_events_are_refused_and_the_store_can_be_chosen() {
    let env = Env::new();
    env.ok(&["create", "--id", "s"]);
    assert!(
        env.fails(&["append", "s", "--event", "not json"])
            .contains("not JSON")
    );
    assert!(
        env.fails(&["append", "s", "--event", "[1]"])
            .contains("JSON object")
    );
    assert!(
        env.fails(&["append", "s", "--event", "{}"])
            .contains("no \"type\"")
    );
    let err = env.fails(&["append", "s", "--event", r#"{"type":"user.message"}"#]);
    assert!(err.contains("not a valid event"), "{err}");
    let err = env.fails(&[
        "append",
        "s",
        "--event",
        r#"{"type":"session.fork","parentSessionId":"x","forkSeq":1}"#,
    ]);
    assert!(err.contains("written by fork only"), "{err}");
    assert_eq!(env.json(&["list", "--json"])[0]["eventCount"], 1);

    // --store and $AGENT_HOME choose the store.
    let other = env.cwd.join("elsewhere");
    let other_s = other.to_str().unwrap();
    env.ok(&["--store", other_s, "create", "--id", "t"]);
    assert_eq!(
        ids(&env.json(&["list", "--store", other_s, "--json"])),
        ["t"]
    );
    let out = env
        .command(&["list", "--json"])
        .env("AGENT_HOME", env.cwd.join("agent-home"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "[]\n");
    assert!(env.cwd.join("agent-home").join("sessions").is_dir());
    assert_eq!(ids(&env.json(&["list", "--json"])), ["s"]);
    assert_perms(&env.store().join("s"));
}

#[cfg(unix)]
fn assert_perms(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(dir), 0o700);
    assert_eq!(mode(&dir.join("events.jsonl")), 0o600);
}

#[cfg(not(unix))]
fn assert_perms(_: &Path) {}

/// A log line by line: `(seq, fields after the envelope)`.
fn log_of(events: &[(u64, &str)]) -> String {
    let mut text = String::new();
    for (i, (seq, fields)) in events.iter().enumerate() {
        let parent = if i == 0 {
            "null".to_owned()
        } else {
            format!("\"e{i}\"")
        };
        text += &format!(
            r#"{{"v":1,"seq":{seq},"id":"e{}","parent":{parent},"ts":"2026-01-01T00:00:00Z",{fields}}}"#,
            i + 1
        );
        text.push('\n');
    }
    text
}

/// Every way an imported log can break the store's rules: exit 2, one line naming the line
/// number, the field and the value; nothing created.
#[test]
fn import_refuses_each_invalid_log_with_exit_2_and_one_line() {
    const INIT: &str = r#""type":"system.init","sessionId":"t""#;
    const USER: &str = r#""type":"user.message","text":"hi""#;
    let fork = |parent: &str, point: &str, seq: u64| {
        format!(
            r#""type":"session.fork","parentSessionId":"{parent}","forkPoint":{point},"forkSeq":{seq}"#
        )
    };
    let env = Env::new();
    env.ok(&["create", "--id", "real"]);
    let max = 16 * 1024 * 1024;
    let huge = format!(r#""type":"user.message","text":"{}""#, "x".repeat(max));
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "duplicate seq",
            log_of(&[(1, INIT), (2, USER), (2, USER)]),
            vec!["line 3: seq 2 follows seq 2 (a duplicate)", "must be 3"],
        ),
        (
            "gap",
            log_of(&[(1, INIT), (2, USER), (5, USER)]),
            vec!["line 3: seq 5 follows seq 2 (a gap)"],
        ),
        (
            "first seq not 1",
            log_of(&[(0, INIT), (1, USER)]),
            vec!["line 1: seq 0 on the first event", "must start at 1"],
        ),
        (
            "first seq 7",
            log_of(&[(7, INIT)]),
            vec!["line 1: seq 7 on the first event"],
        ),
        (
            "invalid sessionId",
            log_of(&[(1, r#""type":"system.init","sessionId":"../../x""#)]),
            vec!["line 1: `sessionId` \"../../x\" is not a valid id"],
        ),
        (
            "whitespace sessionId",
            log_of(&[(1, r#""type":"system.init","sessionId":" ""#)]),
            vec!["line 1: `sessionId` \" \"", "only whitespace"],
        ),
        (
            "foreign sessionId",
            log_of(&[
                (1, INIT),
                (2, USER),
                (3, r#""type":"system.init","sessionId":"real""#),
            ]),
            vec!["line 3: `sessionId` \"real\" is another session's"],
        ),
        (
            "invalid parentSessionId",
            log_of(&[(1, INIT), (2, &fork("a/b", "\"e1\"", 1))]),
            vec!["line 2: `parentSessionId` \"a/b\" is not a valid id"],
        ),
        (
            "whitespace parentSessionId",
            log_of(&[(1, INIT), (2, &fork("p ", "\"e1\"", 1))]),
            vec!["line 2: `parentSessionId` \"p \"", "ends with whitespace"],
        ),
        (
            "parentSessionId is the target",
            log_of(&[(1, INIT), (2, &fork("new", "\"e1\"", 1))]),
            vec!["line 2: `parentSessionId` \"new\"", "own parent"],
        ),
        (
            "fork point elsewhere",
            log_of(&[(1, INIT), (2, USER), (3, &fork("p", "\"e1\"", 1))]),
            vec!["line 3: session.fork has forkPoint"],
        ),
        (
            "invalid agentId",
            log_of(&[(1, INIT), (2, r#""type":"subagent.stop","agentId":".x""#)]),
            vec!["line 2: `agentId` \".x\" is not a valid id"],
        ),
        (
            "oversize line",
            log_of(&[(1, INIT), (2, &huge)]),
            vec!["line 2: the line is", "16 MiB"],
        ),
    ];
    for (name, jsonl, wanted) in &cases {
        let file = env.cwd.join("in.jsonl");
        std::fs::write(&file, jsonl).unwrap();
        let err = env.fails(&["import", "in.jsonl", "--id", "new"]);
        assert!(err.starts_with("agent: error: line "), "{name}: {err}");
        for want in wanted {
            assert!(err.contains(want), "{name}: {err:?} lacks {want:?}");
        }
        // From stdin, the same.
        let mut child = env
            .command(&["import", "-", "--id", "new"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(jsonl.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
        assert!(!env.store().join("new").exists(), "{name}: nothing written");
    }
    assert_eq!(ids(&env.json(&["list", "--json"])), ["real"]);
}

/// Whitespace-only ids, ids with whitespace at either end, other whitespace than spaces and
/// invisible characters: refused by every verb that takes an id (the source or the target).
#[test]
fn whitespace_and_invisible_ids_exit_2_with_one_line() {
    let env = Env::new();
    env.ok(&["create", "--id", "real"]);
    let jsonl = env.ok(&["export", "real"]);
    std::fs::write(env.cwd.join("real.jsonl"), &jsonl).unwrap();
    let bad: &[(&str, &str)] = &[
        (" ", "only whitespace"),
        ("   ", "only whitespace"),
        ("\u{a0}", "only whitespace"),
        ("\u{3000}", "only whitespace"),
        (" real", "starts or ends with whitespace (U+0020)"),
        ("real ", "starts or ends with whitespace (U+0020)"),
        ("real\u{2009}", "starts or ends with whitespace (U+2009)"),
        ("re\u{a0}al", "whitespace other than a space (U+00A0)"),
        ("re\u{200b}al", "invisible character (U+200B)"),
        ("\u{feff}real", "invisible character (U+FEFF)"),
        ("re\u{202e}al", "invisible character (U+202E)"),
    ];
    for (id, why) in bad {
        for verb in [
            vec!["create", "--id", id],
            vec!["import", "real.jsonl", "--id", id],
            vec!["fork", id],
            vec!["fork", "real", "--id", id],
            vec!["rename", id, "t"],
            vec!["tag", id, "t"],
            vec!["show", id],
            vec!["export", id],
            vec!["delete", id],
            vec![
                "append",
                id,
                "--event",
                r#"{"type":"user.message","text":"x"}"#,
            ],
        ] {
            let err = env.fails(&verb);
            assert!(
                err.starts_with("agent: error: invalid session id"),
                "{verb:?}: {err}"
            );
            assert!(err.contains(why), "{verb:?}: {err}");
        }
    }
    assert_eq!(ids(&env.json(&["list", "--json"])), ["real"]);
    // A plain inner space is fine.
    assert_eq!(env.ok(&["create", "--id", "my session"]), "my session\n");
}
