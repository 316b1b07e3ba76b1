//! The shadow workspace of the agent runtime: the agent never touches the user's real folder.
//!
//! It stands alone: plain files, `ignore` for the ignore rules and `rustix` for the
//! beneath-the-root file operations, without the session store, providers, sandbox or a
//! WebAssembly engine (`cargo xtask layering` checks it). The built-in tools (agent-tools)
//! work in its shadow; the CLI shows its review and commits it.
//!
//! [`Workspace::import`]
//! copies it (minus ignored paths) into a shadow tree and records a base snapshot (path → size,
//! mode, mtime, sha256); every tool works in [`Workspace::shadow`]; [`Workspace::status`] and
//! [`Workspace::diff`] show the change set (added, modified, deleted, renamed, mode changes,
//! binary files); [`Workspace::review`] pins the change set down as a [`Review`] (paths,
//! kinds, content hashes) to show, and [`Workspace::commit_review`] applies exactly that review
//! to the real folder, refusing paths that changed there since import (or exist there although
//! added) and paths that changed in the shadow since the review, never half-applying, even
//! across a crash (a journal that the next [`Workspace::open`] finishes); [`Workspace::commit`]
//! reviews and commits at once; [`Workspace::discard`] drops the shadow's changes;
//! [`Workspace::refresh`] pulls real-folder changes that do not conflict.
//!
//! Ignore rules ([`filter`]): `.gitignore` and `.agentignore` files at every level; `.agent`
//! never, whatever it is; `.git` never (a Git repository's shadow gets a `.git` of its own,
//! sharing the real objects, see docs/workspace.md). Symlinks are copied as links when they
//! stay inside the tree and left out otherwise. No link is ever followed: every read and write
//! resolves its path beneath the tree's root without following any.
//!
//! ```
//! use agent_workspace::{ImportOptions, Workspace, CommitOptions};
//! # let real = tempfile::tempdir().unwrap();
//! # let state = tempfile::tempdir().unwrap();
//! std::fs::write(real.path().join("a.txt"), "one\n")?;
//! let opts = ImportOptions { state_root: state.path().into(), shadow: None };
//! let (mut ws, report) = Workspace::import(real.path(), &opts)?;
//! assert_eq!(report.files, 1);
//! std::fs::write(ws.shadow().join("a.txt"), "two\n")?;      // a tool edits the shadow
//! assert_eq!(std::fs::read_to_string(real.path().join("a.txt"))?, "one\n");
//! assert_eq!(ws.status()?.changes.len(), 1);
//! let review = ws.review()?;                                  // show review.changes(), ask
//! ws.commit_review(&review, &CommitOptions::default())?;
//! assert_eq!(std::fs::read_to_string(real.path().join("a.txt"))?, "two\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! docs/workspace.md describes the layout, the algorithms and the decisions.

mod beneath;
mod changes;
mod commit;
mod error;
pub mod filter;
mod git;
mod journal;
mod quote;
mod review;
mod root;
mod shadow;
mod snapshot;
mod state;

pub use changes::{BINARY_PREFIX, Change, ChangeKind, ChangeSet, DIFF_LIMIT, looks_binary};
pub use commit::{CommitOptions, CommitReport};
pub use error::{Conflict, ConflictReason, Unrestored, WorkspaceError};
pub use git::GitReport;
pub use journal::Recovery;
pub use quote::{quote_path, visible};
pub use review::{Review, ReviewedPath};
pub use root::import_root;
pub use shadow::{ImportOptions, ImportReport, RefreshReport, Workspace};
pub use snapshot::{Entry, EntryKind, Snapshot};
pub use state::STATE_FILE;
