//! The writer path: a session's writer is opened (taking its lock) on the first append and kept
//! until `close`; `append` stamps `seq` and parents, writes the batch as one write, and lets the
//! index row follow at most [`INDEX_FLUSH_INTERVAL`] behind.

use std::sync::{Arc, Mutex};

use agent_core::events::{Event, EventId, EventPayload, encode_line};

use super::error::{Result, StoreError};
use super::id::SessionId;
use super::local::{INDEX_FLUSH_INTERVAL, LocalStore, SharedWriter, Writer, lock};
use super::lock::SessionLock;
use super::log::{LogWriter, MAX_LINE_BYTES, oversize_line};

#[cfg(doc)]
use super::log::Durability;

impl LocalStore {
    /// The open writer of `id`, opening it (taking the lock) if needed.
    fn writer(&self, id: &SessionId) -> Result<SharedWriter> {
        // Held while opening, so two threads cannot both try to take the session's lock.
        let mut writers = lock(&self.writers);
        if let Some(w) = writers.get(id) {
            return Ok(w.clone());
        }
        let path = self.require(id)?;
        let session_lock = SessionLock::acquire(id, &self.dir(id))?;
        lock(&self.index).writer_opened(id)?;
        let (log, _torn) = LogWriter::open(id, &path)?;
        let indexed = lock(&self.index).get(id)?;
        let meta = match indexed {
            Some(m) if m.size_bytes == log.len() => m,
            _ => self.refresh(id)?,
        };
        let writer = Arc::new(Mutex::new(Writer::new(session_lock, log, meta)));
        writers.insert(id.clone(), writer.clone());
        Ok(writer)
    }

    /// Closes the writer of `id` (if this store has one open), releasing its lock.
    ///
    /// # Errors
    /// SQLite errors while recording the close.
    pub fn close(&self, id: &SessionId) -> Result<()> {
        let writer = lock(&self.writers).remove(id);
        if let Some(w) = writer {
            let mut w = lock(&w);
            w.flush(&self.index);
            if !w.dirty {
                lock(&self.index).writer_closed(id)?;
            }
            drop(w);
        }
        Ok(())
    }

    /// Appends events to a session, in one write, and returns them as logged. The store assigns
    /// `seq` (continuing the log); an event without `parent` gets the previous event's id. Returns
    /// once the batch is as durable as the store's [`Durability`] says.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Busy`]; [`StoreError::BadInput`] for a
    /// `session.fork` event or one that encodes longer than [`MAX_LINE_BYTES`] (nothing of the
    /// batch is written); I/O errors (the log is then unchanged).
    pub fn append(&self, id: &SessionId, events: Vec<Event>) -> Result<Vec<Event>> {
        if events.is_empty() {
            return Ok(events);
        }
        let _span =
            tracing::debug_span!("session.append", session = %id, events = events.len()).entered();
        let writer = self.writer(id)?;
        let mut w = lock(&writer);
        let (stamped, lines) = stamp(events, w.meta.last_seq, w.meta.last_event_id.clone())?;
        let mut bytes = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        let mut lens = Vec::with_capacity(lines.len());
        for line in &lines {
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
            lens.push(line.len() as u64 + 1);
        }
        w.log.append(&bytes, self.durability)?;
        for (e, len) in stamped.iter().zip(lens) {
            w.meta.apply(e, len);
        }
        w.dirty = true;
        // The index row follows at most INDEX_FLUSH_INTERVAL behind (a commit per append would
        // cost more than the append); title and tag changes go at once.
        let relabelled = stamped.iter().any(|e| {
            matches!(
                e.payload,
                EventPayload::SessionTitle(_) | EventPayload::SessionTag(_)
            )
        });
        if relabelled || w.flushed_at.elapsed() >= INDEX_FLUSH_INTERVAL {
            w.flush(&self.index);
        }
        Ok(stamped)
    }
}

/// Stamps a batch for appending after the event `last_seq` / `last_event_id`: `seq` continues
/// the log, an event without `parent` gets the previous event's id. Returns the events and their
/// encoded lines (without newlines).
///
/// # Errors
/// [`StoreError::BadInput`] for a `session.fork` event (only fork writes those) or one that
/// encodes longer than [`MAX_LINE_BYTES`].
pub(crate) fn stamp(
    events: Vec<Event>,
    last_seq: u64,
    last_event_id: Option<String>,
) -> Result<(Vec<Event>, Vec<String>)> {
    let mut seq = last_seq;
    let mut prev = last_event_id.map(EventId);
    let mut stamped = events;
    let mut lines = Vec::with_capacity(stamped.len());
    for e in &mut stamped {
        if matches!(e.payload, EventPayload::SessionFork(_)) {
            return Err(StoreError::BadInput(format!(
                "event {}: `session.fork` events are written by fork only; fork the parent \
                 session instead",
                e.id
            )));
        }
        seq += 1;
        e.seq = seq;
        if e.parent.is_none() {
            e.parent = prev.take();
        }
        prev = Some(e.id.clone());
        let line = encode_line(e).map_err(|err| {
            StoreError::BadInput(format!("event {} cannot be written: {err}", e.id))
        })?;
        if line.len() > MAX_LINE_BYTES {
            return Err(StoreError::BadInput(format!(
                "event {} cannot be written: {}; shorten it (keep large output in a file it \
                 names)",
                e.id,
                oversize_line(line.len())
            )));
        }
        lines.push(line);
    }
    Ok((stamped, lines))
}
