//! Keeping the index in line with the logs: the rebuild (`reindex`, also run when opening a store
//! whose index is missing or of another version), the reconciliation run on every other open
//! (sessions whose writer did not close; directories added or removed behind the index's back),
//! and catching one session's row up with its log.

use std::collections::HashMap;

use super::error::{Result, StoreError};
use super::id::SessionId;
use super::local::{LocalStore, lock};
use super::lock::SessionLock;
use super::log::{self, LOG_FILE};
use super::metadata::{SessionMetadata, fold};

impl LocalStore {
    /// Rebuilds the whole index from the logs. Returns the number of sessions indexed.
    ///
    /// # Errors
    /// I/O and SQLite errors; a corrupt log (named with its line).
    pub fn reindex(&self) -> Result<usize> {
        let mtime = self.root_mtime();
        let writing: Vec<SessionId> = lock(&self.writers).keys().cloned().collect();
        let mut all = Vec::new();
        for id in self.session_dirs()? {
            let contents = log::read_all(&id, &self.log_path(&id))?;
            all.push(fold(&id, &contents));
        }
        let mut index = lock(&self.index);
        index.replace_all(&all, &mtime)?;
        // Sessions this store is writing stay marked as open.
        for id in &writing {
            index.writer_opened(id)?;
        }
        Ok(all.len())
    }

    /// Every session directory (a valid id holding a log).
    fn session_dirs(&self) -> Result<Vec<SessionId>> {
        let entries = std::fs::read_dir(&self.root)
            .map_err(|e| StoreError::io("cannot list", &self.root, e))?;
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io("cannot list", &self.root, e))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if let Ok(id) = SessionId::parse(&name)
                && entry.path().join(LOG_FILE).is_file()
            {
                ids.push(id);
            }
        }
        ids.sort();
        Ok(ids)
    }

    pub(super) fn reconcile(&self) -> Result<()> {
        // 1. Sessions whose writer did not close.
        let open = lock(&self.index).open_writers()?;
        for name in open {
            let Ok(id) = SessionId::parse(&name) else {
                continue;
            };
            let dir = self.dir(&id);
            if !dir.join(LOG_FILE).is_file() {
                lock(&self.index).remove(&id)?;
                continue;
            }
            // Held: a live writer keeps its row current. Free: it crashed; catch up.
            let Ok(held) = SessionLock::acquire(&id, &dir) else {
                continue;
            };
            self.refresh(&id)?;
            lock(&self.index).writer_closed(&id)?;
            drop(held);
        }
        // 2. Directories added or removed behind the index's back.
        let mtime = self.root_mtime();
        let recorded = lock(&self.index).meta("root_mtime")?;
        if recorded.as_deref() != Some(mtime.as_str()) {
            let on_disk = self.session_dirs()?;
            let indexed: HashMap<String, u64> = lock(&self.index).sizes()?.into_iter().collect();
            for id in &on_disk {
                let size = std::fs::metadata(self.log_path(id)).map_or(0, |m| m.len());
                if indexed.get(id.as_str()) != Some(&size) {
                    self.refresh(id)?;
                }
            }
            let present: std::collections::HashSet<&str> =
                on_disk.iter().map(SessionId::as_str).collect();
            let mut index = lock(&self.index);
            for gone in indexed.keys().filter(|k| !present.contains(k.as_str())) {
                if let Ok(id) = SessionId::parse(gone) {
                    index.remove(&id)?;
                }
            }
            index.set_meta("root_mtime", &mtime)?;
        }
        Ok(())
    }

    /// Brings one session's row up to date with its log (see [`LocalStore::caught_up`]).
    pub(super) fn refresh(&self, id: &SessionId) -> Result<SessionMetadata> {
        let row = lock(&self.index).get(id)?;
        let meta = self.caught_up(id, row)?;
        lock(&self.index).put(&meta)?;
        Ok(meta)
    }

    /// The metadata of `id` as its log says now: `row` (what the index had) plus the events
    /// after the part it described, when the log still starts with that part; otherwise a fold
    /// of the whole log.
    pub(super) fn caught_up(
        &self,
        id: &SessionId,
        row: Option<SessionMetadata>,
    ) -> Result<SessionMetadata> {
        let path = self.log_path(id);
        if let Some(mut meta) = row
            && let Some(last_id) = meta.last_event_id.clone()
            // Any error here (a bad line, say) is reported by the whole read below, with its
            // absolute line number.
            && let Ok(Some(rest)) = log::read_after(id, &path, meta.size_bytes, &last_id)
            && rest
                .entries
                .first()
                .is_none_or(|(_, e)| e.seq == meta.last_seq + 1)
        {
            for (_, event) in &rest.entries {
                meta.apply(event, 0);
            }
            meta.size_bytes += rest.good_len();
            return Ok(meta);
        }
        let contents = log::read_all(id, &path)?;
        Ok(fold(id, &contents))
    }
}
