//! Why a workspace operation failed.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
    /// Occurs when paths the commit touches changed in the real folder since import, or exist
    /// there although the change set adds them (an ignored file, say); nothing was applied.
    #[error("{} path(s) in the real folder are not as they were at import: {}; nothing was applied (review them, then commit with --force PATH for each, or `agent workspace refresh`)", .0.len(), list(.0))]
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
    /// Occurs when the commit failed part-way and some of the changes it had applied could not
    /// be undone: those paths keep the committed version, and the real folder's previous
    /// version of each is kept in the named backup.
    #[error("commit failed at {path}: {why}; rolling back failed for {}; every other change was undone. Restore them from the backups kept under {}", unrestored_list(.unrestored), .backups.display())]
    RollbackIncomplete {
        /// The path being applied when it failed.
        path: String,
        /// What failed.
        why: String,
        /// Each path that could not be restored, with the backup of its previous version
        /// (`None` when it did not exist before: remove it) and why restoring failed.
        unrestored: Vec<Unrestored>,
        /// The directory keeping the backups (and the journal of the failed commit).
        backups: PathBuf,
    },
    /// Occurs when paths of a review changed in the shadow after it was shown: nothing was
    /// applied, since the commit would not be what was reviewed.
    #[error("{} reviewed path(s) changed in the shadow since the review: {}; nothing was applied (review the change set again, then commit)", .0.len(), .0.join(", "))]
    ChangedSinceReview(Vec<String>),
    /// Occurs when a path would be resolved through a symlink, a non-directory or a reserved
    /// name (`.agent`, `.git`), or leaves its root: nothing is read or written through it.
    #[error("{path} {why}; nothing was written there")]
    NotBeneath {
        /// The path (under the real folder or the shadow).
        path: PathBuf,
        /// What is in the way.
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

/// A path that changed in the real folder since the base: what refuses a commit
/// ([`WorkspaceError::Conflicts`]) unless forced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The path.
    pub path: String,
    /// How it differs there.
    pub why: ConflictReason,
}

/// How a path of the change set differs in the real folder from the base it was copied from.
/// Serialised (and shown) as `edited`, `deleted` or `exists`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConflictReason {
    /// Its content, kind or mode changed since the base.
    Edited,
    /// It was in the base and is gone from the real folder.
    Deleted,
    /// The change set adds it, and it exists in the real folder (whether or not ignored).
    Exists,
}

impl ConflictReason {
    /// The word for it: `edited`, `deleted`, `exists`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Edited => "edited",
            Self::Deleted => "deleted",
            Self::Exists => "exists",
        }
    }
}

impl std::fmt::Display for ConflictReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A path a failed rollback could not restore.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unrestored {
    /// The path in the real folder.
    pub path: String,
    /// The backup of its previous content (`None`: it did not exist before the commit).
    pub backup: Option<PathBuf>,
    /// Why restoring it failed.
    pub why: String,
}

fn unrestored_list(u: &[Unrestored]) -> String {
    u.iter()
        .map(|u| match &u.backup {
            Some(b) => format!("{} (backup {}: {})", u.path, b.display(), u.why),
            None => format!("{} (did not exist before; remove it: {})", u.path, u.why),
        })
        .collect::<Vec<_>>()
        .join(", ")
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
