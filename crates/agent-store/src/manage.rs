//! The management verbs that change a session as a whole: rename and tag (appended as
//! `session.title` and `session.tag` events) and delete.

use agent_core::events::{Event, EventPayload, SessionTag, SessionTitle};

use super::error::{Result, StoreError};
use super::id::SessionId;
use super::local::{LocalStore, lock};
use super::lock::SessionLock;
use super::log::sync_dir;
use super::metadata::SessionMetadata;

impl LocalStore {
    /// Deletes a session: its directory and its row. Refused while another process writes it.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Busy`]; I/O errors.
    pub fn delete(&self, id: &SessionId) -> Result<()> {
        self.require(id)?;
        let dir = self.dir(id);
        // Hold the lock (ours or freshly taken) while the directory goes away.
        let ours = lock(&self.writers).remove(id);
        let _held = match &ours {
            Some(_) => None,
            None => Some(SessionLock::acquire(id, &dir)?),
        };
        let trash = self
            .root
            .join(format!(".trash-{}-{}", id, uuid::Uuid::now_v7().simple()));
        self.changing_root(|| {
            std::fs::rename(&dir, &trash).map_err(|e| StoreError::io("cannot delete", &dir, e))
        })?;
        sync_dir(&self.root);
        lock(&self.index).remove(id)?;
        drop(ours);
        if let Err(e) = std::fs::remove_dir_all(&trash) {
            tracing::warn!(path = %trash.display(), error = %e, "a deleted session's files were left behind");
        }
        Ok(())
    }

    /// Sets the title (appends a `session.title` event).
    ///
    /// # Errors
    /// As [`LocalStore::append`].
    pub fn rename(&self, id: &SessionId, title: &str) -> Result<SessionMetadata> {
        let e = Event::new(
            0,
            None,
            EventPayload::SessionTitle(SessionTitle {
                title: title.to_owned(),
            }),
        );
        self.append(id, vec![e])?;
        self.metadata(id)
    }

    /// Adds a tag, or with `removed` takes it off (appends a `session.tag` event).
    ///
    /// # Errors
    /// As [`LocalStore::append`]; an empty tag.
    pub fn tag(&self, id: &SessionId, tag: &str, removed: bool) -> Result<SessionMetadata> {
        if tag.trim().is_empty() {
            return Err(StoreError::BadInput("a tag must not be empty".into()));
        }
        let e = Event::new(
            0,
            None,
            EventPayload::SessionTag(SessionTag {
                tag: tag.to_owned(),
                removed,
            }),
        );
        self.append(id, vec![e])?;
        self.metadata(id)
    }
}
