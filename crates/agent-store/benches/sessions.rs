//! Session store figures (issue 6), each next to a baseline measured in the same run. The
//! baseline does what seed 000's `SessionStore` does: one `transcript.json` per session,
//! `{"metadata": {...}, "messages": [...]}`, rewritten whole on every save and parsed whole on
//! every load; `list` reads every session's file.
//!
//! - append one event to a session of 10,000 events (`Durability::Os`; the same with `fsync`)
//!   vs. rewriting the 10,000-message transcript;
//! - open a 100,000-event session and build its last 50 messages vs. parsing the transcript and
//!   taking its last 50;
//! - `list` of 10,000 sessions, first 20 (and open + list) vs. reading 10,000 transcripts;
//! - load all 100,000 events vs. parsing the 100,000-message transcript.
//!
//! The appended-to log grows while it is measured (by one event per iteration); an append does
//! not read the log, so its cost does not depend on the log's length.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};

use agent_store::{Durability, ListQuery, LoadRange, LocalStore, SessionId, StoreOptions};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

#[path = "support/conversation.rs"]
mod conversation;
use agent_core::events::encode_line;
use conversation::{log_text, text, user};

/// Writes sessions straight into a store root (the logs are the truth; opening the store then
/// builds the index from them).
fn write_sessions(root: &Path, sessions: &[(String, usize)]) {
    std::fs::create_dir_all(root).unwrap();
    for (id, n) in sessions {
        let dir = root.join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("events.jsonl"), log_text(id, *n)).unwrap();
    }
}

/// Seed 000's file: metadata and every message, as one JSON document.
fn transcript(id: &str, n: usize) -> Value {
    let messages: Vec<Value> = log_text(id, n)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    json!({
        "metadata": {
            "id": id, "cwd": "/work/project", "model": "claude-sonnet-4-6",
            "createdAt": "2026-11-22T10:00:00Z", "updatedAt": "2026-11-22T10:00:00Z",
            "messageCount": n, "summary": "a session", "firstPrompt": text(1),
        },
        "messages": messages,
    })
}

/// Seed 000's save: serialise the whole transcript and write it over the old file.
fn save_transcript(path: &Path, t: &Value) {
    let bytes = serde_json::to_vec(t).unwrap();
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&bytes).unwrap();
}

/// Seed 000's load: read and parse the whole file.
fn load_transcript(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("sessions");

    // Append to a 10,000-event session.
    let append_root = tmp.path().join("append");
    write_sessions(&append_root, &[("s10k".into(), 10_000)]);
    let id = SessionId::parse("s10k").unwrap();
    for (name, durability) in [
        ("append_one_event_10k", Durability::Os),
        ("append_one_event_10k_fsync", Durability::Fsync),
    ] {
        let store =
            LocalStore::open(StoreOptions::new(&append_root).durability(durability)).unwrap();
        store.append(&id, vec![user(0)]).unwrap();
        g.sample_size(if durability == Durability::Os {
            100
        } else {
            20
        });
        let mut i = 0;
        g.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                store.append(&id, vec![black_box(user(i))]).unwrap()
            })
        });
        store.close(&id).unwrap();
    }
    let t_path = tmp.path().join("transcript-10k.json");
    let mut t = transcript("t10k", 10_000);
    save_transcript(&t_path, &t);
    g.sample_size(20);
    let mut i = 0;
    g.bench_function("append_baseline_rewrite_transcript_10k", |b| {
        b.iter(|| {
            i += 1;
            let messages = t["messages"].as_array_mut().unwrap();
            messages.push(serde_json::from_str(&encode_line(&user(i)).unwrap()).unwrap());
            save_transcript(&t_path, black_box(&t));
            // Stay at 10,000 messages, as the figure's log (almost) does.
            t["messages"].as_array_mut().unwrap().pop();
        })
    });
    drop(t);

    // A 100,000-event session: open and read its tail; load it whole.
    let big_root = tmp.path().join("big");
    write_sessions(&big_root, &[("s100k".into(), 100_000)]);
    let big = SessionId::parse("s100k").unwrap();
    drop(LocalStore::open(StoreOptions::new(&big_root)).unwrap());
    let big_t = tmp.path().join("transcript-100k.json");
    save_transcript(&big_t, &transcript("t100k", 100_000));
    g.sample_size(50);
    g.bench_function("open_100k_last_50_messages", |b| {
        b.iter(|| {
            let store = LocalStore::open(StoreOptions::new(&big_root)).unwrap();
            let m = store.messages(&big, Some(50)).unwrap();
            assert_eq!(m.len(), 50);
            m
        })
    });
    g.sample_size(10);
    g.bench_function("open_baseline_parse_transcript_100k_last_50", |b| {
        b.iter(|| {
            let t = load_transcript(&big_t);
            let messages = t["messages"].as_array().unwrap();
            messages[messages.len() - 50..].to_vec()
        })
    });
    let store = LocalStore::open(StoreOptions::new(&big_root)).unwrap();
    g.bench_function("load_whole_100k", |b| {
        b.iter(|| {
            let loaded = store.load(&big, LoadRange::default()).unwrap();
            assert_eq!(loaded.events.len(), 100_000);
            loaded
        })
    });
    g.bench_function("load_baseline_parse_transcript_100k", |b| {
        b.iter(|| load_transcript(&big_t))
    });
    drop(store);

    // 10,000 sessions: list the 20 most recent.
    let many_root = tmp.path().join("many");
    let many: Vec<(String, usize)> = (0..10_000).map(|i| (format!("s{i:05}"), 6)).collect();
    write_sessions(&many_root, &many);
    let transcripts_root = tmp.path().join("transcripts");
    for (id, n) in &many {
        let dir = transcripts_root.join(id);
        std::fs::create_dir_all(&dir).unwrap();
        save_transcript(&dir.join("transcript.json"), &transcript(id, *n));
    }
    let store = LocalStore::open(StoreOptions::new(&many_root)).unwrap();
    let first20 = ListQuery {
        limit: Some(20),
        ..ListQuery::default()
    };
    g.sample_size(50);
    g.bench_function("list_10k_first_20", |b| {
        b.iter(|| {
            let l = store.list(black_box(&first20)).unwrap();
            assert_eq!(l.len(), 20);
            l
        })
    });
    drop(store);
    g.bench_function("open_and_list_10k_first_20", |b| {
        b.iter(|| {
            let store = LocalStore::open(StoreOptions::new(&many_root)).unwrap();
            store.list(black_box(&first20)).unwrap()
        })
    });
    g.sample_size(10);
    g.bench_function("list_baseline_read_10k_transcripts", |b| {
        b.iter(|| list_transcripts(&transcripts_root, 20))
    });
    g.finish();
}

/// Seed 000's list: read every session's transcript, sort by `updatedAt`, take the first `n`.
fn list_transcripts(root: &Path, n: usize) -> Vec<Value> {
    let mut all: Vec<Value> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path().join("transcript.json"))
        .map(|p: PathBuf| load_transcript(&p)["metadata"].take())
        .collect();
    all.sort_by(|a, b| {
        b["updatedAt"]
            .as_str()
            .unwrap_or("")
            .cmp(a["updatedAt"].as_str().unwrap_or(""))
    });
    all.truncate(n);
    all
}

criterion_group!(benches, bench);
criterion_main!(benches);
