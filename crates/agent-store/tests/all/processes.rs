//! The store across processes: a writer killed with SIGKILL at random moments (crash safety), and
//! two processes on one session (one writer; readers see a consistent prefix).
//!
//! The child processes are this test binary run again with `AGENT_STORE_CHILD` set; the test
//! `processes::child_entry` then plays the child and the others are filtered out.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "test code: a panic is a failure report"
)]

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_core::events::{Event, EventPayload, UserMessage};

use crate::rng::Rng;
use agent_store::{
    ListQuery, LoadRange, LocalStore, NewSession, SessionId, StoreError, StoreOptions,
};

const CHILD_ENV: &str = "AGENT_STORE_CHILD";

fn spawn_child(mode: &str, root: &Path, seed: u64) -> Child {
    spawn_child_in(mode, root, seed, 0)
}

fn spawn_child_in(mode: &str, root: &Path, seed: u64, group: u64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .env("AGENT_STORE_GROUP", group.to_string())
        .args([
            "processes::child_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, mode)
        .env("AGENT_STORE_ROOT", root)
        .env("AGENT_STORE_SEED", seed.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn user(text: String) -> Event {
    Event::new(0, None, EventPayload::UserMessage(UserMessage { text }))
}

/// The child: appends to a few sessions as fast as it can, printing `ack <session> <event id>`
/// for each event of a batch once `append` returned (durable), until killed.
fn writer_child(root: &Path, seed: u64) {
    let mut rng = Rng(seed | 1);
    let store = LocalStore::open(StoreOptions::new(root)).unwrap();
    let mut out = std::io::stdout().lock();
    writeln!(out, "open").unwrap();
    out.flush().unwrap();
    let group: u64 = std::env::var("AGENT_STORE_GROUP").map_or(0, |g| g.parse().unwrap());
    let sessions: Vec<SessionId> = (0..3)
        .map(|i| SessionId::parse(&format!("g{group}s{i}")).unwrap())
        .collect();
    loop {
        let s = &sessions[rng.below(3) as usize];
        let batch: Vec<Event> = (0..1 + rng.below(4))
            .map(|_| {
                // Mostly small events, sometimes large ones (more chances to tear a write).
                let len = if rng.below(8) == 0 {
                    20_000 + rng.below(200_000)
                } else {
                    10 + rng.below(300)
                };
                user("x".repeat(len as usize))
            })
            .collect();
        let appended = match store.append(s, batch.clone()) {
            Ok(a) => a,
            Err(StoreError::NotFound { .. }) => {
                store
                    .create(NewSession {
                        id: Some(s.clone()),
                        cwd: Some("/crash".into()),
                        ..NewSession::default()
                    })
                    .unwrap();
                store.append(s, batch).unwrap()
            }
            Err(e) => panic!("{e}"),
        };
        for e in appended {
            writeln!(out, "ack {s} {}", e.id).unwrap();
        }
        out.flush().unwrap();
    }
}

/// The child: holds the writer of `s0`, appending one event per line read from stdin and
/// acknowledging it, until stdin closes.
fn holder_child(root: &Path) {
    let store = LocalStore::open(StoreOptions::new(root)).unwrap();
    let s = SessionId::parse("s0").unwrap();
    if store.metadata(&s).is_err() {
        store
            .create(NewSession {
                id: Some(s.clone()),
                ..NewSession::default()
            })
            .unwrap();
    }
    store.append(&s, vec![user("held".into())]).unwrap();
    let mut out = std::io::stdout().lock();
    writeln!(out, "holding").unwrap();
    out.flush().unwrap();
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { break };
        let appended = store.append(&s, vec![user(line)]).unwrap();
        writeln!(out, "ack {}", appended[0].seq).unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn child_entry() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    let root = std::path::PathBuf::from(std::env::var("AGENT_STORE_ROOT").unwrap());
    let seed: u64 = std::env::var("AGENT_STORE_SEED").unwrap().parse().unwrap();
    match mode.as_str() {
        "writer" => writer_child(&root, seed),
        "holder" => holder_child(&root),
        other => panic!("unknown child mode {other}"),
    }
}

/// Reads the child's stdout lines until it dies.
fn collect_lines(child: &mut Child) -> std::thread::JoinHandle<Vec<String>> {
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect()
    })
}

#[test]
fn sigkill_at_random_moments_loses_no_acknowledged_append() {
    const TRIALS: u64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let mut acked: HashMap<String, HashSet<String>> = HashMap::new();
    let mut torn_seen = 0;
    let mut rng = Rng(0x5eed_1234_abcd);
    let started = Instant::now();
    for trial in 0..TRIALS {
        let seed = rng.next();
        // Sessions rotate every 20 trials so logs stay small enough to check after each kill.
        let group = trial / 20;
        let mut child = spawn_child_in("writer", &root, seed, group);
        let lines = collect_lines(&mut child);
        // Kill anywhere from before the store is open to well into the appends.
        std::thread::sleep(Duration::from_micros(rng.below(80_000)));
        child.kill().unwrap();
        child.wait().unwrap();
        for line in lines.join().unwrap() {
            if let Some(rest) = line.strip_prefix("ack ") {
                let (s, id) = rest.split_once(' ').unwrap();
                acked.entry(s.to_owned()).or_default().insert(id.to_owned());
            }
        }
        // Before reopening: a torn tail, if any, is seen by readers and left alone.
        for s in acked
            .keys()
            .filter(|s| s.starts_with(&format!("g{group}s")))
        {
            let log = root.join(s).join("events.jsonl");
            if let Ok(bytes) = std::fs::read(&log)
                && bytes.last().is_some_and(|&b| b != b'\n')
            {
                torn_seen += 1;
            }
        }
        // Reopen: every session of this trial's group readable, every acknowledged event
        // present, its index row equal to a fold of its log (sessions of earlier groups no longer
        // change; they are checked again at the end).
        let store = LocalStore::open(StoreOptions::new(&root)).unwrap();
        let prefix = format!("g{group}s");
        check_sessions(
            &store,
            &root,
            &acked,
            |s| s.starts_with(&prefix),
            trial,
            seed,
        );
        let listed = store.list(&ListQuery::default()).unwrap();
        let on_disk = std::fs::read_dir(&root)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.path().join("events.jsonl").is_file())
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(
            listed.len(),
            on_disk,
            "trial {trial}: index and directories disagree"
        );
    }
    let store = LocalStore::open(StoreOptions::new(&root)).unwrap();
    check_sessions(&store, &root, &acked, |_| true, TRIALS, 0);
    let total: usize = acked.values().map(HashSet::len).sum();
    println!(
        "{TRIALS} SIGKILL trials in {:.1} s: {total} acknowledged events all present; {torn_seen} torn tails seen",
        started.elapsed().as_secs_f64()
    );
    assert!(total > 0, "the children never got to append");
}

/// Checks the sessions picked by `which`: readable, holding every acknowledged event with
/// contiguous `seq`s, and indexed exactly as their logs say.
fn check_sessions(
    store: &LocalStore,
    root: &Path,
    acked: &HashMap<String, HashSet<String>>,
    which: impl Fn(&str) -> bool,
    trial: u64,
    seed: u64,
) {
    // Every session on disk, acknowledged appends or not (a child may die right after creating).
    let mut on_disk: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("events.jsonl").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|s| which(s))
        .collect();
    on_disk.sort();
    for s in acked.keys().filter(|s| which(s)) {
        assert!(
            on_disk.contains(s),
            "trial {trial}: {s} has acknowledged events but no log"
        );
    }
    let none = HashSet::new();
    for s in &on_disk {
        let ids = acked.get(s).unwrap_or(&none);
        let sid = SessionId::parse(s).unwrap();
        let loaded = store
            .load(&sid, LoadRange::default())
            .unwrap_or_else(|e| panic!("trial {trial} (seed {seed}): {s} unreadable: {e}"));
        let events = &loaded.events;
        let present: HashSet<&str> = events.iter().map(|e| e.id.as_str()).collect();
        let missing = ids
            .iter()
            .filter(|id| !present.contains(id.as_str()))
            .count();
        assert_eq!(
            missing, 0,
            "trial {trial} (seed {seed}): {s} lost {missing} acknowledged events"
        );
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        assert!(
            seqs.windows(2).all(|w| w[1] == w[0] + 1),
            "trial {trial}: {s} seqs not contiguous"
        );
        let row = store.metadata(&sid).unwrap();
        let size = std::fs::metadata(root.join(s).join("events.jsonl"))
            .unwrap()
            .len();
        let torn = loaded.torn.as_ref().map_or(0, |t| t.len);
        assert_eq!(
            (row.event_count, row.size_bytes, row.last_seq),
            (
                events.len() as u64,
                size - torn,
                events.last().map_or(0, |e| e.seq)
            ),
            "trial {trial} (seed {seed}): index row of {s} disagrees with its log"
        );
    }
}

#[test]
fn a_second_process_cannot_write_and_readers_see_a_consistent_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let mut child = spawn_child("holder", &root, 1);
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the child ended early"
        );
        // The test harness prints `test processes::child_entry ... ` before the child's first line.
        if line.trim_end().ends_with("holding") {
            break;
        }
    }
    let store = LocalStore::open(StoreOptions::new(&root)).unwrap();
    let s = SessionId::parse("s0").unwrap();
    let err = store.append(&s, vec![user("mine".into())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "session `s0` is open in another process (pid {pid}); close it there, or read it (reads never wait)"
        )
    );
    assert!(matches!(store.delete(&s), Err(StoreError::Busy { .. })));
    assert!(matches!(
        store.rename(&s, "t"),
        Err(StoreError::Busy { .. })
    ));
    // While the child appends, every read is a prefix of the final log, and holds every event
    // the child acknowledged.
    let mut snapshots = Vec::new();
    for i in 0..200 {
        writeln!(stdin, "event {i} {}", "y".repeat(i * 50)).unwrap();
        stdin.flush().unwrap();
        // Read while the child may be writing, then again after its acknowledgement.
        let during = store.load(&s, LoadRange::default()).unwrap().events;
        line.clear();
        out.read_line(&mut line).unwrap();
        let acked: u64 = line.trim().strip_prefix("ack ").unwrap().parse().unwrap();
        let events = store.load(&s, LoadRange::default()).unwrap().events;
        assert_eq!(events.last().unwrap().seq, acked);
        assert_eq!(during[..], events[..during.len()]);
        let tail = store
            .load(
                &s,
                LoadRange {
                    offset: 0,
                    limit: Some(5),
                },
            )
            .unwrap()
            .events;
        assert_eq!(tail[..], events[events.len().saturating_sub(5)..]);
        snapshots.push(events);
    }
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    let last = store.load(&s, LoadRange::default()).unwrap().events;
    assert_eq!(last.len(), 2 + 200);
    for snap in &snapshots {
        assert_eq!(snap[..], last[..snap.len()]);
    }
    // The child closed: this process may write now, and the index has the child's appends.
    assert_eq!(store.metadata(&s).unwrap().event_count, 202);
    store.append(&s, vec![user("mine".into())]).unwrap();
}
