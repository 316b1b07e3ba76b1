//! Durable, event-sourced sessions for the agent runtime.
//!
//! A session is the append-only log of everything that happened in it (agent-core
//! [`Event`](agent_core::events::Event)s, one JSON line each). This crate keeps those logs:
//!
//! - [`store`]: the session store: one directory per session with its `events.jsonl`, a SQLite
//!   index for listing and search (always rebuildable from the logs), one writer per session,
//!   crash-safe appends, tail reads that do not touch the rest of the log, fork, export and
//!   import. [`store::SessionBackend`] is the boundary the agent loop talks to.
//! - [`recovery`]: how a run picks up an earlier session: by id, the most recent one for the
//!   working directory, and fork + resume-at, in that order when combined.
//!
//! - [`workspace`]: the shadow workspace: a real folder copied into a shadow tree the tools
//!   work in, its change set reviewed as diffs, then committed to the real folder all or
//!   nothing (docs/workspace.md).
//!
//! - [`tools`]: the built-in tools (Read, Write, Edit, MultiEdit, Glob, Grep, TodoWrite, Task),
//!   confined to the workspace, and the executor that runs a call through the gate
//!   (docs/tools.md).
//!
//! - [`agent`]: the agent loop: prompt → provider (agent-providers) → tool calls through hooks,
//!   permissions and the sandbox → results, until the model stops; context compaction,
//!   subagents, model-evaluated hooks; every step logged, every run resumable (docs/agent.md);
//!   [`agent::SystemPrompt`] states what the model should know of where it works.
//!
//! - [`memory`]: project memory: the `AGENTS.md` / `CLAUDE.md` files of the user and of the
//!   project, found as codex and Claude Code find them, for the system prompt (docs/agent.md).
//!
//! docs/sessions.md describes the layout, durability, locking, recovery and formats.

pub mod agent;
pub mod memory;
pub mod recovery;
pub mod store;
pub mod tools;
pub mod workspace;
