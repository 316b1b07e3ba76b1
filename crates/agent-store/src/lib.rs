//! The session store of the agent runtime: durable, append-only, event-sourced sessions.
//!
//! A session is the append-only log of everything that happened in it (agent-core
//! [`Event`](agent_core::events::Event)s, one JSON line each). This crate keeps those logs, and
//! nothing else: it depends on agent-core and SQLite only (no provider, sandbox, WebAssembly
//! engine or HTTP client; `cargo xtask layering` checks it), so an embedder who only wants to
//! keep, list, fork or export sessions can use it alone.
//!
//! - the store (this module): one directory per session with its `events.jsonl`, a SQLite
//!   index for listing and search (always rebuildable from the logs), one writer per session,
//!   crash-safe appends, tail reads that do not touch the rest of the log, fork, export and
//!   import. [`SessionBackend`] is the boundary the agent loop (agent-loop) talks to.
//! - [`recovery`]: how a run picks up an earlier session: by id, the most recent one for the
//!   working directory, and fork + resume-at, in that order when combined.
//!
//! # Layout
//! ```text
//! <root>/                      default $AGENT_HOME/sessions (0700)
//!   .index/index.sqlite        metadata index (SQLite, WAL), rebuilt from the logs when missing
//!                              or stale
//!   <session-id>/              one directory per session (0700)
//!     events.jsonl             the log: one agent-core event per line, append-only (0600)
//!     events.jsonl.corrupt     torn tails set aside after a crash (only if one happened)
//!     lock                     the writer lock (flock), holding the writer's pid
//! ```
//!
//! # Model
//! - The log is the truth. Metadata (title, tags, counts, parent) is folded from it; the index is
//!   a cache of that fold. Title, tags and fork parentage are themselves events
//!   (`session.title`, `session.tag`, `session.fork`).
//! - One writer per session, enforced by an exclusive lock on `lock`; readers take no lock and see
//!   every complete line, never a half-written one.
//! - An append is one `write` of whole lines, synced per batch by default ([`Durability`]).
//! - A torn last line (a crash mid-write) is skipped by readers and set aside into
//!   `events.jsonl.corrupt` by the next writer; a bad line anywhere else is an error naming it.
//! - No line is longer than [`MAX_LINE_BYTES`]: appends and imports refuse one, readers report
//!   one as corruption.
//! - `import` checks a log against every rule the store's own logs keep (seqs, ids, fork
//!   points, line size) before writing anything.
//! - `load` and `messages` with a limit read the log backwards from the end, so opening the tail
//!   of a 100,000-event session costs about what opening a small one does.
//!
//! The async [`SessionStore`] implements [`SessionBackend`], the boundary the agent loop uses;
//! [`LocalStore`] is the same store, synchronous.
//!
//! docs/sessions.md describes the layout, durability, locking, recovery and formats;
//! `examples/sessions.rs` creates a session, appends to it, reads its tail, forks and resumes it.

mod append;
mod backend;
mod create;
mod error;
mod export;
mod fork;
mod id;
mod import;
mod index;
mod local;
mod lock;
mod log;
mod manage;
mod messages;
mod metadata;
#[cfg(feature = "postgres")]
pub mod postgres;
mod read;
mod reconcile;
pub mod recovery;

pub use backend::{SessionBackend, SessionStore};
pub use create::{NewSession, git_branch};
pub use error::{Result, StoreError};
pub use export::{ExportFormat, claude_transcript};
pub use fork::{ForkAt, ForkOptions};
pub use id::{InvalidSessionId, MAX_SESSION_ID_LEN, SessionId};
pub use index::{INDEX_DIR, INDEX_FILE, ListQuery};
pub use local::{LocalStore, StoreOptions};
pub use lock::LOCK_FILE;
pub use log::{CORRUPT_FILE, Durability, LOG_FILE, MAX_LINE_BYTES, TornTail};
pub use messages::output_text;
pub use messages::{Content, Speaker, TranscriptMessage, conversation};
pub use metadata::SessionMetadata;
pub use read::{LoadRange, Loaded};
