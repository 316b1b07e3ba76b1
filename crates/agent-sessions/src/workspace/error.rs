//! Why a workspace operation failed.

use std::path::PathBuf;

use super::commit::Conflict;

/// Occurs when a shadow-workspace operation cannot be carried out. Every message says what
/// was wrong and what to do; nothing is half-applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// Occurs when a file or directory cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Occurs when the input is invalid (a missing folder, a shadow inside the real folder, ...).
    #[error("{0}")]
    Invalid(String),
    /// Occurs when no workspace exists for a folder.
    #[error(
        "no shadow workspace for {0}; `agent workspace import DIR` creates one (or name it with --workspace)"
    )]
    NotFound(PathBuf),
    /// Occurs when a workspace already exists for a folder.
    #[error(
        "{real} already has a shadow workspace at {shadow}; `agent workspace status` shows its changes, `agent workspace discard` drops them"
    )]
    Exists {
        /// The real folder.
        real: PathBuf,
        /// Its existing shadow.
        shadow: PathBuf,
    },
    /// Occurs when files changed in the real folder since import; nothing was applied.
    #[error("{} path(s) changed in the real folder since import: {}; nothing was applied (review them, then commit with --force PATH for each, or `agent workspace refresh`)", .0.len(), list(.0))]
    Conflicts(Vec<Conflict>),
    /// Occurs when the commit failed part-way; everything it had applied was rolled back.
    #[error(
        "commit failed at {path}: {why}; every change was rolled back, the real folder is as it was"
    )]
    RolledBack {
        /// The path being applied when it failed.
        path: String,
        /// What failed.
        why: String,
    },
    /// Occurs when the saved workspace state cannot be read.
    #[error("workspace state {path} is unreadable: {why}; `agent workspace discard` rebuilds it")]
    State {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

fn list(conflicts: &[Conflict]) -> String {
    conflicts
        .iter()
        .map(|c| format!("{} ({})", c.path, c.why))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Wraps an I/O error with its path.
pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> WorkspaceError {
    let path = path.into();
    move |source| WorkspaceError::Io { path, source }
}
