//! Reads: a session's events ([`LocalStore::load`], whole or a window from the tail), its
//! conversation ([`LocalStore::messages`]), its metadata, and the list of sessions. Reads take no
//! session lock; metadata and the list are caught up with the logs before they are returned.

use agent_core::events::Event;

use super::error::Result;
use super::id::SessionId;
use super::index::ListQuery;
use super::local::{LocalStore, SharedWriter, lock};
use super::lock::SessionLock;
use super::log::{self, TailReader, TornTail};
use super::messages::{TailMessages, TranscriptMessage, conversation};
use super::metadata::SessionMetadata;

#[cfg(doc)]
use super::error::StoreError;

/// Which events [`LocalStore::load`] returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadRange {
    /// Skip this many events from the tail (newest) first.
    pub offset: usize,
    /// Then return at most this many (the newest ones), oldest first. `None`: all.
    pub limit: Option<usize>,
}

/// Events read from a log.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// The events, oldest first.
    pub events: Vec<Event>,
    /// A torn tail that was skipped (a crash; the next writer sets it aside).
    pub torn: Option<TornTail>,
}

impl LocalStore {
    /// Events of a session: all, or a window counted from the tail (read backwards, without
    /// reading the part of the log before the window).
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; [`StoreError::Corrupt`] for a bad line inside what is read.
    pub fn load(&self, id: &SessionId, range: LoadRange) -> Result<Loaded> {
        let path = self.require(id)?;
        if range.offset == 0 && range.limit.is_none() {
            let contents = log::read_all(id, &path)?;
            return Ok(Loaded {
                events: contents.entries.into_iter().map(|(_, e)| e).collect(),
                torn: contents.torn,
            });
        }
        let mut tail = TailReader::open(id, &path)?;
        let mut skipped = 0;
        let mut events = Vec::new();
        while range.limit.is_none_or(|l| events.len() < l) {
            let Some((event, _)) = tail.prev()? else {
                break;
            };
            if skipped < range.offset {
                skipped += 1;
            } else {
                events.push(event);
            }
        }
        events.reverse();
        Ok(Loaded {
            events,
            torn: tail.torn().cloned(),
        })
    }

    /// The provider-facing conversation (compactions applied): all of it, or its last `limit`
    /// messages, read from the tail.
    ///
    /// # Errors
    /// As [`LocalStore::load`].
    pub fn messages(&self, id: &SessionId, limit: Option<usize>) -> Result<Vec<TranscriptMessage>> {
        let path = self.require(id)?;
        let whole = || -> Result<Vec<TranscriptMessage>> {
            let contents = log::read_all(id, &path)?;
            let all = conversation(contents.entries.iter().map(|(_, e)| e));
            Ok(match limit {
                Some(n) => all[all.len().saturating_sub(n)..].to_vec(),
                None => all,
            })
        };
        let Some(want) = limit else {
            return whole();
        };
        let Some(row) = self.current_row(id)? else {
            return whole();
        };
        let mut tail = TailReader::open(id, &path)?;
        let mut builder = TailMessages::new(want, row.message_count);
        while let Some((event, _)) = tail.prev()? {
            if builder.push(&event) {
                break;
            }
        }
        // The ordinals come from the index row: use them only if it describes this log.
        if tail.good_len() != row.size_bytes {
            return whole();
        }
        Ok(builder.finish())
    }

    /// The index row of `id` as this store knows it (its own writer's, when it has one open).
    fn current_row(&self, id: &SessionId) -> Result<Option<SessionMetadata>> {
        if let Some(w) = lock(&self.writers).get(id).cloned() {
            return Ok(Some(lock(&w).meta.clone()));
        }
        lock(&self.index).get(id)
    }

    /// A session's metadata. Checked against the log's size, and recomputed from the log when
    /// the index lags.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; I/O, SQLite and corruption errors.
    pub fn metadata(&self, id: &SessionId) -> Result<SessionMetadata> {
        let path = self.require(id)?;
        let row = self.current_row(id)?;
        if let Some(row) = &row {
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            if size == row.size_bytes {
                return Ok(row.clone());
            }
        }
        let meta = self.caught_up(id, row)?;
        if !SessionLock::is_held(&self.dir(id)) {
            lock(&self.index).put(&meta)?;
        }
        Ok(meta)
    }

    /// Sessions, most recently updated first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn list(&self, query: &ListQuery) -> Result<Vec<SessionMetadata>> {
        // This store's writers first: their rows may be up to INDEX_FLUSH_INTERVAL behind.
        let writers: Vec<SharedWriter> = lock(&self.writers).values().cloned().collect();
        for w in writers {
            lock(&w).flush(&self.index);
        }
        // Then sessions another process is writing: catch their rows up from the logs' tails.
        let open = lock(&self.index).open_writers()?;
        for name in open {
            let Ok(id) = SessionId::parse(&name) else {
                continue;
            };
            if lock(&self.writers).contains_key(&id) {
                continue;
            }
            let Some(row) = lock(&self.index).get(&id)? else {
                continue;
            };
            let size = std::fs::metadata(self.log_path(&id)).map_or(row.size_bytes, |m| m.len());
            if size != row.size_bytes
                && let Ok(meta) = self.caught_up(&id, Some(row))
            {
                lock(&self.index).put(&meta)?;
            }
        }
        lock(&self.index).list(query)
    }
}
