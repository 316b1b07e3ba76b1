//! The store's errors: each says what was wrong, where, and what to do.

use std::path::PathBuf;

use agent_core::events::EventError;

use super::id::{InvalidSessionId, SessionId};

/// Everything a session store operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The session id breaks the id rules.
    #[error(transparent)]
    InvalidId(#[from] InvalidSessionId),
    /// No session has this id.
    #[error("no session `{id}` in {root}; `agent sessions list` shows the sessions there")]
    NotFound {
        /// The id asked for.
        id: SessionId,
        /// The store root searched.
        root: PathBuf,
    },
    /// A session with this id exists already.
    #[error("session `{id}` already exists; choose another id or leave it out for a new one")]
    AlreadyExists {
        /// The id asked for.
        id: SessionId,
    },
    /// Another process (or another store in this one) holds the session's writer lock.
    #[error(
        "session `{id}` is open in another process (pid {pid}); close it there, or read it (reads never wait)"
    )]
    Busy {
        /// The session.
        id: SessionId,
        /// The pid recorded by the lock holder, or `unknown`.
        pid: String,
    },
    /// A line in the middle of a log is not a valid event. Nothing was changed or dropped.
    #[error(
        "session `{id}`: line {line} of {path} is corrupt ({source}); the log was left as it is: repair or remove that line, then retry"
    )]
    Corrupt {
        /// The session.
        id: SessionId,
        /// The log file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with the line.
        #[source]
        source: EventError,
    },
    /// An event given to `append` or `import` is not acceptable.
    #[error("{0}")]
    BadInput(String),
    /// A fork point does not exist in the source session.
    #[error("session `{id}`: {what}")]
    BadForkPoint {
        /// The source session.
        id: SessionId,
        /// What was not found.
        what: String,
    },
    /// A file operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done (`cannot create`, `cannot read`, ...).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The SQLite index failed.
    #[error("session index {path}: {source}; `agent sessions reindex` rebuilds it from the logs")]
    Index {
        /// The index database.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The store's configuration is unusable (a sessions URL carrying a password, an unknown
    /// backend, ...). Nothing was opened.
    #[error("{0}")]
    Config(String),
    /// The PostgreSQL server refused or failed an operation (or could not be reached).
    #[error("PostgreSQL session store {url}: {action}: {message}")]
    Postgres {
        /// The server, as a URL without any password.
        url: String,
        /// What was being done (`cannot connect`, `cannot append`, ...).
        action: &'static str,
        /// The server's or the driver's message, with its detail and hint when given.
        message: String,
    },
    /// This process's writer lease on a session was taken over by another writer (it had expired
    /// or this process's connection was lost): nothing of the refused batch was written.
    #[error(
        "session `{id}`: this process no longer holds the session's writer lease ({holder} took it over after ours lapsed); nothing of this batch was written: resume the session to go on from what the log holds"
    )]
    LeaseLost {
        /// The session.
        id: SessionId,
        /// Who holds the lease now (`pid N on host H`), or `another writer`.
        holder: String,
    },
    /// A blocking task of the async API died (a panic inside the store).
    #[error("the session store's worker task failed: {0}")]
    Task(String),
}

impl StoreError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// Whether the error is about the caller's input (an id, an event, a fork point) rather than
    /// the store's state or the machine: the CLI exits 2 for these.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::InvalidId(_)
                | Self::NotFound { .. }
                | Self::AlreadyExists { .. }
                | Self::BadInput(_)
                | Self::BadForkPoint { .. }
                | Self::Config(_)
        )
    }
}

/// Shorthand for results of this module.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
