//! The session store, through its public API.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "test code: a panic is a failure report"
)]

use std::path::Path;

use agent_core::events::{
    AssistantMessage, Compaction, Event, EventId, EventPayload, TokenUsage, ToolResultEvent,
    ToolUse, UserMessage, decode_line, encode_line,
};
use agent_store::{
    CORRUPT_FILE, Content, Durability, ExportFormat, ForkAt, ForkOptions, INDEX_DIR, INDEX_FILE,
    LOG_FILE, ListQuery, LoadRange, LocalStore, MAX_LINE_BYTES, NewSession, SessionId, StoreError,
    StoreOptions,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn open(root: &Path) -> LocalStore {
    LocalStore::open(StoreOptions::new(root)).unwrap()
}

fn id(s: &str) -> SessionId {
    SessionId::parse(s).unwrap()
}

fn user(text: &str) -> Event {
    Event::new(
        0,
        None,
        EventPayload::UserMessage(UserMessage { text: text.into() }),
    )
}

fn assistant(text: &str) -> Event {
    Event::new(
        0,
        None,
        EventPayload::AssistantMessage(AssistantMessage::text(text)),
    )
}

fn tool_use(n: u32) -> Event {
    Event::new(
        0,
        None,
        EventPayload::ToolUse(ToolUse {
            tool_use_id: format!("t{n}"),
            name: "Bash".into(),
            input: json!({"command": "ls"}),
            ..ToolUse::default()
        }),
    )
}

fn tool_result(n: u32) -> Event {
    Event::new(
        0,
        None,
        EventPayload::ToolResult(ToolResultEvent {
            tool_use_id: format!("t{n}"),
            output: json!("ok"),
            is_error: false,
            error_type: None,
            error_message: None,
        }),
    )
}

fn new(name: &str, cwd: &str) -> NewSession {
    NewSession {
        id: Some(id(name)),
        cwd: Some(cwd.into()),
        model: Some("m1".into()),
        ..NewSession::default()
    }
}

/// A session with `turns` × (user, assistant, tool use, tool result).
fn session_with_turns(store: &LocalStore, name: &str, turns: u32) -> SessionId {
    let s = store.create(new(name, "/p")).unwrap().id;
    for t in 0..turns {
        store
            .append(
                &s,
                vec![
                    user(&format!("u{t}")),
                    assistant(&format!("a{t}")),
                    tool_use(t),
                    tool_result(t),
                ],
            )
            .unwrap();
    }
    s
}

#[test]
fn create_append_load_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut spec = new("s1", "/work/p");
    spec.title = Some("first".into());
    spec.tags = vec!["b".into(), "a".into()];
    spec.git_branch = Some("main".into());
    let meta = store.create(spec).unwrap();
    assert_eq!(meta.event_count, 4);
    assert_eq!(meta.tags, ["a", "b"]);
    assert_eq!(meta.title.as_deref(), Some("first"));
    let appended = store
        .append(&meta.id, vec![user("hello there"), assistant("hi")])
        .unwrap();
    assert_eq!(
        appended.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [5, 6],
        "seq continues the log"
    );
    assert_eq!(appended[1].parent.as_ref(), Some(&appended[0].id));
    let m = store.metadata(&meta.id).unwrap();
    assert_eq!(m.message_count, 2);
    assert_eq!(m.first_prompt.as_deref(), Some("hello there"));
    assert_eq!(m.cwd.as_deref(), Some("/work/p"));
    assert_eq!(m.model.as_deref(), Some("m1"));
    assert_eq!(m.git_branch.as_deref(), Some("main"));
    assert_eq!(m.created_at, meta.created_at);
    assert_eq!(m.last_seq, 6);
    let log = dir.path().join("s1").join(LOG_FILE);
    assert_eq!(m.size_bytes, std::fs::metadata(&log).unwrap().len());
    let loaded = store.load(&meta.id, LoadRange::default()).unwrap();
    assert_eq!(loaded.events.len(), 6);
    assert_eq!(loaded.events[4..], appended[..]);
    assert!(loaded.torn.is_none());
}

#[test]
fn created_at_never_changes_and_updated_at_moves() {
    let dir = tempfile::tempdir().unwrap();
    let s;
    let created;
    {
        let store = open(dir.path());
        let m = store.create(new("s", "/p")).unwrap();
        s = m.id;
        created = m.created_at;
    }
    std::thread::sleep(std::time::Duration::from_millis(5));
    let store = open(dir.path());
    store.append(&s, vec![user("later")]).unwrap();
    let m = store.metadata(&s).unwrap();
    assert_eq!(m.created_at, created);
    assert!(m.updated_at > created, "{} > {created}", m.updated_at);
    drop(store);
    std::fs::remove_dir_all(dir.path().join(INDEX_DIR)).unwrap();
    let store = open(dir.path());
    assert_eq!(store.metadata(&s).unwrap().created_at, created);
}

#[cfg(unix)]
#[test]
fn directories_are_0700_and_files_0600() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let store = open(&root);
    let s = store.create(new("s", "/p")).unwrap().id;
    store.append(&s, vec![user("x")]).unwrap();
    let f = store.fork(&s, ForkOptions::default()).unwrap().id;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&root), 0o700);
    for sid in [&s, &f] {
        assert_eq!(mode(&root.join(sid.as_str())), 0o700, "{sid}");
        assert_eq!(
            mode(&root.join(sid.as_str()).join(LOG_FILE)),
            0o600,
            "{sid}"
        );
        assert_eq!(mode(&root.join(sid.as_str()).join("lock")), 0o600, "{sid}");
    }
    assert_eq!(mode(&root.join(INDEX_DIR)), 0o700);
    assert_eq!(mode(&root.join(INDEX_DIR).join(INDEX_FILE)), 0o600);
}

#[test]
fn load_pages_from_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = store.create(new("s", "/p")).unwrap().id;
    // Big events, so the tail reader crosses chunk boundaries.
    let big = "x".repeat(20_000);
    for i in 0..40 {
        store.append(&s, vec![user(&format!("{i} {big}"))]).unwrap();
    }
    let all = store.load(&s, LoadRange::default()).unwrap().events;
    assert_eq!(all.len(), 41);
    for (offset, limit) in [
        (0, 1),
        (0, 10),
        (5, 10),
        (38, 10),
        (41, 5),
        (60, 5),
        (0, 100),
    ] {
        let page = store
            .load(
                &s,
                LoadRange {
                    offset,
                    limit: Some(limit),
                },
            )
            .unwrap()
            .events;
        let end = all.len().saturating_sub(offset);
        let start = end.saturating_sub(limit);
        assert_eq!(page, all[start..end], "offset {offset} limit {limit}");
    }
    let skipped = store
        .load(
            &s,
            LoadRange {
                offset: 3,
                limit: None,
            },
        )
        .unwrap()
        .events;
    assert_eq!(skipped, all[..38]);
}

#[test]
fn messages_from_the_tail_match_the_whole_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = session_with_turns(&store, "s", 10);
    // Compact seqs 2..=21 (the first five turns).
    store
        .append(
            &s,
            vec![Event::new(
                0,
                None,
                EventPayload::Compaction(Compaction {
                    summary: "the first five turns".into(),
                    from_seq: 2,
                    to_seq: 21,
                }),
            )],
        )
        .unwrap();
    store.append(&s, vec![user("after")]).unwrap();
    let whole = store.messages(&s, None).unwrap();
    assert_eq!(whole.len(), 1 + 20 + 1);
    assert!(matches!(whole[0].content, Content::Summary { .. }));
    assert_eq!(whole[0].index, 0);
    assert_eq!(whole[1].index, 20);
    for n in [0, 1, 5, 21, 22, 50] {
        let tail = store.messages(&s, Some(n)).unwrap();
        assert_eq!(tail, whole[whole.len().saturating_sub(n)..], "last {n}");
    }
    // Another store instance (reading through the index, not its own writer) agrees.
    store.close(&s).unwrap();
    drop(store);
    let store = open(dir.path());
    assert_eq!(store.messages(&s, Some(3)).unwrap(), whole[19..]);
}

#[test]
fn list_orders_by_update_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let a = store.create(new("a", "/one")).unwrap().id;
    let b = store.create(new("b", "/two")).unwrap().id;
    let c = store.create(new("c", "/one")).unwrap().id;
    std::thread::sleep(std::time::Duration::from_millis(3));
    store.append(&a, vec![user("find the needle")]).unwrap();
    store.tag(&b, "red", false).unwrap();
    let ids = |q: ListQuery| {
        store
            .list(&q)
            .unwrap()
            .into_iter()
            .map(|m| m.id.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(ListQuery::default()), ["b", "a", "c"]);
    assert_eq!(
        ids(ListQuery {
            limit: Some(2),
            ..ListQuery::default()
        }),
        ["b", "a"]
    );
    assert_eq!(
        ids(ListQuery {
            cwd: Some("/one".into()),
            ..ListQuery::default()
        }),
        ["a", "c"]
    );
    assert_eq!(
        ids(ListQuery {
            tag: Some("red".into()),
            ..ListQuery::default()
        }),
        ["b"]
    );
    assert_eq!(
        ids(ListQuery {
            text: Some("NEEDLE".into()),
            ..ListQuery::default()
        }),
        ["a"]
    );
    // LIKE wildcards in the text are literal.
    assert!(
        ids(ListQuery {
            text: Some("%".into()),
            ..ListQuery::default()
        })
        .is_empty()
    );
    let _ = c;
}

#[test]
fn fork_whole_up_to_a_message_and_at_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = session_with_turns(&store, "src", 3);
    let src_events = store.load(&s, LoadRange::default()).unwrap().events;
    let src_text = store.export(&s, ExportFormat::Jsonl).unwrap();

    // Whole, with a chosen id.
    let whole = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::Whole,
                new_id: Some(id("copy")),
            },
        )
        .unwrap();
    assert_eq!(whole.id.as_str(), "copy");
    assert_eq!(whole.parent_id.as_deref(), Some("src"));
    assert_eq!(whole.message_count, 12);
    let child = store.load(&whole.id, LoadRange::default()).unwrap().events;
    assert_eq!(child[..13], src_events[..], "history copied verbatim");
    let EventPayload::SessionFork(f) = &child[13].payload else {
        panic!("last event is the fork record: {:?}", child[13]);
    };
    assert_eq!(f.fork_seq, 13);
    assert_eq!(
        whole.fork_point.as_deref(),
        Some(src_events[12].id.as_str())
    );
    assert_eq!(
        whole.created_at, child[13].ts,
        "a fork was created when it was forked"
    );
    assert!(whole.created_at > child[0].ts);
    // Only fork writes fork records.
    let fake = Event::new(
        0,
        None,
        EventPayload::SessionFork(agent_core::events::SessionFork {
            parent_session_id: "x".into(),
            fork_point: None,
            fork_seq: 0,
        }),
    );
    assert!(matches!(
        store.append(&whole.id, vec![fake]),
        Err(StoreError::BadInput(_))
    ));

    // Up to message 5: the first five conversation events.
    let upto = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::UpToMessage(5),
                new_id: None,
            },
        )
        .unwrap();
    assert_eq!(upto.message_count, 5);
    let ms = store.messages(&upto.id, None).unwrap();
    assert_eq!(ms.len(), 5);
    assert!(matches!(&ms[4].content, Content::Text { text } if text == "u1"));
    // Up to 0 messages keeps system.init only.
    let zero = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::UpToMessage(0),
                new_id: None,
            },
        )
        .unwrap();
    assert_eq!((zero.message_count, zero.event_count), (0, 2));

    // At an event uuid (inclusive).
    let at = src_events[6].id.clone();
    let forked = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::Event(at.clone()),
                new_id: None,
            },
        )
        .unwrap();
    assert_eq!(forked.event_count, 8);
    assert_eq!(forked.fork_point.as_deref(), Some(at.as_str()));

    // Bad points.
    let err = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::UpToMessage(13),
                new_id: None,
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("has 12 messages"), "{err}");
    let err = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::Event(EventId("nope".into())),
                new_id: None,
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("no event with id `nope`"), "{err}");
    let err = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::Whole,
                new_id: Some(id("copy")),
            },
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");
    // The source is untouched, and it can still be written (fork takes no lock).
    assert_eq!(store.export(&s, ExportFormat::Jsonl).unwrap(), src_text);
    store.append(&s, vec![user("more")]).unwrap();
    // A fork of a fork names its own parent.
    let grandchild = store.fork(&whole.id, ForkOptions::default()).unwrap();
    assert_eq!(grandchild.parent_id.as_deref(), Some("copy"));
}

#[test]
fn rename_tag_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = store.create(new("s", "/p")).unwrap().id;
    assert_eq!(
        store.rename(&s, "Title 1").unwrap().title.as_deref(),
        Some("Title 1")
    );
    assert_eq!(
        store.rename(&s, "Title 2").unwrap().title.as_deref(),
        Some("Title 2")
    );
    store.tag(&s, "x", false).unwrap();
    store.tag(&s, "y", false).unwrap();
    store.tag(&s, "x", false).unwrap();
    assert_eq!(store.metadata(&s).unwrap().tags, ["x", "y"]);
    assert_eq!(store.tag(&s, "x", true).unwrap().tags, ["y"]);
    assert!(store.tag(&s, " ", false).is_err());
    // All of it survives a rebuild from the log alone.
    store.close(&s).unwrap();
    std::fs::remove_dir_all(dir.path().join(INDEX_DIR)).unwrap();
    drop(store);
    let store = open(dir.path());
    let m = store.metadata(&s).unwrap();
    assert_eq!(
        (m.title.as_deref(), m.tags.clone()),
        (Some("Title 2"), vec!["y".to_string()])
    );
    store.delete(&s).unwrap();
    assert!(!dir.path().join("s").exists());
    assert!(store.list(&ListQuery::default()).unwrap().is_empty());
    assert!(matches!(
        store.load(&s, LoadRange::default()),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(store.delete(&s), Err(StoreError::NotFound { .. })));
    // No trash is left behind, and the id can be used again.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert_eq!(names, [INDEX_DIR]);
    store.create(new("s", "/p")).unwrap();
}

#[test]
fn unknown_ids_and_existing_ids_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let err = store.metadata(&id("missing")).unwrap_err();
    assert!(err.is_input_error());
    assert!(err.to_string().contains("no session `missing`"), "{err}");
    store.create(new("s", "/p")).unwrap();
    let err = store.create(new("s", "/p")).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    // A stray directory without a log is not a session.
    std::fs::create_dir(dir.path().join("stray")).unwrap();
    assert!(matches!(
        store.metadata(&id("stray")),
        Err(StoreError::NotFound { .. })
    ));
    store.create(new("stray", "/p")).unwrap();
}

#[test]
fn a_second_writer_is_refused_with_the_holders_pid() {
    let dir = tempfile::tempdir().unwrap();
    let one = open(dir.path());
    let s = one.create(new("s", "/p")).unwrap().id;
    let two = open(dir.path());
    let err = two.append(&s, vec![user("x")]).unwrap_err();
    let pid = std::process::id().to_string();
    assert!(
        err.to_string().contains(&format!(
            "session `s` is open in another process (pid {pid})"
        )),
        "{err}"
    );
    assert!(matches!(two.delete(&s), Err(StoreError::Busy { .. })));
    // Readers do not wait.
    assert_eq!(two.load(&s, LoadRange::default()).unwrap().events.len(), 1);
    one.close(&s).unwrap();
    two.append(&s, vec![user("x")]).unwrap();
    assert!(matches!(
        one.append(&s, vec![user("y")]),
        Err(StoreError::Busy { .. })
    ));
}

#[test]
fn a_torn_tail_is_skipped_then_set_aside_and_a_corrupt_middle_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = store.create(new("s", "/p")).unwrap().id;
    store.append(&s, vec![user("a"), user("b")]).unwrap();
    store.close(&s).unwrap();
    let log = dir.path().join("s").join(LOG_FILE);
    let good = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, format!("{good}{{\"v\":1,\"seq\":4,\"id\":\"to")).unwrap();
    let loaded = store.load(&s, LoadRange::default()).unwrap();
    assert_eq!(loaded.events.len(), 3);
    assert_eq!(loaded.torn.unwrap().offset, good.len() as u64);
    let tail = store
        .load(
            &s,
            LoadRange {
                offset: 0,
                limit: Some(1),
            },
        )
        .unwrap();
    assert_eq!(tail.events[0].seq, 3);
    // The next writer sets it aside and continues after the last good line.
    let appended = store.append(&s, vec![user("c")]).unwrap();
    assert_eq!(appended[0].seq, 4);
    let corrupt = std::fs::read_to_string(dir.path().join("s").join(CORRUPT_FILE)).unwrap();
    assert!(
        corrupt.contains("{\"v\":1,\"seq\":4,\"id\":\"to"),
        "{corrupt}"
    );
    assert_eq!(
        store.load(&s, LoadRange::default()).unwrap().events.len(),
        4
    );
    store.close(&s).unwrap();

    // Corruption in the middle: reported with its line, never skipped, nothing changed.
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{\"broken\": true}";
    let broken = lines.join("\n") + "\n";
    std::fs::write(&log, &broken).unwrap();
    let err = store
        .load(&s, LoadRange::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 2 of"), "{err}");
    assert!(err.contains("repair or remove that line"), "{err}");
    let err = store
        .load(
            &s,
            LoadRange {
                offset: 0,
                limit: Some(10),
            },
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 2 of"), "{err}");
    assert!(store.messages(&s, None).is_err());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), broken);
}

#[test]
fn unknown_event_types_load_and_export_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let future = [
        r#"{"v":1,"seq":1,"id":"e1","parent":null,"ts":"2026-01-01T00:00:00Z","type":"system.init","sessionId":"future","cwd":"/p","futureField":{"x":[1,2]}}"#,
        r#"{"v":2,"seq":2,"id":"e2","parent":"e1","ts":"2026-01-01T00:00:01.5+02:00","type":"tool.progress","percent":50,"nested":{"a":null}}"#,
        r#"{"v":1,"seq":3,"id":"e3","parent":"e2","ts":"2026-01-01T00:00:02Z","type":"user.message","text":"hi","attachments":[{"name":"f.png"}]}"#,
        r#"{"type":"memory.write","v":1,"seq":4,"id":"e4","parent":"e3","ts":"2026-01-01T00:00:03Z","key":"k","value":1.50}"#,
    ]
    .join("\n")
        + "\n";
    let m = store.import(&future, Some(id("future"))).unwrap();
    assert_eq!((m.event_count, m.message_count), (4, 1));
    let events = store.load(&m.id, LoadRange::default()).unwrap().events;
    assert!(
        matches!(&events[1].payload, EventPayload::Unknown { type_name } if type_name == "tool.progress")
    );
    assert_eq!(store.export(&m.id, ExportFormat::Jsonl).unwrap(), future);
    // Appending to it keeps the old lines byte for byte.
    store.append(&m.id, vec![user("more")]).unwrap();
    let after = store.export(&m.id, ExportFormat::Jsonl).unwrap();
    assert!(after.starts_with(&future));
    // A fork copies them verbatim too.
    let f = store.fork(&m.id, ForkOptions::default()).unwrap();
    assert!(
        store
            .export(&f.id, ExportFormat::Jsonl)
            .unwrap()
            .starts_with(&after)
    );
}

#[test]
fn import_round_trips_export_and_refuses_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = session_with_turns(&store, "s", 2);
    let text = store.export(&s, ExportFormat::Jsonl).unwrap();
    // Under its own id (another store): byte for byte.
    let other_dir = tempfile::tempdir().unwrap();
    let other = open(other_dir.path());
    let same = other.import(&text, Some(id("s"))).unwrap();
    assert_eq!(other.export(&same.id, ExportFormat::Jsonl).unwrap(), text);
    // Under a new id: the log's own sessionId names the new session, the rest is verbatim.
    let copy = store.import(&text, None).unwrap();
    let copied = store.export(&copy.id, ExportFormat::Jsonl).unwrap();
    assert_eq!(
        copied,
        text.replacen(
            r#""sessionId":"s""#,
            &format!(r#""sessionId":"{}""#, copy.id),
            1
        )
    );
    assert_eq!(copy.message_count, 8);
    let bad = text.replacen("\"type\":\"user.message\"", "\"type\":7", 1);
    let err = store.import(&bad, None).unwrap_err().to_string();
    assert!(err.starts_with("line 2: "), "{err}");
    assert!(store.import("\n\n", None).is_err());
    assert!(matches!(
        store.import(&text, Some(id("s"))),
        Err(StoreError::AlreadyExists { .. })
    ));
}

/// A log line by line: `(seq, json fields after the envelope)`.
fn log_of(events: &[(u64, &str)]) -> String {
    let mut text = String::new();
    for (i, (seq, fields)) in events.iter().enumerate() {
        let parent = if i == 0 {
            "null".to_owned()
        } else {
            format!("\"e{i}\"")
        };
        text += &format!(
            r#"{{"v":1,"seq":{seq},"id":"e{}","parent":{parent},"ts":"2026-01-01T00:00:0{}Z",{fields}}}"#,
            i + 1,
            i % 10
        );
        text.push('\n');
    }
    text
}

const INIT_T: &str = r#""type":"system.init","sessionId":"t","cwd":"/p""#;
const USER: &str = r#""type":"user.message","text":"hi""#;
const ASSISTANT: &str = r#""type":"assistant.message","text":"hello""#;

/// Every way an imported log can break the rules the store's own logs keep: each is refused
/// with one message naming the line, the field and the value, and nothing is written.
#[test]
fn import_refuses_each_invalid_log_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let before = store.list(&ListQuery::default()).unwrap().len();
    let fork_of = |parent: &str, point: &str, seq: u64| {
        format!(
            r#""type":"session.fork","parentSessionId":"{parent}","forkPoint":{point},"forkSeq":{seq}"#
        )
    };
    let oversize = format!("the line is {} bytes", MAX_LINE_BYTES + 1);
    let huge_text = format!(
        r#""type":"user.message","text":"{}""#,
        "x".repeat(MAX_LINE_BYTES)
    );
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        // seq
        (
            "duplicate seq",
            log_of(&[(1, INIT_T), (2, USER), (2, ASSISTANT)]),
            vec![
                "line 3: ",
                "seq 2 follows seq 2",
                "a duplicate",
                "must be 3",
            ],
        ),
        (
            "gap",
            log_of(&[(1, INIT_T), (2, USER), (4, ASSISTANT)]),
            vec!["line 3: ", "seq 4 follows seq 2", "a gap", "must be 3"],
        ),
        (
            "out of order",
            log_of(&[(1, INIT_T), (2, USER), (1, ASSISTANT)]),
            vec!["line 3: ", "seq 1 follows seq 2", "out of order"],
        ),
        (
            "first seq 0",
            log_of(&[(0, INIT_T), (1, USER)]),
            vec!["line 1: ", "seq 0 on the first event", "must start at 1"],
        ),
        (
            "first seq 2",
            log_of(&[(2, INIT_T), (3, USER)]),
            vec!["line 1: ", "seq 2 on the first event", "must start at 1"],
        ),
        // sessionId
        (
            "sessionId with a slash",
            log_of(&[(1, r#""type":"system.init","sessionId":"../x""#), (2, USER)]),
            vec!["line 1: ", "`sessionId` \"../x\"", "not a valid id", "`/`"],
        ),
        (
            "empty sessionId",
            log_of(&[(1, r#""type":"system.init","sessionId":"""#)]),
            vec!["line 1: ", "`sessionId` \"\"", "empty"],
        ),
        (
            "whitespace-only sessionId",
            log_of(&[(1, r#""type":"system.init","sessionId":"  ""#)]),
            vec!["line 1: ", "`sessionId` \"  \"", "only whitespace"],
        ),
        (
            "sessionId with a trailing space",
            log_of(&[(1, r#""type":"system.init","sessionId":"t ""#)]),
            vec!["line 1: ", "`sessionId` \"t \"", "ends with whitespace"],
        ),
        (
            "sessionId with a zero-width space",
            log_of(&[(1, "\"type\":\"system.init\",\"sessionId\":\"t\u{200b}\"")]),
            vec!["line 1: ", "`sessionId`", "invisible character (U+200B)"],
        ),
        (
            "sessionId in another event type, not a string",
            log_of(&[
                (1, INIT_T),
                (2, r#""type":"user.message","text":"x","sessionId":5"#),
            ]),
            vec!["line 2: ", "`sessionId` is 5, not a string"],
        ),
        (
            "sessionId in an unknown event type, invalid",
            log_of(&[
                (1, INIT_T),
                (2, r#""type":"future.thing","sessionId":"a\\b""#),
            ]),
            vec!["line 2: ", "`sessionId` \"a\\\\b\"", "not a valid id"],
        ),
        (
            "foreign sessionId: a second system.init",
            log_of(&[
                (1, INIT_T),
                (2, USER),
                (3, r#""type":"system.init","sessionId":"victim""#),
            ]),
            vec![
                "line 3: ",
                "`sessionId` \"victim\" is another session's",
                "say \"t\" (line 1)",
            ],
        ),
        (
            "foreign sessionId on another event",
            log_of(&[
                (1, INIT_T),
                (
                    2,
                    r#""type":"user.message","text":"x","sessionId":"victim""#,
                ),
            ]),
            vec!["line 2: ", "`sessionId` \"victim\" is another session's"],
        ),
        (
            "foreign sessionId after a fork",
            log_of(&[
                (1, r#""type":"system.init","sessionId":"root""#),
                (2, &fork_of("root", "\"e1\"", 1)),
                (3, r#""type":"system.init","sessionId":"t""#),
                (4, r#""type":"system.init","sessionId":"victim""#),
            ]),
            vec![
                "line 4: ",
                "`sessionId` \"victim\" is another session's",
                "(line 3)",
            ],
        ),
        // parentSessionId
        (
            "parentSessionId with a slash",
            log_of(&[(1, INIT_T), (2, &fork_of("../p", "\"e1\"", 1))]),
            vec!["line 2: ", "`parentSessionId` \"../p\"", "not a valid id"],
        ),
        (
            "whitespace parentSessionId",
            log_of(&[(1, INIT_T), (2, &fork_of(" ", "\"e1\"", 1))]),
            vec!["line 2: ", "`parentSessionId` \" \"", "only whitespace"],
        ),
        (
            "parentSessionId is the target",
            log_of(&[(1, INIT_T), (2, &fork_of("target", "\"e1\"", 1))]),
            vec!["line 2: ", "`parentSessionId` \"target\"", "own parent"],
        ),
        (
            "parentSessionId on an unknown event, invalid",
            log_of(&[
                (1, INIT_T),
                (2, r#""type":"future.link","parentSessionId":".x""#),
            ]),
            vec!["line 2: ", "`parentSessionId` \".x\"", "starts with `.`"],
        ),
        // Other id fields.
        (
            "agentId with a slash",
            log_of(&[
                (1, INIT_T),
                (2, r#""type":"subagent.start","agentId":"../../etc""#),
            ]),
            vec!["line 2: ", "`agentId` \"../../etc\"", "not a valid id"],
        ),
        (
            "fork point that is not the event before",
            log_of(&[(1, INIT_T), (2, USER), (3, &fork_of("p", "\"e1\"", 1))]),
            vec![
                "line 3: ",
                "forkPoint \"e1\" and forkSeq 1",
                "line 2: id \"e2\", seq 2",
            ],
        ),
        (
            "fork seq that is not the event before's",
            log_of(&[(1, INIT_T), (2, &fork_of("p", "\"e1\"", 7))]),
            vec!["line 2: ", "forkSeq 7"],
        ),
        (
            "a first fork naming a point",
            log_of(&[(1, &fork_of("p", "\"e0\"", 0))]),
            vec!["line 1: ", "it is the first event"],
        ),
        // Line size.
        (
            "oversize line",
            log_of(&[(1, INIT_T), (2, &huge_text)]),
            vec![
                "line 2: ",
                "more than the 16777216 bytes (16 MiB",
                "shorten",
            ],
        ),
        (
            "oversize garbage",
            format!(
                "{}{}\n",
                log_of(&[(1, INIT_T)]),
                "x".repeat(MAX_LINE_BYTES + 1)
            ),
            vec!["line 2: ", &oversize],
        ),
    ];
    for (name, jsonl, wanted) in &cases {
        let err = store.import(jsonl, Some(id("target"))).unwrap_err();
        assert!(matches!(err, StoreError::BadInput(_)), "{name}: {err:?}");
        assert!(err.is_input_error(), "{name}");
        let msg = err.to_string();
        for want in wanted {
            assert!(msg.contains(want), "{name}: {msg:?} lacks {want:?}");
        }
        assert_eq!(msg.lines().count(), 1, "{name}: one line");
        assert!(msg.len() < 600, "{name}: short: {msg}");
        // Nothing written: no directory, no row.
        assert!(!dir.path().join("target").exists(), "{name}");
        assert_eq!(
            store.list(&ListQuery::default()).unwrap().len(),
            before,
            "{name}"
        );
    }
    // The same logs, fixed, import.
    let good = log_of(&[(1, INIT_T), (2, USER), (3, ASSISTANT)]);
    let m = store.import(&good, Some(id("target"))).unwrap();
    assert_eq!((m.event_count, m.last_seq), (3, 3));
}

/// The log's own events are those after its last `session.fork`: only their `sessionId` is
/// this session's (and rewritten under a new id); copied history keeps its ancestors' ids.
#[test]
fn import_of_a_fork_keeps_copied_history_and_rewrites_only_its_own_session_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let root = session_with_turns(&store, "root", 1);
    let a = store
        .fork(
            &root,
            ForkOptions {
                at: ForkAt::Whole,
                new_id: Some(id("a")),
            },
        )
        .unwrap();
    let b = store
        .fork(
            &a.id,
            ForkOptions {
                at: ForkAt::UpToMessage(1),
                new_id: Some(id("b")),
            },
        )
        .unwrap();
    // A run resumed in `b` writes its own system.init.
    let init_b = Event::new(
        0,
        None,
        EventPayload::SystemInit(agent_core::events::SystemInit {
            session_id: "b".into(),
            cwd: Some("/p".into()),
            model: None,
            tools: Vec::new(),
            permission_mode: None,
            git_branch: None,
        }),
    );
    store.append(&b.id, vec![init_b, user("again")]).unwrap();
    store.close(&b.id).unwrap();
    let text = store.export(&b.id, ExportFormat::Jsonl).unwrap();
    assert_eq!(text.matches(r#""sessionId":"root""#).count(), 1);

    // Another store, same id: verbatim, same parentage.
    let other_dir = tempfile::tempdir().unwrap();
    let other = open(other_dir.path());
    let same = other.import(&text, Some(id("b"))).unwrap();
    assert_eq!(other.export(&same.id, ExportFormat::Jsonl).unwrap(), text);
    assert_eq!(same.parent_id.as_deref(), Some("a"));
    // A new id: only the own system.init (after the fork) is rewritten.
    let c = other.import(&text, Some(id("c"))).unwrap();
    let imported = other.export(&c.id, ExportFormat::Jsonl).unwrap();
    assert_eq!(
        imported,
        text.replacen(r#""sessionId":"b""#, r#""sessionId":"c""#, 1)
    );
    assert!(
        imported.contains(r#""sessionId":"root""#),
        "copied history is kept"
    );
    assert_eq!(c.parent_id.as_deref(), Some("a"));
    let events = other.load(&c.id, LoadRange::default()).unwrap().events;
    let own_init = events
        .iter()
        .rev()
        .find_map(|e| match &e.payload {
            EventPayload::SystemInit(i) => Some(i.session_id.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(own_init, "c");
    // Its parent's id is no id to import it under.
    let err = other.import(&text, Some(id("a"))).unwrap_err().to_string();
    assert!(err.contains("own parent"), "{err}");
    // A fork whose own part has no sessionId imports under any id, verbatim.
    let plain = store.export(&a.id, ExportFormat::Jsonl).unwrap();
    let d = other.import(&plain, Some(id("d"))).unwrap();
    assert_eq!(other.export(&d.id, ExportFormat::Jsonl).unwrap(), plain);
}

/// Whitespace at either end, whitespace other than spaces, and invisible characters are refused
/// wherever an id is taken: create, import, fork, rename, JSON; a directory so named is not a
/// session.
#[test]
fn whitespace_and_invisible_ids_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    session_with_turns(&store, "real", 1);
    for bad in [
        " ",
        "   ",
        "\u{a0}",
        "\u{3000}",
        " real",
        "real ",
        "\u{2003}x",
        "x\u{a0}",
        "a\u{a0}b",
        "a\u{2028}b",
        "a\u{200b}b",
        "\u{feff}x",
        "x\u{200d}",
        "a\u{202e}b",
        "a\u{ad}b",
    ] {
        let err = SessionId::parse(bad).unwrap_err().to_string();
        assert!(err.starts_with("invalid session id"), "{bad:?}: {err}");
        assert!(
            serde_json::from_value::<SessionId>(json!(bad)).is_err(),
            "{bad:?} as JSON"
        );
        // Every verb takes a SessionId, so none can be reached with it; and a directory with
        // that name (made by hand, or by an older version) is not a session.
        let path = dir.path().join(bad);
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join(LOG_FILE), log_of(&[(1, USER)])).unwrap();
    }
    assert_eq!(store.reindex().unwrap(), 1);
    drop(store);
    // An index written under the old rules, holding a row for such an id, drops it on open.
    {
        let db = rusqlite::Connection::open(dir.path().join(INDEX_DIR).join(INDEX_FILE)).unwrap();
        db.execute_batch(
            "INSERT INTO sessions SELECT ' real', title, created_at, updated_at, updated_us, \
             message_count, cwd, model, first_prompt, git_branch, size_bytes, event_count, \
             last_seq, last_event_id, parent_id, fork_point, tags FROM sessions WHERE id = 'real'; \
             INSERT INTO open_writers VALUES ('\u{200b}x', 1); \
             DELETE FROM meta WHERE key = 'id_rules';",
        )
        .unwrap();
    }
    let again = open(dir.path());
    let ids: Vec<String> = again
        .list(&ListQuery::default())
        .unwrap()
        .into_iter()
        .map(|m| m.id.to_string())
        .collect();
    assert_eq!(ids, ["real"]);
    // Inner plain spaces stay valid.
    assert!(SessionId::parse("my session").is_ok());
}

/// No log line is longer than MAX_LINE_BYTES: append refuses, reads report it (in the middle,
/// at the end, whole or from the tail) as corruption naming its line.
#[test]
fn lines_over_the_limit_are_refused_on_append_and_reported_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = session_with_turns(&store, "s", 1);
    let before = store.export(&s, ExportFormat::Jsonl).unwrap();
    let err = store
        .append(&s, vec![user("ok"), user(&"x".repeat(MAX_LINE_BYTES))])
        .unwrap_err();
    assert!(matches!(err, StoreError::BadInput(_)), "{err}");
    assert!(err.to_string().contains("16 MiB"), "{err}");
    assert_eq!(
        store.export(&s, ExportFormat::Jsonl).unwrap(),
        before,
        "nothing of the batch"
    );
    // Just under the limit is fine.
    let fits = "y".repeat(MAX_LINE_BYTES - 200);
    store.append(&s, vec![user(&fits)]).unwrap();
    store.close(&s).unwrap();

    let huge = log_of(&[(
        2,
        &format!(
            r#""type":"user.message","text":"{}""#,
            "z".repeat(MAX_LINE_BYTES)
        ),
    )]);
    let huge = huge.trim_end();
    for (name, text, line) in [
        (
            "middle",
            format!(
                "{}{huge}\n{}",
                log_of(&[(1, INIT_T)]),
                log_of(&[(1, USER)]).replace("\"seq\":1", "\"seq\":3")
            ),
            2,
        ),
        ("last", format!("{}{huge}\n", log_of(&[(1, INIT_T)])), 2),
    ] {
        // A log changed by hand (or written by an older version without the limit).
        let sid = store.create(new(&format!("hand-{name}"), "/p")).unwrap().id;
        store.close(&sid).unwrap();
        let sdir = dir.path().join(sid.as_str());
        std::fs::write(sdir.join(LOG_FILE), &text).unwrap();
        let want = format!("line {line} of");
        for range in [
            LoadRange::default(),
            LoadRange {
                offset: 0,
                limit: Some(10),
            },
        ] {
            let err = store.load(&sid, range).unwrap_err();
            assert!(
                matches!(err, StoreError::Corrupt { .. }),
                "{name} {range:?}: {err}"
            );
            let msg = err.to_string();
            assert!(
                msg.contains(&want) && msg.contains("16 MiB"),
                "{name} {range:?}: {msg}"
            );
        }
        // A writer does not set it aside as a torn tail: it refuses, the log stays as it was.
        assert!(store.append(&sid, vec![user("x")]).is_err(), "{name}");
        assert_eq!(
            std::fs::read_to_string(sdir.join(LOG_FILE)).unwrap(),
            text,
            "{name}"
        );
        assert!(!sdir.join(CORRUPT_FILE).exists(), "{name}");
    }
    // A long torn tail (no newline) is still a torn tail, skipped by readers.
    let sid = store.create(new("torn", "/p")).unwrap().id;
    store.close(&sid).unwrap();
    let sdir = dir.path().join("torn");
    std::fs::write(
        sdir.join(LOG_FILE),
        format!(
            "{}{}",
            log_of(&[(1, INIT_T)]),
            "w".repeat(MAX_LINE_BYTES + 10)
        ),
    )
    .unwrap();
    for range in [
        LoadRange::default(),
        LoadRange {
            offset: 0,
            limit: Some(5),
        },
    ] {
        let loaded = store.load(&sid, range).unwrap();
        assert_eq!(loaded.events.len(), 1);
        assert!(loaded.torn.is_some());
    }
}

#[test]
fn claude_export_is_a_linked_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut spec = new("s", "/work/p");
    spec.git_branch = Some("dev".into());
    let s = store.create(spec).unwrap().id;
    store
        .append(
            &s,
            vec![user("hi"), assistant("hello"), tool_use(1), tool_result(1)],
        )
        .unwrap();
    store.rename(&s, "Greeting").unwrap();
    let text = store.export(&s, ExportFormat::Claude).unwrap();
    let all: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(all.len(), 5);
    let types: Vec<&str> = all.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["summary", "user", "assistant", "assistant", "user"]);
    let (summary, lines) = all.split_first().unwrap();
    assert_eq!(lines[0]["parentUuid"], Value::Null);
    for i in 1..4 {
        assert_eq!(lines[i]["parentUuid"], lines[i - 1]["uuid"], "line {i}");
        assert_eq!(lines[i]["sessionId"], "s");
        assert_eq!(lines[i]["cwd"], "/work/p");
        assert_eq!(lines[i]["gitBranch"], "dev");
    }
    assert_eq!(
        lines[0]["message"],
        json!({"role": "user", "content": "hi"})
    );
    assert_eq!(
        lines[1]["message"]["content"][0],
        json!({"type": "text", "text": "hello"})
    );
    assert_eq!(lines[1]["message"]["model"], "m1");
    assert_eq!(lines[2]["message"]["content"][0]["type"], "tool_use");
    assert_eq!(lines[3]["message"]["content"][0]["tool_use_id"], "t1");
    // The title, anchored at the last message.
    assert_eq!(summary["summary"], "Greeting");
    assert_eq!(summary["leafUuid"], lines[3]["uuid"]);
}

#[test]
fn claude_export_gives_each_model_answer_one_message_id_request_id_and_its_usage() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = store.create(new("s", "/work/real")).unwrap().id;
    let usage = TokenUsage {
        input_tokens: 12,
        output_tokens: 34,
        cache_creation_input_tokens: 2048,
        cache_read_input_tokens: 4096,
    };
    let answer = |text: Option<&str>, call: Option<u32>| -> Event {
        let (message_id, request_id, model) = (
            Some("msg_A".to_owned()),
            Some("req_A".to_owned()),
            Some("claude-x-20260101".to_owned()),
        );
        let payload = match (text, call) {
            (Some(text), _) => EventPayload::AssistantMessage(AssistantMessage {
                text: text.into(),
                message_id,
                request_id,
                model,
                usage: Some(usage),
            }),
            (None, Some(n)) => EventPayload::ToolUse(ToolUse {
                tool_use_id: format!("t{n}"),
                name: "Read".into(),
                input: json!({"file_path": "a.txt"}),
                message_id,
                request_id,
                model,
                usage: Some(usage),
            }),
            (None, None) => unreachable!(),
        };
        Event::new(0, None, payload)
    };
    let mut hook_context = user("<system-reminder>\nfrom a hook\n</system-reminder>");
    hook_context.extra.insert("isMeta".into(), json!(true));
    let mut structured = tool_result(1);
    if let EventPayload::ToolResult(r) = &mut structured.payload {
        r.output = json!({"stdout": "one\n", "exitCode": 0});
    }
    let mut old = assistant("written by an older version");
    old.ts = "2026-11-26T21:45:01.123456Z".into();
    store
        .append(
            &s,
            vec![
                user("read it"),
                hook_context,
                answer(Some("Reading."), None),
                answer(None, Some(1)),
                structured,
                old,
            ],
        )
        .unwrap();
    let text = store.export(&s, ExportFormat::Claude).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    let (text_line, call_line) = (&lines[2], &lines[3]);
    for line in [text_line, call_line] {
        assert_eq!(line["type"], "assistant");
        assert_eq!(line["message"]["id"], "msg_A");
        assert_eq!(line["requestId"], "req_A");
        assert_eq!(line["message"]["model"], "claude-x-20260101");
        assert_eq!(
            line["message"]["usage"],
            json!({"input_tokens": 12, "output_tokens": 34,
                   "cache_creation_input_tokens": 2048, "cache_read_input_tokens": 4096})
        );
    }
    for line in &lines {
        assert_eq!(line["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(line["cwd"], "/work/real");
        let ts = line["timestamp"].as_str().unwrap();
        assert!(
            ts.len() == "2026-11-26T21:45:01.123Z".len() && ts.ends_with('Z'),
            "milliseconds in UTC: {ts}"
        );
    }
    assert_eq!(lines[1]["isMeta"], true);
    assert_eq!(lines[0].get("isMeta"), None);
    // A tool result holds the text the model was sent; the structured output stays beside it.
    assert_eq!(
        lines[4]["message"]["content"][0]["content"],
        r#"{"stdout":"one\n","exitCode":0}"#
    );
    assert_eq!(
        lines[4]["toolUseResult"],
        json!({"stdout": "one\n", "exitCode": 0})
    );
    // An event logged before answers had ids: its own message id, the session's model, no
    // usage and no request id (never `null`, which readers reject).
    assert_eq!(lines[5]["timestamp"], "2026-11-26T21:45:01.123Z");
    assert!(
        lines[5]["message"]["id"]
            .as_str()
            .unwrap()
            .starts_with("msg_")
    );
    assert_ne!(lines[5]["message"]["id"], "msg_A");
    assert_eq!(lines[5]["message"]["model"], "m1");
    assert_eq!(lines[5]["message"].get("usage"), None);
    assert_eq!(lines[5].get("requestId"), None);
    for field in ["id", "model", "cwd", "version", "sessionId", "requestId"] {
        assert!(
            !text.contains(&format!("\"{field}\":null")),
            "{field}: {text}"
        );
    }
}

#[test]
fn the_index_is_rebuilt_when_missing_and_follows_directories_changed_behind_its_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    {
        let store = open(&root);
        session_with_turns(&store, "a", 2);
        session_with_turns(&store, "b", 1);
    }
    let before = open(&root).list(&ListQuery::default()).unwrap();
    std::fs::remove_dir_all(root.join(INDEX_DIR)).unwrap();
    let store = open(&root);
    assert_eq!(store.list(&ListQuery::default()).unwrap(), before);
    drop(store);
    // A session copied in by hand, and one removed by hand.
    std::fs::create_dir(root.join("c")).unwrap();
    std::fs::copy(root.join("a").join(LOG_FILE), root.join("c").join(LOG_FILE)).unwrap();
    std::fs::remove_dir_all(root.join("b")).unwrap();
    let store = open(&root);
    let ids: Vec<String> = store
        .list(&ListQuery::default())
        .unwrap()
        .into_iter()
        .map(|m| m.id.to_string())
        .collect();
    assert_eq!(ids, ["a", "c"]);
    assert_eq!(store.reindex().unwrap(), 2);
}

#[test]
fn durability_os_appends_are_readable_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::open(StoreOptions::new(dir.path()).durability(Durability::Os)).unwrap();
    let s = store.create(new("s", "/p")).unwrap().id;
    for i in 0..100 {
        store.append(&s, vec![user(&i.to_string())]).unwrap();
    }
    let other = open(dir.path());
    assert_eq!(other.metadata(&s).unwrap().event_count, 101);
    let lines = std::fs::read_to_string(dir.path().join("s").join(LOG_FILE)).unwrap();
    for l in lines.lines() {
        let e = decode_line(l).unwrap();
        assert_eq!(encode_line(&e).unwrap(), l);
    }
}

#[test]
fn metadata_catches_up_with_logs_changed_behind_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    {
        let store = open(&root);
        session_with_turns(&store, "a", 2);
        session_with_turns(&store, "b", 3);
    }
    let store = open(&root);
    let a = id("a");
    let before = store.metadata(&a).unwrap();
    // Lines appended by hand, continuing the log (what a writer that crashed before updating
    // the index leaves).
    let log = root.join("a").join(LOG_FILE);
    let mut text = String::new();
    let mut parent = before.last_event_id.clone().map(EventId);
    for (i, mut e) in [user("late"), assistant("later")].into_iter().enumerate() {
        e.seq = before.last_seq + 1 + i as u64;
        e.parent = parent.take();
        parent = Some(e.id.clone());
        text += &encode_line(&e).unwrap();
        text.push('\n');
    }
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    drop(f);
    let caught = store.metadata(&a).unwrap();
    assert_eq!(caught.event_count, before.event_count + 2);
    assert_eq!(caught.message_count, before.message_count + 2);
    assert_eq!(caught.created_at, before.created_at);
    assert_eq!(caught.size_bytes, std::fs::metadata(&log).unwrap().len());
    // Exactly what a fold of the whole log gives.
    store.reindex().unwrap();
    assert_eq!(store.metadata(&a).unwrap(), caught);
    // A different log of the same size or larger under the same name: folded whole.
    std::fs::copy(root.join("b").join(LOG_FILE), &log).unwrap();
    let replaced = store.metadata(&a).unwrap();
    store.reindex().unwrap();
    assert_eq!(store.metadata(&a).unwrap(), replaced);
    assert_eq!(
        replaced.event_count,
        store.metadata(&id("b")).unwrap().event_count
    );
    // A bad line after the indexed part, followed by a good one: reported with its line number
    // in the whole file.
    let lines = std::fs::read_to_string(&log).unwrap().lines().count();
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let mut good = user("after the bad line");
    good.seq = replaced.last_seq + 2;
    let tail = format!("{{\"not an event\n{}\n", encode_line(&good).unwrap());
    std::io::Write::write_all(&mut f, tail.as_bytes()).unwrap();
    drop(f);
    match store.metadata(&a) {
        Err(StoreError::Corrupt { line, .. }) => assert_eq!(line, lines + 1),
        other => panic!("expected a corrupt line, got {other:?}"),
    }
}

#[test]
fn list_is_current_while_a_writer_batches_its_index_updates() {
    let dir = tempfile::tempdir().unwrap();
    let writer = open(dir.path());
    let reader = open(dir.path());
    let s = writer.create(new("s", "/p")).unwrap().id;
    // Appends in quick succession leave the writer's index row behind for a moment...
    for i in 0..20 {
        writer.append(&s, vec![user(&i.to_string())]).unwrap();
    }
    let expected = writer.metadata(&s).unwrap();
    assert_eq!(expected.event_count, 21);
    // ...but neither this store's list nor another's (another process's, say) shows it.
    let mine = writer.list(&ListQuery::default()).unwrap();
    assert_eq!(mine, std::slice::from_ref(&expected));
    let theirs = reader.list(&ListQuery::default()).unwrap();
    assert_eq!(theirs, std::slice::from_ref(&expected));
    assert_eq!(reader.metadata(&s).unwrap(), expected);
    // Closing leaves the row current and the session closed.
    writer.append(&s, vec![user("last")]).unwrap();
    writer.close(&s).unwrap();
    drop(writer);
    let m = open(dir.path()).list(&ListQuery::default()).unwrap();
    assert_eq!(m[0].event_count, 22);
}
