//! The PostgreSQL backend against a real server: the local store's guarantees, tested the same
//! way (contiguous seqs, one writer, kill -9 trials, tail reads, list filters, fork and
//! resume-at, import/export round trips, unknown fields kept), plus what only a shared server
//! has: leases that expire, fencing, schema migrations.
//!
//! Each test makes its own database (`TestDatabase`) on the server named by
//! `AGENT_TEST_POSTGRES_URL`; without one (and without `CI`) a test says it skipped. Child
//! processes are this binary again with `AGENT_STORE_PG_CHILD` set.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "test code: a panic is a failure report"
)]

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_core::events::{
    Compaction, Event, EventPayload, ToolResultEvent, ToolUse, UserMessage, decode_line,
};
use agent_store::postgres::testing::{self, TestDatabase};
use agent_store::postgres::{PgOptions, PgStore};
use agent_store::recovery::{ResumeOptions, resume};
use agent_store::{
    ExportFormat, ForkAt, ForkOptions, ListQuery, LoadRange, NewSession, SessionBackend, SessionId,
    SessionStore, StoreError, StoreOptions, conversation,
};

use crate::rng::Rng;

const CHILD_ENV: &str = "AGENT_STORE_PG_CHILD";

/// The test's database, or `None` (printed) when no server is configured outside CI.
async fn database(label: &str) -> Option<TestDatabase> {
    match TestDatabase::create(label).await {
        Ok(Some(db)) => Some(db),
        Ok(None) => {
            eprintln!("skipped: no PostgreSQL server (set AGENT_TEST_POSTGRES_URL)");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

async fn store(db: &TestDatabase) -> PgStore {
    PgStore::connect(db.options().unwrap()).await.unwrap()
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

fn new_in(name: &str, cwd: &str) -> NewSession {
    NewSession {
        id: Some(id(name)),
        cwd: Some(cwd.into()),
        model: Some("m".into()),
        ..NewSession::default()
    }
}

/// The rows `agent_events` holds for `s`, checked contiguous from 1, and the metadata the
/// store reports checked against a fold of them.
async fn check_consistent(store: &PgStore, s: &SessionId) -> Vec<Event> {
    let events = store.load(s, LoadRange::default()).await.unwrap().events;
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "seqs of {s} are contiguous from 1");
    }
    let meta = store.metadata(s).await.unwrap();
    let jsonl = store.export(s, ExportFormat::Jsonl).await.unwrap();
    let mut folded = agent_store::SessionMetadata::empty(s.clone());
    for line in jsonl.lines() {
        folded.apply(&decode_line(line).unwrap(), line.len() as u64 + 1);
    }
    assert_eq!(meta, folded, "the row of {s} is the fold of its events");
    events
}

#[tokio::test]
async fn create_append_read_back_with_contiguous_seqs() {
    let Some(db) = database("basic").await else {
        return;
    };
    let store = store(&db).await;
    let s = store.create(new_in("a", "/w")).await.unwrap();
    assert_eq!(s.last_seq, 1);
    let first = store
        .append(&s.id, vec![user("one"), user("two")])
        .await
        .unwrap();
    assert_eq!((first[0].seq, first[1].seq), (2, 3));
    assert_eq!(first[1].parent.as_ref(), Some(&first[0].id));
    store.append(&s.id, vec![user("three")]).await.unwrap();
    let events = check_consistent(&store, &s.id).await;
    assert_eq!(events.len(), 4);
    let meta = store.metadata(&s.id).await.unwrap();
    assert_eq!(meta.message_count, 3);
    assert_eq!(meta.first_prompt.as_deref(), Some("one"));
    assert_eq!(meta.cwd.as_deref(), Some("/w"));
    // Another store (another host, as far as the server knows) reads the same.
    let other = PgStore::connect(db.options().unwrap()).await.unwrap();
    assert_eq!(other.metadata(&s.id).await.unwrap(), meta);
    assert_eq!(
        other
            .load(&s.id, LoadRange::default())
            .await
            .unwrap()
            .events,
        events
    );
    // Errors: unknown session, an existing id, a fork event appended by hand.
    assert!(matches!(
        other.metadata(&id("nope")).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.create(new_in("a", "/w")).await,
        Err(StoreError::AlreadyExists { .. })
    ));
    store.close(&s.id).await.unwrap();
}

#[tokio::test]
async fn a_second_writer_is_refused_until_the_first_closes() {
    let Some(db) = database("writers").await else {
        return;
    };
    let a = store(&db).await;
    let b = store(&db).await;
    let s = a.create(new_in("w", "/w")).await.unwrap().id;
    a.append(&s, vec![user("a1")]).await.unwrap();
    let refused = b.append(&s, vec![user("b1")]).await.unwrap_err();
    let text = refused.to_string();
    assert!(matches!(refused, StoreError::Busy { .. }), "{text}");
    assert!(
        text.contains("open in another process") && text.contains("on host"),
        "{text}"
    );
    // rename, tag and delete are writes too.
    assert!(matches!(
        b.rename(&s, "x").await,
        Err(StoreError::Busy { .. })
    ));
    assert!(matches!(b.delete(&s).await, Err(StoreError::Busy { .. })));
    // Readers never wait.
    assert_eq!(b.messages(&s, None).await.unwrap().len(), 1);
    a.close(&s).await.unwrap();
    b.append(&s, vec![user("b1")]).await.unwrap();
    assert!(matches!(
        a.append(&s, vec![user("a2")]).await,
        Err(StoreError::Busy { .. })
    ));
    let texts: Vec<_> = b
        .messages(&s, None)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(texts, vec![2, 3]);
    check_consistent(&b, &s).await;
}

#[tokio::test]
async fn a_dropped_store_frees_its_leases_at_once() {
    let Some(db) = database("dropped").await else {
        return;
    };
    let s = {
        let a = store(&db).await;
        let s = a.create(new_in("d", "/w")).await.unwrap().id;
        a.append(&s, vec![user("a")]).await.unwrap();
        s
        // `a` is dropped without close: its presence connection closes.
    };
    let b = store(&db).await;
    let started = Instant::now();
    b.append(&s, vec![user("b")]).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "not the 30 s lease"
    );
    check_consistent(&b, &s).await;
}

#[tokio::test]
async fn tail_reads_agree_with_the_whole_conversation() {
    let Some(db) = database("tail").await else {
        return;
    };
    let store = store(&db).await;
    let s = store.create(new_in("t", "/w")).await.unwrap().id;
    let mut batch = Vec::new();
    for i in 0..600u64 {
        batch.push(user(&format!("u{i}")));
        if i % 3 == 0 {
            let tool_use: ToolUse = serde_json::from_value(
                serde_json::json!({"toolUseId": format!("t{i}"), "name": "Read", "input": {"file_path": "/x"}}),
            )
            .unwrap();
            let result: ToolResultEvent = serde_json::from_value(
                serde_json::json!({"toolUseId": format!("t{i}"), "output": "ok", "isError": false}),
            )
            .unwrap();
            batch.push(Event::new(0, None, EventPayload::ToolUse(tool_use)));
            batch.push(Event::new(0, None, EventPayload::ToolResult(result)));
        }
        if batch.len() > 100 {
            store.append(&s, std::mem::take(&mut batch)).await.unwrap();
        }
    }
    store.append(&s, batch).await.unwrap();
    // A compaction in the middle replaces a range by one summary.
    let compaction: Compaction =
        serde_json::from_value(serde_json::json!({"fromSeq": 100, "toSeq": 400, "summary": "sum"}))
            .unwrap();
    store
        .append(
            &s,
            vec![Event::new(0, None, EventPayload::Compaction(compaction))],
        )
        .await
        .unwrap();
    let events = store.load(&s, LoadRange::default()).await.unwrap().events;
    let whole = conversation(&events);
    assert_eq!(store.messages(&s, None).await.unwrap(), whole);
    for n in [1usize, 2, 50, 299, 300, 301, 600, 5000] {
        let tail = store.messages(&s, Some(n)).await.unwrap();
        assert_eq!(
            tail,
            whole[whole.len().saturating_sub(n)..].to_vec(),
            "last {n}"
        );
    }
    let window = store
        .load(
            &s,
            LoadRange {
                offset: 10,
                limit: Some(20),
            },
        )
        .await
        .unwrap()
        .events;
    assert_eq!(
        window,
        events[events.len() - 30..events.len() - 10].to_vec()
    );
}

#[tokio::test]
async fn list_orders_by_update_and_filters_by_cwd_tag_and_text() {
    let Some(db) = database("list").await else {
        return;
    };
    let store = store(&db).await;
    for (name, cwd) in [("l1", "/a"), ("l2", "/b"), ("l3", "/a"), ("l4", "/c")] {
        store.create(new_in(name, cwd)).await.unwrap();
        store
            .append(&id(name), vec![user(&format!("prompt of {name} Straße"))])
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    store.tag(&id("l2"), "keep", false).await.unwrap();
    store.tag(&id("l4"), "keep", false).await.unwrap();
    store.rename(&id("l1"), "The Title").await.unwrap();
    let ids = |v: Vec<agent_store::SessionMetadata>| -> Vec<String> {
        v.into_iter().map(|m| m.id.to_string()).collect()
    };
    let all = ids(store.list(ListQuery::default()).await.unwrap());
    assert_eq!(all, ["l1", "l4", "l2", "l3"], "most recently updated first");
    let q = |cwd: Option<&str>, tag: Option<&str>, text: Option<&str>, limit: Option<usize>| {
        ListQuery {
            limit,
            cwd: cwd.map(Into::into),
            tag: tag.map(Into::into),
            text: text.map(Into::into),
        }
    };
    assert_eq!(
        ids(store.list(q(Some("/a"), None, None, None)).await.unwrap()),
        ["l1", "l3"]
    );
    assert_eq!(
        ids(store.list(q(None, Some("keep"), None, None)).await.unwrap()),
        ["l4", "l2"]
    );
    assert_eq!(
        ids(store
            .list(q(None, None, Some("THE TITLE"), None))
            .await
            .unwrap()),
        ["l1"]
    );
    assert_eq!(
        ids(store
            .list(q(None, None, Some("of L3"), None))
            .await
            .unwrap()),
        ["l3"]
    );
    // ASCII-only case folding, as the local index: `STRASSE` is not `Straße`, `ß` matches.
    assert!(
        store
            .list(q(None, None, Some("STRASSE"), None))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .list(q(None, None, Some("straße"), None))
            .await
            .unwrap()
            .len(),
        4
    );
    assert_eq!(
        ids(store.list(q(None, None, None, Some(2))).await.unwrap()),
        ["l1", "l4"]
    );
    // A removed tag no longer matches.
    store.tag(&id("l2"), "keep", true).await.unwrap();
    assert_eq!(
        ids(store.list(q(None, Some("keep"), None, None)).await.unwrap()),
        ["l4"]
    );
}

#[tokio::test]
async fn fork_and_resume_at_copy_history_verbatim() {
    let Some(db) = database("fork").await else {
        return;
    };
    let store = store(&db).await;
    let s = store.create(new_in("f", "/w")).await.unwrap().id;
    let appended = store
        .append(&s, vec![user("m0"), user("m1"), user("m2"), user("m3")])
        .await
        .unwrap();
    let whole = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::Whole,
                new_id: Some(id("f-whole")),
            },
        )
        .await
        .unwrap();
    assert_eq!(whole.parent_id.as_deref(), Some("f"));
    assert_eq!(whole.message_count, 4);
    let two = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::UpToMessage(2),
                new_id: Some(id("f-two")),
            },
        )
        .await
        .unwrap();
    assert_eq!(two.message_count, 2);
    let at = store
        .fork(
            &s,
            ForkOptions {
                at: ForkAt::Event(appended[2].id.clone()),
                new_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(at.fork_point.as_deref(), Some(appended[2].id.as_str()));
    // Copied lines are the source's bytes.
    let source = store.export(&s, ExportFormat::Jsonl).await.unwrap();
    let forked = store
        .export(&id("f-whole"), ExportFormat::Jsonl)
        .await
        .unwrap();
    assert!(forked.starts_with(&source));
    assert!(matches!(
        store
            .fork(
                &s,
                ForkOptions {
                    at: ForkAt::UpToMessage(9),
                    new_id: None
                }
            )
            .await,
        Err(StoreError::BadForkPoint { .. })
    ));
    check_consistent(&store, &id("f-two")).await;
    // Resume-at through the recovery functions, as the agent loop uses them.
    let resumed = resume(
        &store,
        &ResumeOptions {
            session_id: Some(s.clone()),
            resume_at: Some(appended[1].id.clone()),
            ..ResumeOptions::default()
        },
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(resumed.messages.len(), 2);
    assert_ne!(resumed.session.id, s);
    assert_eq!(resumed.forked_from.as_ref(), Some(&s));
}

#[tokio::test]
async fn export_import_round_trips_between_backends_and_keeps_unknown_fields() {
    let Some(db) = database("roundtrip").await else {
        return;
    };
    let pg = store(&db).await;
    let dir = tempfile::tempdir().unwrap();
    let local = SessionStore::open(StoreOptions::new(dir.path()))
        .await
        .unwrap();
    let s = local.create(new_in("r", "/w")).await.unwrap().id;
    local.append(&s, vec![user("hello")]).await.unwrap();
    local.close(&s).await.unwrap();
    // An event from a newer version: unknown type, unknown fields.
    let mut jsonl = local.export(&s, ExportFormat::Jsonl).await.unwrap();
    let last = jsonl.lines().last().unwrap();
    let parent = decode_line(last).unwrap().id;
    jsonl += &format!(
        "{{\"v\":1,\"seq\":3,\"id\":\"e-future\",\"parent\":\"{parent}\",\"ts\":\"2026-11-27T00:00:00.000000Z\",\"type\":\"future.thing\",\"sessionId\":\"r\",\"shiny\":{{\"a\":[1,2]}}}}\n"
    );
    let imported = pg.import(jsonl.clone(), Some(s.clone())).await.unwrap();
    assert_eq!(imported.event_count, 3);
    let back = pg.export(&s, ExportFormat::Jsonl).await.unwrap();
    assert_eq!(back, jsonl, "byte for byte");
    // And back into another local store.
    let dir2 = tempfile::tempdir().unwrap();
    let local2 = SessionStore::open(StoreOptions::new(dir2.path()))
        .await
        .unwrap();
    local2.import(back.clone(), Some(s.clone())).await.unwrap();
    assert_eq!(local2.export(&s, ExportFormat::Jsonl).await.unwrap(), jsonl);
    assert_eq!(
        local2.metadata(&s).await.unwrap(),
        pg.metadata(&s).await.unwrap(),
        "the same metadata on both backends"
    );
    assert_eq!(
        local2.export(&s, ExportFormat::Claude).await.unwrap(),
        pg.export(&s, ExportFormat::Claude).await.unwrap()
    );
    // Import rules apply: nothing is written for a refused log.
    let bad = jsonl.replacen("\"seq\":2", "\"seq\":5", 1);
    assert!(matches!(
        pg.import(bad, Some(id("bad"))).await,
        Err(StoreError::BadInput(_))
    ));
    assert!(matches!(
        pg.metadata(&id("bad")).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        pg.import(jsonl, Some(s.clone())).await,
        Err(StoreError::AlreadyExists { .. })
    ));
    // Delete takes the events with it.
    pg.delete(&s).await.unwrap();
    assert!(matches!(
        pg.export(&s, ExportFormat::Jsonl).await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn migrations_are_recorded_and_a_newer_schema_is_refused() {
    let Some(db) = database("schema").await else {
        return;
    };
    // Two stores connecting at once apply the schema once.
    let (a, b) = tokio::join!(
        PgStore::connect(db.options().unwrap()),
        PgStore::connect(db.options().unwrap())
    );
    a.unwrap();
    b.unwrap();
    let admin = raw_client(&db).await;
    let rows = admin
        .query("SELECT version FROM agent_schema_migrations", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].get::<_, i32>(0),
        agent_store::postgres::SCHEMA_VERSION
    );
    admin
        .execute(
            "INSERT INTO agent_schema_migrations (version, name) VALUES (99, 'future')",
            &[],
        )
        .await
        .unwrap();
    let refused = PgStore::connect(db.options().unwrap()).await.unwrap_err();
    assert!(
        refused.to_string().contains("schema version 99, newer"),
        "{refused}"
    );
}

#[tokio::test]
async fn passwords_come_from_the_environment_and_are_never_shown() {
    let Some(db) = database("password").await else {
        return;
    };
    // A URL with a password is refused, and the message does not repeat it.
    let with = db
        .url()
        .replacen("agent_test@", "agent_test:hunter2-secret@", 1);
    let refused = PgOptions::new(&with).unwrap_err().to_string();
    assert!(
        refused.contains("carries a password") && !refused.contains("hunter2"),
        "{refused}"
    );
    // A wrong password from a named variable (PATH's value, which is not the password):
    // refused by the server, and not shown either.
    let wrong = std::env::var("PATH").unwrap();
    let options = db.options().unwrap().password_env("PATH");
    let failed = PgStore::connect(options).await.unwrap_err().to_string();
    assert!(
        failed.contains("cannot connect") && !failed.contains(&wrong),
        "{failed}"
    );
    assert!(
        !format!("{:?}", db.options().unwrap()).contains("agent_test:"),
        "Debug shows no password"
    );
}

#[tokio::test]
async fn reindex_rewrites_rows_from_their_events() {
    let Some(db) = database("reindex").await else {
        return;
    };
    let store = store(&db).await;
    let s = store.create(new_in("ri", "/w")).await.unwrap().id;
    store.append(&s, vec![user("hello")]).await.unwrap();
    store.close(&s).await.unwrap();
    let right = store.metadata(&s).await.unwrap();
    // A row changed by hand (or by an older version) disagrees with its events.
    let admin = raw_client(&db).await;
    admin
        .execute(
            "UPDATE agent_sessions SET meta = jsonb_set(meta, '{title}', '\"wrong\"'), \
             title = 'wrong' WHERE id = 'ri'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        store.metadata(&s).await.unwrap().title.as_deref(),
        Some("wrong")
    );
    assert_eq!(store.reindex().await.unwrap(), 1);
    assert_eq!(store.metadata(&s).await.unwrap(), right);
    assert!(
        store
            .list(ListQuery {
                text: Some("wrong".into()),
                ..ListQuery::default()
            })
            .await
            .unwrap()
            .is_empty()
    );
}

async fn raw_client(db: &TestDatabase) -> tokio_postgres::Client {
    let mut config: tokio_postgres::Config = db.url().parse().unwrap();
    if let Ok(p) = std::env::var("PGPASSWORD") {
        config.password(p);
    }
    let (client, conn) = config.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

// ---- across processes: kill -9 trials and a stopped writer's lease ----

fn spawn_child(mode: &str, url: &str, seed: u64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "postgres::child_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, mode)
        .env("AGENT_STORE_PG_URL", url)
        .env("AGENT_STORE_SEED", seed.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Appends to three sessions as fast as it can, printing `ack <session> <event id>` for each
/// event once `append` returned, until killed.
async fn writer_child(url: &str, seed: u64) {
    let mut rng = Rng(seed | 1);
    let store = PgStore::connect(PgOptions::new(url).unwrap())
        .await
        .unwrap();
    let mut out = std::io::stdout().lock();
    let sessions: Vec<SessionId> = (0..3).map(|i| id(&format!("k{i}"))).collect();
    loop {
        let s = &sessions[rng.below(3) as usize];
        let batch: Vec<Event> = (0..1 + rng.below(4))
            .map(|_| {
                let big = rng.below(8) == 0;
                user(&"x".repeat(10 + rng.below(if big { 100_000 } else { 300 }) as usize))
            })
            .collect();
        let appended = match store.append(s, batch.clone()).await {
            Ok(a) => a,
            Err(StoreError::NotFound { .. }) => {
                match store.create(new_in(s.as_str(), "/crash")).await {
                    Ok(_) | Err(StoreError::AlreadyExists { .. }) => {}
                    Err(e) => panic!("{e}"),
                }
                store.append(s, batch).await.unwrap()
            }
            Err(e) => panic!("{e}"),
        };
        for e in appended {
            writeln!(out, "ack {s} {}", e.id).unwrap();
        }
        out.flush().unwrap();
    }
}

/// Holds `h0` (lease of 1 s), appending one event per stdin line and printing `ack SEQ` or
/// `err TEXT`.
async fn holder_child(url: &str) {
    let options = PgOptions::new(url)
        .unwrap()
        .lease(Duration::from_secs(1))
        .unwrap();
    let store = PgStore::connect(options).await.unwrap();
    let s = id("h0");
    store.create(new_in("h0", "/h")).await.unwrap();
    let mut out = std::io::stdout().lock();
    writeln!(out, "holding").unwrap();
    out.flush().unwrap();
    let mut lines = std::io::stdin().lines();
    while let Some(Ok(line)) = lines.next() {
        match store.append(&s, vec![user(&line)]).await {
            Ok(a) => writeln!(out, "ack {}", a[0].seq).unwrap(),
            Err(e) => writeln!(out, "err {e}").unwrap(),
        }
        out.flush().unwrap();
    }
}

#[tokio::test]
async fn child_entry() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    let url = std::env::var("AGENT_STORE_PG_URL").unwrap();
    let seed: u64 = std::env::var("AGENT_STORE_SEED").unwrap().parse().unwrap();
    match mode.as_str() {
        "writer" => writer_child(&url, seed).await,
        "holder" => holder_child(&url).await,
        other => panic!("unknown child mode {other}"),
    }
}

fn collect_lines(child: &mut Child) -> std::thread::JoinHandle<Vec<String>> {
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect()
    })
}

#[tokio::test]
async fn sigkill_at_random_moments_loses_no_acknowledged_append() {
    const TRIALS: u64 = 60;
    let Some(db) = database("sigkill").await else {
        return;
    };
    let store = store(&db).await;
    let mut acked: HashMap<String, HashSet<String>> = HashMap::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for trial in 0..TRIALS {
        let mut child = spawn_child("writer", db.url(), rng.next());
        let lines = collect_lines(&mut child);
        // From before the store connects to well into the appends.
        tokio::time::sleep(Duration::from_micros(rng.below(250_000))).await;
        child.kill().unwrap();
        child.wait().unwrap();
        for line in lines.join().unwrap() {
            if let Some(rest) = line.strip_prefix("ack ") {
                let (s, e) = rest.split_once(' ').unwrap();
                acked.entry(s.to_owned()).or_default().insert(e.to_owned());
            }
        }
        // Every acknowledged event is there, seqs are contiguous, rows match their events,
        // and the killed writer's leases are free at once (its connection is gone).
        for (s, ids) in &acked {
            let s = id(s);
            let events = check_consistent(&store, &s).await;
            let have: HashSet<&str> = events.iter().map(|e| e.id.as_str()).collect();
            let lost: Vec<_> = ids.iter().filter(|e| !have.contains(e.as_str())).collect();
            assert!(
                lost.is_empty(),
                "trial {trial}: acknowledged events lost in {s}: {lost:?}"
            );
        }
    }
    let total: usize = acked.values().map(HashSet::len).sum();
    assert!(total > 100, "the trials acknowledged only {total} events");
    // The last child's leases: taken over without waiting for them to expire.
    let started = Instant::now();
    for s in acked.keys() {
        store.append(&id(s), vec![user("after")]).await.unwrap();
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    println!("{TRIALS} kill -9 trials, {total} acknowledged events, none lost");
}

#[tokio::test]
async fn a_stopped_writers_lease_expires_and_it_is_fenced_when_it_wakes() {
    let Some(db) = database("fence").await else {
        return;
    };
    let mut child = spawn_child("holder", db.url(), 1);
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    // The test harness prints its own text first (`test ... ` on the same line).
    while !out.next().unwrap().unwrap().ends_with("holding") {}
    writeln!(stdin, "first").unwrap();
    assert_eq!(out.next().unwrap().unwrap(), "ack 2");
    let store = store(&db).await;
    let s = id("h0");
    assert!(matches!(
        store.append(&s, vec![user("early")]).await,
        Err(StoreError::Busy { .. })
    ));
    // The holder stops (a hung or cut-off host: its connection stays open, its heartbeat stops).
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let started = Instant::now();
    let taken = loop {
        match store.append(&s, vec![user("taken over")]).await {
            Ok(a) => break a,
            Err(StoreError::Busy { .. }) if started.elapsed() < Duration::from_secs(15) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(taken[0].seq, 3);
    assert!(
        Command::new("kill")
            .args(["-CONT", &pid])
            .status()
            .unwrap()
            .success()
    );
    writeln!(stdin, "late").unwrap();
    let answer = out.next().unwrap().unwrap();
    assert!(
        answer.starts_with("err ") && answer.contains("writer lease"),
        "{answer}"
    );
    drop(stdin);
    child.wait().unwrap();
    let events = check_consistent(&store, &s).await;
    assert_eq!(events.len(), 3, "the fenced writer wrote nothing");
}

// ---- TLS: sslmode and sslrootcert against the test server's certificate ----

/// The test CA (`AGENT_TEST_POSTGRES_CA`, which .ci/postgres sets), or `None` (printed) when it
/// is not set outside CI.
fn test_ca() -> Option<String> {
    match std::env::var("AGENT_TEST_POSTGRES_CA") {
        Ok(ca) if !ca.is_empty() => Some(ca),
        _ if std::env::var_os("CI").is_some() => panic!(
            "AGENT_TEST_POSTGRES_CA is not set, and CI is: .ci/postgres makes the test server's \
             CA and sets it"
        ),
        _ => {
            eprintln!("skipped: no test CA (set AGENT_TEST_POSTGRES_CA; .ci/postgres makes one)");
            None
        }
    }
}

/// The test database's user, port and name.
fn server(db: &TestDatabase) -> (String, u16, String) {
    let plain = db.url().split('?').next().unwrap();
    let config: tokio_postgres::Config = plain.parse().unwrap();
    (
        config.get_user().unwrap().to_owned(),
        config.get_ports().first().copied().unwrap_or(5432),
        config.get_dbname().unwrap().to_owned(),
    )
}

/// The test database at `host` as libpq key=value pairs (no TLS ones).
fn key_values(db: &TestDatabase, host: &str) -> String {
    let (user, port, dbname) = server(db);
    format!("host={host} port={port} user={user} dbname={dbname}")
}

/// `%`-encodes what a URL parameter value cannot hold as is.
fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn message(e: &StoreError) -> String {
    match e {
        StoreError::Postgres { message, .. } => message.clone(),
        other => panic!("expected a PostgreSQL error, got {other:?}"),
    }
}

#[tokio::test]
async fn verify_full_by_address_and_by_name_is_tls_end_to_end() {
    let Some(db) = database("tls_full").await else {
        return;
    };
    let Some(ca) = test_ca() else { return };
    // Without sslmode: plain (prefer never uses an unverified session here).
    let plain = db.options().unwrap();
    assert!(!testing::connection_uses_tls(&plain).await.unwrap());

    let (role, port, dbname) = server(&db);
    for url in [
        format!(
            "postgres://{role}@127.0.0.1:{port}/{dbname}?sslmode=verify-full&sslrootcert={}",
            url_encode(&ca)
        ),
        format!(
            "postgres://{role}@localhost:{port}/{dbname}?sslrootcert={}&sslmode=verify-full",
            url_encode(&ca)
        ),
        format!(
            "{} sslmode=require sslrootcert='{ca}'",
            key_values(&db, "localhost")
        ),
    ] {
        let options = PgOptions::new(&url).unwrap();
        assert!(
            options.redacted().ends_with("?sslmode=verify-full")
                || options.redacted().ends_with("?sslmode=require"),
            "{}",
            options.redacted()
        );
        assert!(
            testing::connection_uses_tls(&options).await.unwrap(),
            "{url} is TLS"
        );
        // The store's own connections (migration, presence, pool) work over it.
        let store = PgStore::connect(options).await.unwrap();
        let s = store.create(NewSession::default()).await.unwrap().id;
        store.append(&s, vec![user("over TLS")]).await.unwrap();
        assert_eq!(store.list(ListQuery::default()).await.unwrap().len(), 1);
        store.delete(&s).await.unwrap();
    }
}

#[tokio::test]
async fn a_certificate_the_roots_do_not_trust_is_refused_saying_so() {
    let Some(db) = database("tls_untrusted").await else {
        return;
    };
    if test_ca().is_none() {
        return;
    }
    // The test CA is not among the system's roots.
    let url = format!(
        "{} sslmode=verify-full sslrootcert=system",
        key_values(&db, "127.0.0.1")
    );
    let options = match PgOptions::new(&url) {
        Ok(o) => o,
        Err(StoreError::Config(m)) => {
            eprintln!("skipped: this machine has no system CA certificates ({m})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let e = PgStore::connect(options).await.unwrap_err();
    let m = message(&e);
    assert!(
        m.contains("is not trusted by the system's roots") && m.contains("sslrootcert=FILE"),
        "{m}"
    );
    assert!(e.to_string().contains("cannot connect"), "{e}");
}

#[tokio::test]
async fn verify_full_checks_the_host_name_and_verify_ca_does_not() {
    let Some(db) = database("tls_name").await else {
        return;
    };
    let Some(ca) = test_ca() else { return };
    // Reached at 127.0.0.1, but asked for as wrong.example, which the certificate does not name.
    let base = format!(
        "{} hostaddr=127.0.0.1 sslrootcert={ca}",
        key_values(&db, "wrong.example")
    );
    let full = PgOptions::new(&format!("{base} sslmode=verify-full")).unwrap();
    let m = message(&PgStore::connect(full).await.unwrap_err());
    assert!(
        m.contains("does not name the host `wrong.example`")
            && m.contains("localhost")
            && m.contains("verify-ca"),
        "{m}"
    );
    let require = PgOptions::new(&format!("{base} sslmode=require")).unwrap();
    let m = message(&PgStore::connect(require).await.unwrap_err());
    assert!(
        m.contains("wrong.example"),
        "require checks the name too: {m}"
    );

    let ca_only = PgOptions::new(&format!("{base} sslmode=verify-ca")).unwrap();
    assert!(testing::connection_uses_tls(&ca_only).await.unwrap());
    let store = PgStore::connect(ca_only).await.unwrap();
    store.create(NewSession::default()).await.unwrap();

    // verify-ca still verifies the chain: the system's roots do not sign the test certificate.
    if let Ok(system) = PgOptions::new(&format!(
        "{} hostaddr=127.0.0.1 sslmode=verify-ca sslrootcert=system",
        key_values(&db, "wrong.example")
    )) {
        let m = message(&PgStore::connect(system).await.unwrap_err());
        assert!(m.contains("not trusted"), "{m}");
    }
}

#[tokio::test]
async fn a_missing_root_file_is_a_configuration_error() {
    let Some(db) = database("tls_missing").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-ca.pem");
    let url = format!(
        "{} sslmode=verify-full sslrootcert={}",
        key_values(&db, "127.0.0.1"),
        missing.display()
    );
    match PgOptions::new(&url) {
        Err(StoreError::Config(m)) => assert!(
            m.contains(&missing.display().to_string()) && m.contains("cannot be read"),
            "{m}"
        ),
        other => panic!("expected a Config error, got {other:?}"),
    }
}
