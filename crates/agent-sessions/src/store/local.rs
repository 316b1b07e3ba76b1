//! The local store: session directories with their logs under one root, and the SQLite index.
//! Synchronous; [`super::SessionStore`] is its async face.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_core::events::{
    Event, EventId, EventPayload, SessionFork, SessionTag, SessionTitle, SystemInit, encode_line,
};

use super::error::{Result, StoreError};
use super::export::{self, ExportFormat};
use super::id::SessionId;
use super::import;
use super::index::{Index, ListQuery};
use super::lock::SessionLock;
use super::log::{
    self, Durability, LOG_FILE, LogContents, LogWriter, MAX_LINE_BYTES, TailReader, TornTail,
    oversize_line, sync_dir, write_atomically,
};
use super::messages::{Message, TailMessages, conversation};
use super::metadata::{SessionMetadata, is_conversation};

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

    /// The default root: `$AGENT_HOME/sessions`, or `~/.agent/sessions`.
    ///
    /// # Errors
    /// When neither `AGENT_HOME` nor `HOME` is set.
    pub fn default_root() -> Result<PathBuf> {
        if let Some(home) = std::env::var_os("AGENT_HOME").filter(|h| !h.is_empty()) {
            return Ok(PathBuf::from(home).join("sessions"));
        }
        match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(home) => Ok(PathBuf::from(home).join(".agent").join("sessions")),
            None => Err(StoreError::BadInput(
                "neither AGENT_HOME nor HOME is set; set one, or give the store root explicitly"
                    .into(),
            )),
        }
    }

    /// Sets the durability of appends.
    #[must_use]
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }
}

/// What a new session starts with. Becomes its `system.init` event (plus `session.title` and
/// `session.tag` events when given).
#[derive(Clone, Debug, Default)]
pub struct NewSession {
    /// The id (`None`: a new UUID v7).
    pub id: Option<SessionId>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Git branch (see [`git_branch`]).
    pub git_branch: Option<String>,
    /// Tools offered to the model.
    pub tools: Vec<String>,
    /// Permission mode at start.
    pub permission_mode: Option<String>,
    /// A title.
    pub title: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
}

impl NewSession {
    /// A session in `cwd`, with the git branch checked out there (if any).
    pub fn in_dir(cwd: &Path) -> Self {
        Self {
            cwd: Some(cwd.display().to_string()),
            git_branch: git_branch(cwd),
            ..Self::default()
        }
    }
}

/// The branch checked out in the git work tree containing `dir`, read from `.git/HEAD` (no git
/// process); `None` outside a work tree or on a detached HEAD.
pub fn git_branch(dir: &Path) -> Option<String> {
    for d in dir.ancestors() {
        let git = d.join(".git");
        let head_path = if git.is_dir() {
            git.join("HEAD")
        } else if git.is_file() {
            // A worktree or submodule: `gitdir: <path>`.
            let text = std::fs::read_to_string(&git).ok()?;
            let gitdir = text.strip_prefix("gitdir:")?.trim();
            d.join(gitdir).join("HEAD")
        } else {
            continue;
        };
        let head = std::fs::read_to_string(head_path).ok()?;
        return head
            .trim()
            .strip_prefix("ref: refs/heads/")
            .map(str::to_owned);
    }
    None
}

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

/// The open writer of one session: the lock, the log's append side, and the metadata so far.
#[derive(Debug)]
struct Writer {
    _lock: SessionLock,
    log: LogWriter,
    meta: SessionMetadata,
    /// When the index row last received `meta`.
    flushed_at: Instant,
    /// `meta` has changes the index row has not received.
    dirty: bool,
}

impl Writer {
    fn new(lock: SessionLock, log: LogWriter, meta: SessionMetadata) -> Self {
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
    fn flush(&mut self, index: &Mutex<Index>) {
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
const INDEX_FLUSH_INTERVAL: Duration = Duration::from_millis(50);

type SharedWriter = Arc<Mutex<Writer>>;

/// The local session store.
///
/// Writers are kept open (holding their session's lock) from the first write until
/// [`LocalStore::close`] or until the store is dropped.
#[derive(Debug)]
pub struct LocalStore {
    root: PathBuf,
    durability: Durability,
    index: Mutex<Index>,
    writers: Mutex<HashMap<SessionId, SharedWriter>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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

    fn dir(&self, id: &SessionId) -> PathBuf {
        // Ids are validated: no separators, no `..`, no leading `.`; this stays beneath root.
        self.root.join(id.as_str())
    }

    fn log_path(&self, id: &SessionId) -> PathBuf {
        self.dir(id).join(LOG_FILE)
    }

    fn require(&self, id: &SessionId) -> Result<PathBuf> {
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

    fn root_mtime(&self) -> String {
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
    fn changing_root<T>(&self, change: impl FnOnce() -> Result<T>) -> Result<T> {
        let before = self.root_mtime();
        let out = change()?;
        let index = lock(&self.index);
        if index.meta("root_mtime")?.as_deref() == Some(before.as_str()) {
            index.set_meta("root_mtime", &self.root_mtime())?;
        }
        Ok(out)
    }

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

    fn reconcile(&self) -> Result<()> {
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
    fn refresh(&self, id: &SessionId) -> Result<SessionMetadata> {
        let row = lock(&self.index).get(id)?;
        let meta = self.caught_up(id, row)?;
        lock(&self.index).put(&meta)?;
        Ok(meta)
    }

    /// The metadata of `id` as its log says now: `row` (what the index had) plus the events
    /// after the part it described, when the log still starts with that part; otherwise a fold
    /// of the whole log.
    fn caught_up(&self, id: &SessionId, row: Option<SessionMetadata>) -> Result<SessionMetadata> {
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

    /// Creates a session. Its log starts with `system.init`.
    ///
    /// # Errors
    /// [`StoreError::AlreadyExists`]; I/O and SQLite errors.
    pub fn create(&self, new: NewSession) -> Result<SessionMetadata> {
        let id = new.id.clone().unwrap_or_else(SessionId::generate);
        let dir = self.dir(&id);
        let path = dir.join(LOG_FILE);
        if path.exists() {
            return Err(StoreError::AlreadyExists { id });
        }
        if new.tags.iter().any(|t| t.trim().is_empty()) {
            return Err(StoreError::BadInput("a tag must not be empty".into()));
        }
        let mut events = vec![EventPayload::SystemInit(SystemInit {
            session_id: id.to_string(),
            cwd: new.cwd,
            model: new.model,
            tools: new.tools,
            permission_mode: new.permission_mode,
            git_branch: new.git_branch,
        })];
        if let Some(title) = new.title {
            events.push(EventPayload::SessionTitle(SessionTitle { title }));
        }
        for tag in new.tags {
            events.push(EventPayload::SessionTag(SessionTag {
                tag,
                removed: false,
            }));
        }
        let mut text = String::new();
        let mut prev: Option<EventId> = None;
        for (i, payload) in events.into_iter().enumerate() {
            let e = Event::new(i as u64 + 1, prev.take(), payload);
            prev = Some(e.id.clone());
            text += &encode_line(&e).map_err(|e| StoreError::BadInput(e.to_string()))?;
            text.push('\n');
        }
        self.write_new(&id, text.as_bytes(), true)
    }

    /// Writes a whole new session (create, fork, import): directory, lock, atomic log, row.
    /// With `keep_open`, the writer stays open for appends.
    fn write_new(&self, id: &SessionId, bytes: &[u8], keep_open: bool) -> Result<SessionMetadata> {
        let dir = self.dir(id);
        let path = dir.join(LOG_FILE);
        lock(&self.index).writer_opened(id)?;
        self.changing_root(|| match create_private_dir(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(StoreError::io("cannot create", &dir, e)),
        })?;
        let session_lock = SessionLock::acquire(id, &dir)?;
        // Checked again under the lock: a racing creator of the same id loses here.
        if path.exists() {
            return Err(StoreError::AlreadyExists { id: id.clone() });
        }
        write_atomically(&path, bytes)?;
        sync_dir(&self.root);
        let contents = log::read_all(id, &path)?;
        let meta = fold(id, &contents);
        lock(&self.index).put(&meta)?;
        if keep_open {
            let (log, _) = LogWriter::open(id, &path)?;
            let writer = Arc::new(Mutex::new(Writer::new(session_lock, log, meta.clone())));
            lock(&self.writers).insert(id.clone(), writer);
        } else {
            lock(&self.index).writer_closed(id)?;
        }
        Ok(meta)
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
        let mut bytes = Vec::with_capacity(256 * events.len());
        let mut lens = Vec::with_capacity(events.len());
        let mut seq = w.meta.last_seq;
        let mut prev = w.meta.last_event_id.clone().map(EventId);
        let mut stamped = events;
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
            let start = bytes.len();
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
            lens.push((bytes.len() - start) as u64);
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
    pub fn messages(&self, id: &SessionId, limit: Option<usize>) -> Result<Vec<Message>> {
        let path = self.require(id)?;
        let whole = || -> Result<Vec<Message>> {
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
        let keep = match &options.at {
            ForkAt::Whole => contents.entries.len(),
            ForkAt::UpToMessage(n) => {
                let mut seen = 0u64;
                let mut cut = contents.entries.len();
                for (i, (_, e)) in contents.entries.iter().enumerate() {
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
                        what: format!(
                            "cannot fork up to message {n}: the session has {seen} messages"
                        ),
                    });
                }
                cut
            }
            ForkAt::Event(uuid) => match contents.entries.iter().position(|(_, e)| &e.id == uuid) {
                Some(i) => i + 1,
                None => {
                    return Err(StoreError::BadForkPoint {
                        id: source.clone(),
                        what: format!("no event with id `{uuid}` to fork at"),
                    });
                }
            },
        };
        let new_id = options.new_id.unwrap_or_else(SessionId::generate);
        if self.log_path(&new_id).exists() {
            return Err(StoreError::AlreadyExists { id: new_id });
        }
        let mut text = String::new();
        for i in 0..keep {
            text += contents.line(i);
            text.push('\n');
        }
        let last = keep.checked_sub(1).and_then(|i| contents.entries.get(i));
        let fork = Event::new(
            last.map_or(1, |(_, e)| e.seq + 1),
            last.map(|(_, e)| e.id.clone()),
            EventPayload::SessionFork(SessionFork {
                parent_session_id: source.to_string(),
                fork_point: last.map(|(_, e)| e.id.0.clone()),
                fork_seq: last.map_or(0, |(_, e)| e.seq),
            }),
        );
        text += &encode_line(&fork).map_err(|e| StoreError::BadInput(e.to_string()))?;
        text.push('\n');
        self.write_new(&new_id, text.as_bytes(), false)
    }

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

    /// The session as text: its log's lines verbatim (`Jsonl`, unknown events included), or a
    /// Claude-Code-compatible transcript (`Claude`).
    ///
    /// # Errors
    /// As [`LocalStore::load`].
    pub fn export(&self, id: &SessionId, format: ExportFormat) -> Result<String> {
        let path = self.require(id)?;
        let contents = log::read_all(id, &path)?;
        match format {
            ExportFormat::Jsonl => Ok(contents.text),
            ExportFormat::Claude => {
                let meta = fold(id, &contents);
                Ok(export::claude_transcript(
                    &meta,
                    contents.entries.iter().map(|(_, e)| e),
                ))
            }
        }
    }

    /// Imports an events JSONL as a new session `id` (`None`: a new UUID v7). The input must be a
    /// log the store could have written: every line a valid event of at most [`MAX_LINE_BYTES`],
    /// `seq` 1, 2, 3, ..., valid ids in `sessionId`, `parentSessionId` and `agentId`, one
    /// session's `sessionId` after the last `session.fork`, no `parentSessionId` equal to `id`,
    /// and each `session.fork` naming the event before it (docs/sessions.md, "Import"). Lines are
    /// kept verbatim, except that the log's own `sessionId` becomes `id` when it says another.
    /// Nothing is written unless the whole input passes.
    ///
    /// # Errors
    /// [`StoreError::BadInput`] naming the line, the field, the value and what to do;
    /// [`StoreError::AlreadyExists`].
    pub fn import(&self, jsonl: &str, id: Option<SessionId>) -> Result<SessionMetadata> {
        let id = id.unwrap_or_else(SessionId::generate);
        if self.log_path(&id).exists() {
            return Err(StoreError::AlreadyExists { id });
        }
        let text = import::prepare(jsonl, &id)?;
        self.write_new(&id, text.as_bytes(), false)
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

/// Folds a log's events into metadata.
fn fold(id: &SessionId, contents: &LogContents) -> SessionMetadata {
    let mut meta = SessionMetadata::empty(id.clone());
    for (_, event) in &contents.entries {
        meta.apply(event, 0);
    }
    meta.size_bytes = contents.good_len();
    meta
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
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
