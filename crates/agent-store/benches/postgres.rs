//! The session store on PostgreSQL against the local store (issue 29), both measured in the
//! same run through the same async API (`SessionBackend`): the baseline of each figure is the
//! local `SessionStore` doing the same thing.
//!
//! - append one event: `PgStore` (one statement, a durable commit: `synchronous_commit = on`)
//!   vs. the local store with its default durability (`Durability::Fsync`: `fdatasync` per
//!   append), so both return only once the event is on disk;
//! - the last 50 messages of a 100,000-event session, the store already open (and the same with
//!   the store connected / opened first, what `agent sessions show` pays);
//! - `list` of 10,000 sessions, the 20 most recently updated.
//!
//! The server is the one `AGENT_TEST_POSTGRES_URL` names (password from `PGPASSWORD`; `.ci/run`
//! starts one on loopback), in a throwaway database of the bench's own (`TestDatabase`). Without
//! it (and without `CI`) the bench says that it skipped the PostgreSQL figures and measures the
//! local ones alone. The server's version and durability settings are written to
//! `target/criterion/postgres/server.json` for `cargo xtask bench`.
//!
//! The sessions are made by `import` of generated logs (a 100,000-event log, 10,000 logs of 6
//! events), the local side under `Durability::Os` (the figures then reopen it with the default).
//! `cargo test --benches` (CI: each figure once, in the test profile) uses 1,000 and 100
//! sessions' worth instead, so it stays quick; the assertions are the same.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test and bench code: a panic is a failure report, and the skip is said on stderr"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

use agent_store::postgres::testing::TestDatabase;
use agent_store::postgres::{DEFAULT_PASSWORD_ENV, PgStore};
use agent_store::{Durability, ListQuery, SessionBackend, SessionId, SessionStore, StoreOptions};
use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use serde_json::json;
use tokio::runtime::Runtime;

#[path = "support/conversation.rs"]
mod conversation;
use conversation::{log_text, user};

/// Sizes: the under `cargo bench`, smaller under `cargo test --benches`.
struct Sizes {
    /// Events of the session whose tail is read.
    big: usize,
    /// Sessions listed.
    many: usize,
}

impl Sizes {
    fn new() -> Self {
        // `cargo bench` passes `--bench`; `cargo test --benches` does not (criterion's test
        // mode: each figure run once).
        if std::env::args().any(|a| a == "--bench") {
            Self {
                big: 100_000,
                many: 10_000,
            }
        } else {
            Self {
                big: 1_000,
                many: 100,
            }
        }
    }
}

/// Events of each listed session.
const SMALL: usize = 6;
/// Events of the appended-to session before the figure.
const APPEND_BASE: usize = 10_000;
/// Sessions imported at once (PostgreSQL connections used for the setup).
const PARALLEL: usize = 8;

fn sid(s: &str) -> SessionId {
    SessionId::parse(s).unwrap()
}

/// Imports `sessions` (id, events) into `store`, [`PARALLEL`] at a time.
async fn import_all<S: SessionBackend + Clone + 'static>(store: &S, sessions: &[(String, usize)]) {
    for chunk in sessions.chunks(PARALLEL) {
        let mut set = tokio::task::JoinSet::new();
        for (id, n) in chunk {
            let (store, id, n) = (store.clone(), id.clone(), *n);
            set.spawn(async move {
                let jsonl = log_text(&id, n);
                store.import(jsonl, Some(sid(&id))).await.unwrap();
            });
        }
        while let Some(done) = set.join_next().await {
            done.unwrap();
        }
    }
}

/// The sessions of a store: the appended-to one, the big one (first store), or the many
/// (second store).
fn first_sessions(sizes: &Sizes) -> Vec<(String, usize)> {
    vec![("append".into(), APPEND_BASE), ("big".into(), sizes.big)]
}

fn many_sessions(sizes: &Sizes) -> Vec<(String, usize)> {
    (0..sizes.many)
        .map(|i| (format!("s{i:05}"), SMALL))
        .collect()
}

/// Where criterion writes this group's results.
fn criterion_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    target.join("criterion/postgres")
}

/// The server's version and the settings that decide what a commit costs, written beside the
/// figures (pgbench-style: the comparison is fair only when both sides sync).
async fn server_settings(
    db: &TestDatabase,
    local: Durability,
    local_root: &Path,
) -> serde_json::Value {
    let mut config = tokio_postgres::Config::from_str(db.url()).unwrap();
    if let Ok(password) = std::env::var(DEFAULT_PASSWORD_ENV) {
        config.password(password);
    }
    let (client, connection) = config.connect(tokio_postgres::NoTls).await.unwrap();
    let driver = tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT current_setting('server_version'), current_setting('synchronous_commit'),
                    current_setting('fsync'), current_setting('wal_sync_method'),
                    coalesce(host(inet_server_addr()), 'unix socket'),
                    coalesce(inet_server_port(), 0)",
            &[],
        )
        .await
        .unwrap();
    drop(client);
    let _ = driver.await;
    json!({
        "serverVersion": row.get::<_, String>(0),
        "synchronousCommit": row.get::<_, String>(1),
        "fsync": row.get::<_, String>(2),
        "walSyncMethod": row.get::<_, String>(3),
        "address": format!("{}:{}", row.get::<_, String>(4), row.get::<_, i32>(5)),
        "localDurability": format!("{local:?}"),
        "localFilesystem": filesystem(local_root),
    })
}

/// The file system type `path` is on (the longest mount point of `/proc/self/mounts` above
/// it), or `unknown`.
fn filesystem(path: &Path) -> String {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, point, kind) = (f.next()?, f.next()?, f.next()?);
            path.starts_with(point)
                .then(|| (point.len(), kind.to_owned()))
        })
        .max()
        .map_or_else(|| "unknown".to_owned(), |(_, kind)| kind)
}

/// The figures of one side, named `{prefix}_...`.
fn figures<S: SessionBackend + Clone + 'static>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    rt: &Runtime,
    prefix: &str,
    first: &S,
    many: &S,
    reopen: &dyn Fn() -> S,
) {
    let append = sid("append");
    let big = sid("big");
    rt.block_on(first.append(&append, vec![user(0)])).unwrap();
    g.sample_size(50);
    let mut i = 0;
    g.bench_function(format!("{prefix}_append_one_event"), |b| {
        b.iter(|| {
            i += 1;
            rt.block_on(first.append(&append, vec![black_box(user(i))]))
                .unwrap()
        })
    });
    rt.block_on(first.close(&append)).unwrap();

    g.sample_size(50);
    g.bench_function(format!("{prefix}_last_50_messages_100k"), |b| {
        b.iter(|| {
            let m = rt.block_on(first.messages(&big, Some(50))).unwrap();
            assert_eq!(m.len(), 50);
            m
        })
    });
    g.sample_size(20);
    g.bench_function(format!("{prefix}_open_and_last_50_messages_100k"), |b| {
        b.iter(|| {
            let store = reopen();
            let m = rt.block_on(store.messages(&big, Some(50))).unwrap();
            assert_eq!(m.len(), 50);
            m
        })
    });

    let first20 = ListQuery {
        limit: Some(20),
        ..ListQuery::default()
    };
    g.sample_size(50);
    g.bench_function(format!("{prefix}_list_10k_first_20"), |b| {
        b.iter(|| {
            let l = rt.block_on(many.list(black_box(first20.clone()))).unwrap();
            assert_eq!(l.len(), 20);
            l
        })
    });
}

fn bench(c: &mut Criterion) {
    let sizes = Sizes::new();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let out = criterion_dir();
    let _ = std::fs::remove_file(out.join("server.json"));
    let tmp = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("postgres");

    // The local store: the sessions imported without fsync, the figures with the default.
    let local_first = tmp.path().join("first");
    let local_many = tmp.path().join("many");
    let started = Instant::now();
    for (root, sessions) in [
        (&local_first, first_sessions(&sizes)),
        (&local_many, many_sessions(&sizes)),
    ] {
        let store = rt
            .block_on(SessionStore::open(
                StoreOptions::new(root).durability(Durability::Os),
            ))
            .unwrap();
        rt.block_on(import_all(&store, &sessions));
    }
    eprintln!(
        "postgres bench: local sessions imported in {:.1?}",
        started.elapsed()
    );
    let open_local = |root: &Path| {
        rt.block_on(SessionStore::open(StoreOptions::new(root)))
            .unwrap()
    };
    let (first, many) = (open_local(&local_first), open_local(&local_many));
    figures(&mut g, &rt, "local", &first, &many, &|| {
        open_local(&local_first)
    });
    drop((first, many));

    // The same on PostgreSQL.
    let dbs = rt.block_on(async {
        let first = TestDatabase::create("bench_first").await.unwrap();
        let many = TestDatabase::create("bench_many").await.unwrap();
        first.zip(many)
    });
    let Some((db_first, db_many)) = dbs else {
        eprintln!(
            "postgres bench: skipped the PostgreSQL figures: AGENT_TEST_POSTGRES_URL is not set \
             (`eval \"$(.ci/postgres)\"` starts a server on loopback and sets it)"
        );
        g.finish();
        return;
    };
    let connect = |db: &TestDatabase| {
        rt.block_on(PgStore::connect(
            db.options().unwrap().max_connections(PARALLEL),
        ))
        .unwrap()
    };
    let (first, many) = (connect(&db_first), connect(&db_many));
    let started = Instant::now();
    rt.block_on(import_all(&first, &first_sessions(&sizes)));
    rt.block_on(import_all(&many, &many_sessions(&sizes)));
    eprintln!(
        "postgres bench: PostgreSQL sessions imported in {:.1?}",
        started.elapsed()
    );
    let settings = rt.block_on(server_settings(&db_first, Durability::Fsync, tmp.path()));
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("server.json"), settings.to_string()).unwrap();
    figures(&mut g, &rt, "pg", &first, &many, &|| connect(&db_first));
    g.finish();
    drop((first, many));
    drop((db_first, db_many));
}

criterion_group!(benches, bench);
criterion_main!(benches);
