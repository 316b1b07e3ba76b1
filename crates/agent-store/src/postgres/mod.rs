//! The PostgreSQL session backend (cargo feature `postgres`): the same sessions, guarantees and
//! formats as the local store, kept in a PostgreSQL database that many hosts share.
//!
//! # Model
//! - `agent_sessions` holds one row per session: its metadata (the same fold of its log the
//!   local index keeps, as `jsonb`), the columns `list` filters and sorts on, and the writer
//!   lease. `agent_events` holds the log: one row per event, `(session_id, seq)` its primary
//!   key, the event's JSON line kept as text (so unknown fields survive and `export` gives back
//!   the very bytes that were written).
//! - An append is **one statement**: it advances the session row (guarded by the writer's lease
//!   token and the last `seq` it knows) and inserts the events; either both happen or neither.
//!   The row and the log never disagree, so there is nothing to reconcile after a crash. When
//!   `append` returns, the commit is durable (the store turns `synchronous_commit` on for its
//!   connections if the server has it off).
//! - **One writer per session** is a fenced lease on the session row: the holder, a token that
//!   grows on every takeover, and an expiry on the server's clock (no clock agreement between
//!   hosts is needed). A writer renews it on every append and every third of the lease while
//!   idle. Another writer may take it over when it is free, expired (a crashed or cut-off host
//!   keeps it at most one lease), or held by a store whose presence connection is gone (a
//!   killed process: at once). A writer whose lease was taken over is fenced: its next append
//!   fails with [`StoreError::LeaseLost`](crate::StoreError::LeaseLost) and writes nothing.
//! - Reads take no lock: the tail of a session is read by `seq` from the end of the primary key,
//!   bounded by the `last_seq` of the row it read first, so it is consistent without a
//!   transaction.
//!
//! docs/sessions.md ("PostgreSQL") describes the schema, the locking, running it replicated,
//! and the figures.

mod lease;
mod options;
mod pool;
mod read;
mod schema;
pub mod testing;
mod tls;
mod write;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use agent_core::events::Event;
use async_trait::async_trait;
use tokio::sync::Mutex as AsyncMutex;
use tracing::Instrument;

pub use options::{DEFAULT_LEASE, DEFAULT_PASSWORD_ENV, LEASE_RANGE, PgOptions};
pub use schema::SCHEMA_VERSION;

use crate::backend::SessionBackend;
use crate::create::NewSession;
use crate::error::{Result, StoreError};
use crate::export::ExportFormat;
use crate::fork::ForkOptions;
use crate::id::SessionId;
use crate::index::ListQuery;
use crate::messages::TranscriptMessage;
use crate::metadata::SessionMetadata;
use crate::read::{LoadRange, Loaded};
use pool::Pool;

/// A session store in a PostgreSQL database. Cheap to clone (clones share connections and
/// leases).
///
/// ```no_run
/// use agent_store::postgres::{PgOptions, PgStore};
/// use agent_store::{NewSession, SessionBackend};
///
/// # async fn demo() -> Result<(), agent_store::StoreError> {
/// // The password comes from $PGPASSWORD, never from the URL.
/// let store = PgStore::connect(PgOptions::new("postgres://agent@db.internal/agent")?).await?;
/// let session = store.create(NewSession::default()).await?;
/// let recent = store.messages(&session.id, Some(50)).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.inner.options.redacted)
            .field("holder", &self.inner.me)
            .finish_non_exhaustive()
    }
}

/// What the clones of one store share.
struct Inner {
    options: PgOptions,
    pool: Pool,
    /// This store's identity as a lease holder (a UUID v7).
    me: String,
    /// This host's name and this process's pid, recorded with a lease for the busy message.
    host: String,
    pid: i64,
    /// The server pid of the presence connection (the heartbeat's), which other stores check to
    /// see whether this store is still alive.
    presence: Arc<AtomicI32>,
    /// The sessions this store holds the lease of.
    writers: AsyncMutex<HashMap<SessionId, Arc<AsyncMutex<lease::Writer>>>>,
    heartbeat: tokio::task::JoinHandle<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The presence connection closes with the task: other stores may take the leases over
        // at once.
        self.heartbeat.abort();
    }
}

/// Maps a driver error to [`StoreError::Postgres`], keeping the server's message, detail and
/// hint (the driver's own `Display` says only "db error").
pub(crate) fn pg_error(
    url: &str,
    action: &'static str,
) -> impl FnOnce(tokio_postgres::Error) -> StoreError {
    let url = url.to_owned();
    move |e| {
        let message = match e.as_db_error() {
            Some(db) => {
                let mut m = format!("{} ({})", db.message(), db.code().code());
                if let Some(d) = db.detail() {
                    m += &format!("; {d}");
                }
                if let Some(h) = db.hint() {
                    m += &format!("; hint: {h}");
                }
                m
            }
            None => {
                let mut m = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    m += &format!(": {s}");
                    source = s.source();
                }
                m
            }
        };
        StoreError::Postgres {
            url,
            action,
            message,
        }
    }
}

impl PgStore {
    /// Connects, applies the schema migrations the database lacks, and opens the presence
    /// connection that keeps this store's leases alive.
    ///
    /// # Errors
    /// [`StoreError::Postgres`] when the server cannot be reached or refuses;
    /// [`StoreError::Config`] when the database's schema is newer than this build.
    pub async fn connect(options: PgOptions) -> Result<Self> {
        let url = options.redacted.clone();
        let span = tracing::debug_span!("session_store.connect", url = %url);
        Self::open(options, url).instrument(span).await
    }

    async fn open(options: PgOptions, url: String) -> Result<Self> {
        let mut first = pool::connect(&options)
            .await
            .map_err(|e| password_hint(e, &options.password_env))?;
        schema::migrate(&mut first, &url).await?;
        let presence_client = pool::connect(&options).await?;
        let presence = Arc::new(AtomicI32::new(
            lease::backend_pid(&presence_client, &url).await?,
        ));
        let me = uuid::Uuid::now_v7().to_string();
        let heartbeat = tokio::spawn(lease::heartbeat(
            presence_client,
            options.clone(),
            me.clone(),
            options.lease,
            presence.clone(),
        ));
        let pool = Pool::new(options.clone());
        // The migration's connection is the pool's first (each new one costs an authentication).
        pool.put(first);
        Ok(Self {
            inner: Arc::new(Inner {
                options,
                pool,
                me,
                host: hostname(),
                pid: i64::from(std::process::id()),
                presence,
                writers: AsyncMutex::new(HashMap::new()),
                heartbeat,
            }),
        })
    }

    /// The server, as a URL without any password.
    pub fn url(&self) -> &str {
        &self.inner.options.redacted
    }

    fn presence_pid(&self) -> i32 {
        self.inner.presence.load(Ordering::Relaxed)
    }
}

/// Adds what to do to a refused login: the password is only ever read from `var`.
fn password_hint(e: StoreError, var: &str) -> StoreError {
    match e {
        StoreError::Postgres {
            url,
            action,
            message,
        } => {
            let hint = if message.contains("password missing") {
                if std::env::var_os(var).is_some() {
                    format!("; the server asks for a password and ${var} is empty")
                } else {
                    format!(
                        "; the server asks for a password: set ${var} (the variable \
                         `sessions.passwordEnv` names; default PGPASSWORD)"
                    )
                }
            } else if message.contains("password authentication failed") {
                format!("; the password comes from ${var}: check it")
            } else {
                String::new()
            };
            StoreError::Postgres {
                url,
                action,
                message: message + &hint,
            }
        }
        other => other,
    }
}

/// This host's name, for the busy message (`unknown` when it cannot be read).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

#[async_trait]
impl SessionBackend for PgStore {
    async fn create(&self, new: NewSession) -> Result<SessionMetadata> {
        let span = tracing::debug_span!("session.create", session = ?new.id);
        self.create_session(new).instrument(span).await
    }
    async fn append(&self, id: &SessionId, events: Vec<Event>) -> Result<Vec<Event>> {
        let span = tracing::debug_span!("session.append", session = %id, events = events.len());
        self.append_events(id, events).instrument(span).await
    }
    async fn load(&self, id: &SessionId, range: LoadRange) -> Result<Loaded> {
        self.load_events(id, range).await
    }
    async fn messages(
        &self,
        id: &SessionId,
        limit: Option<usize>,
    ) -> Result<Vec<TranscriptMessage>> {
        self.read_messages(id, limit).await
    }
    async fn metadata(&self, id: &SessionId) -> Result<SessionMetadata> {
        self.read_metadata(id).await
    }
    async fn list(&self, query: ListQuery) -> Result<Vec<SessionMetadata>> {
        self.list_sessions(&query).await
    }
    async fn fork(&self, source: &SessionId, options: ForkOptions) -> Result<SessionMetadata> {
        let span = tracing::debug_span!("session.fork", session = %source, at = ?options.at);
        self.fork_session(source, options).instrument(span).await
    }
    async fn delete(&self, id: &SessionId) -> Result<()> {
        self.delete_session(id).await
    }
    async fn rename(&self, id: &SessionId, title: &str) -> Result<SessionMetadata> {
        self.rename_session(id, title).await
    }
    async fn tag(&self, id: &SessionId, tag: &str, removed: bool) -> Result<SessionMetadata> {
        self.tag_session(id, tag, removed).await
    }
    async fn export(&self, id: &SessionId, format: ExportFormat) -> Result<String> {
        self.export_session(id, format).await
    }
    async fn import(&self, jsonl: String, id: Option<SessionId>) -> Result<SessionMetadata> {
        self.import_session(&jsonl, id).await
    }
    async fn close(&self, id: &SessionId) -> Result<()> {
        self.release(id).await
    }
}
