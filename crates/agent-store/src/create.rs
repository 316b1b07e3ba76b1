//! New sessions: what one starts with ([`NewSession`], [`git_branch`]), `create`, and writing a
//! whole new session's directory, lock, log and row (shared by create, fork and import).

use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_core::events::{
    Event, EventId, EventPayload, SessionTag, SessionTitle, SystemInit, encode_line,
};

use super::error::{Result, StoreError};
use super::id::SessionId;
use super::local::{LocalStore, Writer, lock};
use super::lock::SessionLock;
use super::log::{self, LOG_FILE, LogWriter, sync_dir, write_atomically};
use super::metadata::{SessionMetadata, fold};

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

impl LocalStore {
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
        let text = initial_log(&id, new)?;
        self.write_new(&id, text.as_bytes(), true)
    }

    /// Writes a whole new session (create, fork, import): directory, lock, atomic log, row.
    /// With `keep_open`, the writer stays open for appends.
    pub(super) fn write_new(
        &self,
        id: &SessionId,
        bytes: &[u8],
        keep_open: bool,
    ) -> Result<SessionMetadata> {
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

/// The log a new session starts with: `system.init`, then a `session.title` and `session.tag`
/// events when given.
///
/// # Errors
/// [`StoreError::BadInput`] for an empty tag.
pub(crate) fn initial_log(id: &SessionId, new: NewSession) -> Result<String> {
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
    Ok(text)
}
