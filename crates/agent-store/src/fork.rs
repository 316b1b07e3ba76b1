//! Fork: copying a session's history (whole, or up to a message or an event) into a new session
//! that records its parent and fork point in a `session.fork` event.

use agent_core::events::{Event, EventId, EventPayload, SessionFork, encode_line};

use super::error::{Result, StoreError};
use super::id::SessionId;
use super::local::LocalStore;
use super::log;
use super::metadata::{SessionMetadata, is_conversation};

/// Where a fork stops copying.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ForkAt {
    /// Copy the whole history.
    #[default]
    Whole,
    /// Copy the first `n` messages (conversation events), and the other events before the next.
    UpToMessage(u64),
    /// Copy up to and including this event.
    Event(EventId),
}

/// How to fork.
#[derive(Clone, Debug, Default)]
pub struct ForkOptions {
    /// Where to stop copying.
    pub at: ForkAt,
    /// The new session's id (`None`: a new UUID v7).
    pub new_id: Option<SessionId>,
}

impl LocalStore {
    /// Copies a session's history (whole, or up to a point) into a new session, which records
    /// its parent and fork point in a `session.fork` event. The source is only read.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::BadForkPoint`], [`StoreError::AlreadyExists`].
    pub fn fork(&self, source: &SessionId, options: ForkOptions) -> Result<SessionMetadata> {
        let _span =
            tracing::debug_span!("session.fork", session = %source, at = ?options.at).entered();
        let path = self.require(source)?;
        let contents = log::read_all(source, &path)?;
        let events: Vec<&Event> = contents.entries.iter().map(|(_, e)| e).collect();
        let keep = fork_cut(source, &events, &options.at)?;
        let new_id = options.new_id.unwrap_or_else(SessionId::generate);
        if self.log_path(&new_id).exists() {
            return Err(StoreError::AlreadyExists { id: new_id });
        }
        let mut text = String::new();
        for i in 0..keep {
            text += contents.line(i);
            text.push('\n');
        }
        let fork = fork_event(
            source,
            keep.checked_sub(1).and_then(|i| events.get(i).copied()),
        );
        text += &encode_line(&fork).map_err(|e| StoreError::BadInput(e.to_string()))?;
        text.push('\n');
        self.write_new(&new_id, text.as_bytes(), false)
    }
}

/// How many events of `events` (a whole log, oldest first) a fork at `at` copies.
///
/// # Errors
/// [`StoreError::BadForkPoint`] for an unknown event or more messages than the log holds.
pub(crate) fn fork_cut(source: &SessionId, events: &[&Event], at: &ForkAt) -> Result<usize> {
    match at {
        ForkAt::Whole => Ok(events.len()),
        ForkAt::UpToMessage(n) => {
            let mut seen = 0u64;
            let mut cut = events.len();
            for (i, e) in events.iter().enumerate() {
                if is_conversation(e) {
                    if seen == *n {
                        cut = i;
                        break;
                    }
                    seen += 1;
                }
            }
            if seen < *n {
                return Err(StoreError::BadForkPoint {
                    id: source.clone(),
                    what: format!("cannot fork up to message {n}: the session has {seen} messages"),
                });
            }
            Ok(cut)
        }
        ForkAt::Event(uuid) => match events.iter().position(|e| &e.id == uuid) {
            Some(i) => Ok(i + 1),
            None => Err(StoreError::BadForkPoint {
                id: source.clone(),
                what: format!("no event with id `{uuid}` to fork at"),
            }),
        },
    }
}

/// The `session.fork` event written after the copied history, whose last event is `last`.
pub(crate) fn fork_event(source: &SessionId, last: Option<&Event>) -> Event {
    Event::new(
        last.map_or(1, |e| e.seq + 1),
        last.map(|e| e.id.clone()),
        EventPayload::SessionFork(SessionFork {
            parent_session_id: source.to_string(),
            fork_point: last.map(|e| e.id.0.clone()),
            fork_seq: last.map_or(0, |e| e.seq),
        }),
    )
}
