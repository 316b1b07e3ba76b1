//! The local store: session directories with their logs under one root, and the SQLite index.
//! Synchronous; [`super::SessionStore`] is its async face.
//!
//! This module holds the store itself: where it lives ([`StoreOptions`]), its state (the index
//! and the open writers), opening it, and the paths and root bookkeeping every operation shares.
//! The operations live beside it, one module per concept: `create` (new sessions), `append`
//! (the writer path), `read` (load, messages, metadata, list), `fork`, `manage` (rename, tag,
//! delete), `export` and `import`, and `reconcile` (keeping the index in line with the logs).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::error::{Result, StoreError};
use super::id::SessionId;
use super::index::Index;
use super::lock::SessionLock;
use super::log::{Durability, LOG_FILE, LogWriter};
use super::metadata::SessionMetadata;

/// Where a store lives and how it writes.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// The store root: one directory per session, plus the index in `.index/`.
    pub root: PathBuf,
    /// How durable an append is when it returns.
    pub durability: Durability,
}

impl StoreOptions {
    /// A store at `root`, appends synced to disk.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            durability: Durability::Fsync,
        }
    }

    /// Sets the durability of appends.
    #[must_use]
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }
}

/// The open writer of one session: the lock, the log's append side, and the metadata so far.
#[derive(Debug)]
pub(super) struct Writer {
    _lock: SessionLock,
    pub(super) log: LogWriter,
    pub(super) meta: SessionMetadata,
    /// When the index row last received `meta`.
    pub(super) flushed_at: Instant,
    /// `meta` has changes the index row has not received.
    pub(super) dirty: bool,
}

impl Writer {
    pub(super) fn new(lock: SessionLock, log: LogWriter, meta: SessionMetadata) -> Self {
        Self {
            _lock: lock,
            log,
            meta,
            flushed_at: Instant::now(),
            dirty: false,
        }
    }

    /// Writes `meta` into the index row if it has changes the row lacks. The log is the truth
    /// and already holds them: a failure is logged (the session stays in `open_writers`, so the
    /// next open catches the row up), not reported as a failed append.
    pub(super) fn flush(&mut self, index: &Mutex<Index>) {
        if !self.dirty {
            return;
        }
        match lock(index).put(&self.meta) {
            Ok(()) => self.dirty = false,
            Err(e) => {
                tracing::warn!(session = %self.meta.id, error = %e, "the index lags the log until the next open");
            }
        }
        self.flushed_at = Instant::now();
    }
}

/// How long a writer may leave its index row behind its log. Appends closer together than this
/// update the row once; `list`, `metadata` and `close` bring it up to date at once.
pub(super) const INDEX_FLUSH_INTERVAL: Duration = Duration::from_millis(50);

pub(super) type SharedWriter = Arc<Mutex<Writer>>;

/// The local session store.
///
/// Writers are kept open (holding their session's lock) from the first write until
/// [`LocalStore::close`] or until the store is dropped.
#[derive(Debug)]
pub struct LocalStore {
    pub(super) root: PathBuf,
    pub(super) durability: Durability,
    pub(super) index: Mutex<Index>,
    pub(super) writers: Mutex<HashMap<SessionId, SharedWriter>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these leaves consistent data (each holder writes the log
    // first and the cache after), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl LocalStore {
    /// Opens (creating) the store at `options.root`, then brings the index in line with the logs:
    /// rebuilt when missing or of another version, rescanned when the set of session directories
    /// changed, and refreshed for sessions whose writer did not close (a crash).
    ///
    /// # Errors
    /// I/O and SQLite errors; a corrupt log met while reconciling.
    pub fn open(options: StoreOptions) -> Result<Self> {
        let _span =
            tracing::debug_span!("session_store.open", root = %options.root.display()).entered();
        let root = options.root;
        create_private_dir_all(&root)?;
        let (index, fresh) = Index::open(&root)?;
        let store = Self {
            root,
            durability: options.durability,
            index: Mutex::new(index),
            writers: Mutex::new(HashMap::new()),
        };
        if fresh {
            store.reindex()?;
        } else {
            store.reconcile()?;
        }
        Ok(store)
    }

    /// The store root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub(super) fn dir(&self, id: &SessionId) -> PathBuf {
        // Ids are validated: no separators, no `..`, no leading `.`; this stays beneath root.
        self.root.join(id.as_str())
    }

    pub(super) fn log_path(&self, id: &SessionId) -> PathBuf {
        self.dir(id).join(LOG_FILE)
    }

    pub(super) fn require(&self, id: &SessionId) -> Result<PathBuf> {
        let path = self.log_path(id);
        if path.is_file() {
            Ok(path)
        } else {
            Err(StoreError::NotFound {
                id: id.clone(),
                root: self.root.clone(),
            })
        }
    }

    pub(super) fn root_mtime(&self) -> String {
        std::fs::metadata(&self.root)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or_else(String::new, |d| {
                format!("{}.{:09}", d.as_secs(), d.subsec_nanos())
            })
    }

    /// Runs `change` (which adds or removes a session directory) and keeps the index's record of
    /// the root's mtime current, unless something else changed the root meanwhile.
    pub(super) fn changing_root<T>(&self, change: impl FnOnce() -> Result<T>) -> Result<T> {
        let before = self.root_mtime();
        let out = change()?;
        let index = lock(&self.index);
        if index.meta("root_mtime")?.as_deref() == Some(before.as_str()) {
            index.set_meta("root_mtime", &self.root_mtime())?;
        }
        Ok(out)
    }
}

impl Drop for LocalStore {
    fn drop(&mut self) {
        let ids: Vec<SessionId> = lock(&self.writers).keys().cloned().collect();
        for id in ids {
            let _ = self.close(&id);
        }
    }
}

fn create_private_dir_all(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|e| StoreError::io("cannot create the session store", dir, e))
}
