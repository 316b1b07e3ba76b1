//! What the built-in tools remember within a session: which files the agent read (and their
//! state then, for stale-read detection) and the todo list.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// A file's state when the agent last read or wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// Its size.
    pub size: u64,
    /// Its modification time (nanoseconds since the epoch).
    pub mtime: u128,
}

impl Seen {
    /// The state of `path` now, or `None` when it does not exist.
    pub fn of(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Some(Self {
            size: meta.len(),
            mtime,
        })
    }
}

/// One todo item (TodoWrite's input shape).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// The present-continuous form shown while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Session {
    seen: HashMap<PathBuf, Seen>,
    todos: Vec<Todo>,
}

/// Per-session memory of the built-in tools, shared by all of them (cheap to clone).
#[derive(Clone, Debug, Default)]
pub struct ToolState {
    sessions: Arc<Mutex<HashMap<String, Session>>>,
}

impl ToolState {
    /// Empty state.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, session: &str, f: impl FnOnce(&mut Session) -> T) -> T {
        let mut all = match self.sessions.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(all.entry(session.to_owned()).or_default())
    }

    /// Records that the agent read (or wrote) `path` as it is now.
    pub fn saw(&self, session: &str, path: &Path) {
        if let Some(s) = Seen::of(path) {
            self.with(session, |st| st.seen.insert(path.to_path_buf(), s));
        }
    }

    /// The state of `path` when the agent last read or wrote it.
    pub fn seen(&self, session: &str, path: &Path) -> Option<Seen> {
        self.with(session, |st| st.seen.get(path).cloned())
    }

    /// Replaces the todo list.
    pub fn set_todos(&self, session: &str, todos: Vec<Todo>) {
        self.with(session, |st| st.todos = todos);
    }

    /// The todo list.
    pub fn todos(&self, session: &str) -> Vec<Todo> {
        self.with(session, |st| st.todos.clone())
    }

    /// The state saved by [`Self::save`] at `path` (empty when the file does not exist), so
    /// separate processes (`agent tool --session NAME`) share one session's memory.
    ///
    /// # Errors
    /// A message when the file cannot be read or is not such a state.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::new()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let sessions: HashMap<String, Session> = serde_json::from_slice(&text)
            .map_err(|e| format!("{} is not a tool state file: {e}", path.display()))?;
        Ok(Self {
            sessions: Arc::new(Mutex::new(sessions)),
        })
    }

    /// Writes the state to `path` (temporary file, then rename).
    ///
    /// # Errors
    /// A message when it cannot be written.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let snapshot = match self.sessions.lock() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        let bytes = serde_json::to_vec(&snapshot).map_err(|e| e.to_string())?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}
