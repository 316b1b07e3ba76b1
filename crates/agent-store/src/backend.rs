//! The trait boundary between the agent loop and where sessions live.
//!
//! The loop and the recovery functions talk to a `dyn SessionBackend`; [`SessionStore`] (local
//! files plus SQLite) is the implementation shipped here. A server deployment can put sessions in
//! another database by implementing this trait; docs/sessions.md shows how a PostgreSQL backend
//! would map each call.

use std::sync::Arc;

use agent_core::events::Event;
use async_trait::async_trait;

use super::create::NewSession;
use super::error::{Result, StoreError};
use super::export::ExportFormat;
use super::fork::ForkOptions;
use super::id::SessionId;
use super::index::ListQuery;
use super::local::{LocalStore, StoreOptions};
use super::messages::TranscriptMessage;
use super::metadata::SessionMetadata;
use super::read::{LoadRange, Loaded};

/// Where sessions are kept. Every method has the semantics of the [`LocalStore`] method of the
/// same name.
#[async_trait]
pub trait SessionBackend: Send + Sync {
    /// Creates a session.
    async fn create(&self, new: NewSession) -> Result<SessionMetadata>;
    /// Appends events (the backend assigns `seq`); returns once durable.
    async fn append(&self, id: &SessionId, events: Vec<Event>) -> Result<Vec<Event>>;
    /// Events: all, or a window from the tail.
    async fn load(&self, id: &SessionId, range: LoadRange) -> Result<Loaded>;
    /// The provider-facing conversation, or its last `limit` messages.
    async fn messages(
        &self,
        id: &SessionId,
        limit: Option<usize>,
    ) -> Result<Vec<TranscriptMessage>>;
    /// One session's metadata.
    async fn metadata(&self, id: &SessionId) -> Result<SessionMetadata>;
    /// Sessions, most recently updated first.
    async fn list(&self, query: ListQuery) -> Result<Vec<SessionMetadata>>;
    /// Forks a session.
    async fn fork(&self, source: &SessionId, options: ForkOptions) -> Result<SessionMetadata>;
    /// Deletes a session.
    async fn delete(&self, id: &SessionId) -> Result<()>;
    /// Sets the title.
    async fn rename(&self, id: &SessionId, title: &str) -> Result<SessionMetadata>;
    /// Adds (or removes) a tag.
    async fn tag(&self, id: &SessionId, tag: &str, removed: bool) -> Result<SessionMetadata>;
    /// Exports a session as text.
    async fn export(&self, id: &SessionId, format: ExportFormat) -> Result<String>;
    /// Imports an events JSONL as a new session, after checking it against the rules the
    /// store's own logs keep (see [`super::LocalStore::import`]); nothing is written otherwise.
    async fn import(&self, jsonl: String, id: Option<SessionId>) -> Result<SessionMetadata>;
    /// Releases what this process holds for writing `id`.
    async fn close(&self, id: &SessionId) -> Result<()>;
}

/// The local session store, async: each call runs on tokio's blocking pool.
///
/// ```
/// use agent_store::{SessionBackend, SessionStore, StoreOptions, NewSession};
/// use agent_core::events::{Event, EventPayload, UserMessage};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let store = SessionStore::open(StoreOptions::new(dir.path())).await?;
/// let session = store.create(NewSession::default()).await?;
/// let hello = Event::new(0, None, EventPayload::UserMessage(UserMessage { text: "hello".into() }));
/// store.append(&session.id, vec![hello]).await?;
/// let messages = store.messages(&session.id, Some(50)).await?;
/// assert_eq!(messages.len(), 1);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct SessionStore {
    local: Arc<LocalStore>,
}

impl SessionStore {
    /// Opens (creating) the store; see [`LocalStore::open`].
    ///
    /// # Errors
    /// As [`LocalStore::open`].
    pub async fn open(options: StoreOptions) -> Result<Self> {
        let local = blocking(move || LocalStore::open(options)).await?;
        Ok(Self {
            local: Arc::new(local),
        })
    }

    /// Wraps an open local store.
    pub fn from_local(local: LocalStore) -> Self {
        Self {
            local: Arc::new(local),
        }
    }

    /// The synchronous store underneath (for callers without a runtime).
    pub fn local(&self) -> &LocalStore {
        &self.local
    }

    /// Rebuilds the index from the logs; see [`LocalStore::reindex`].
    ///
    /// # Errors
    /// As [`LocalStore::reindex`].
    pub async fn reindex(&self) -> Result<usize> {
        let local = self.local.clone();
        blocking(move || local.reindex()).await
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
}

macro_rules! run {
    ($self:ident, |$local:ident| $body:expr) => {{
        let $local = $self.local.clone();
        blocking(move || $body).await
    }};
}

#[async_trait]
impl SessionBackend for SessionStore {
    async fn create(&self, new: NewSession) -> Result<SessionMetadata> {
        run!(self, |local| local.create(new))
    }
    async fn append(&self, id: &SessionId, events: Vec<Event>) -> Result<Vec<Event>> {
        let id = id.clone();
        run!(self, |local| local.append(&id, events))
    }
    async fn load(&self, id: &SessionId, range: LoadRange) -> Result<Loaded> {
        let id = id.clone();
        run!(self, |local| local.load(&id, range))
    }
    async fn messages(
        &self,
        id: &SessionId,
        limit: Option<usize>,
    ) -> Result<Vec<TranscriptMessage>> {
        let id = id.clone();
        run!(self, |local| local.messages(&id, limit))
    }
    async fn metadata(&self, id: &SessionId) -> Result<SessionMetadata> {
        let id = id.clone();
        run!(self, |local| local.metadata(&id))
    }
    async fn list(&self, query: ListQuery) -> Result<Vec<SessionMetadata>> {
        run!(self, |local| local.list(&query))
    }
    async fn fork(&self, source: &SessionId, options: ForkOptions) -> Result<SessionMetadata> {
        let source = source.clone();
        run!(self, |local| local.fork(&source, options))
    }
    async fn delete(&self, id: &SessionId) -> Result<()> {
        let id = id.clone();
        run!(self, |local| local.delete(&id))
    }
    async fn rename(&self, id: &SessionId, title: &str) -> Result<SessionMetadata> {
        let (id, title) = (id.clone(), title.to_owned());
        run!(self, |local| local.rename(&id, &title))
    }
    async fn tag(&self, id: &SessionId, tag: &str, removed: bool) -> Result<SessionMetadata> {
        let (id, tag) = (id.clone(), tag.to_owned());
        run!(self, |local| local.tag(&id, &tag, removed))
    }
    async fn export(&self, id: &SessionId, format: ExportFormat) -> Result<String> {
        let id = id.clone();
        run!(self, |local| local.export(&id, format))
    }
    async fn import(&self, jsonl: String, id: Option<SessionId>) -> Result<SessionMetadata> {
        run!(self, |local| local.import(&jsonl, id))
    }
    async fn close(&self, id: &SessionId) -> Result<()> {
        let id = id.clone();
        run!(self, |local| local.close(&id))
    }
}
