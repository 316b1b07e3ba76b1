//! The agent loop of the agent runtime: a model-driven tool loop that is safe, resumable and
//! streamed. It is the crate that puts the others together: a provider (agent-providers) for
//! the model, the built-in tools and their executor (agent-tools), the session store
//! (agent-store) for the log every step is written to, and agent-core's hooks and permission
//! engine for the gate each call goes through.
//!
//! An [`Agent`] owns one session. [`Agent::prompt`] (or the streaming [`Agent::query`]) takes
//! a prompt through:
//!
//! 1. `UserPromptSubmit` hooks (a block erases the prompt; their context reaches the model);
//! 2. the provider call, streamed ([`AgentEvent::TextDelta`] as bytes arrive), after the context
//!    check: at 83.5 % of the model's window the conversation is compacted first (PreCompact
//!    hooks, a summarising call without tools, a `compaction` event, PostCompact hooks);
//! 3. each tool call through the one gate: PreToolUse hooks → permission engine (asks go to
//!    PermissionRequest hooks, then the host's [`Prompter`]) → the tool, sandboxed → PostToolUse
//!    hooks; read-only calls of one answer run concurrently, the others one at a time; a result
//!    over 80 % of the window is replaced by an error saying so;
//! 4. back to the provider until the model stops; `Stop` hooks may send it back to work; when
//!    `max_turns` calls are used up, one last call without tools asks for a summary;
//! 5. a `result` event.
//!
//! Every step is appended to the session log as it happens, so an interrupted run
//! ([`Interrupt`], Ctrl-C in the CLI: running tools are cancelled and their calls answered
//! `cancelled`) or a crashed process leaves a log that resumes: calls without a result are
//! answered with an `interrupted` result when the session is resumed.
//! [`AgentOptions::resume`] picks an earlier session (by id, the most recent, fork, resume-at);
//! a resumed run restores the session's model and permission mode, except `plan` and
//! `bypassPermissions`, which are never restored.
//!
//! The `Task` tool starts subagents: each runs in a session of its own (tagged `subagent`,
//! linked from the parent by `subagent.start` / `subagent.stop`), with the parent's tools (no
//! `Task`), permission engine, hooks and sandbox; its hooks see `agent_id` and `agent_type`, and
//! its end fires `SubagentStop`.
//!
//! [`SystemPrompt`] states what the model should know of where it works; [`memory`] finds the
//! project memory for it (the `AGENTS.md` / `CLAUDE.md` files of the user and of the project,
//! found as codex and Claude Code find them).
//!
//! ```
//! use std::sync::Arc;
//! use agent_providers::{ScriptedProvider, ScriptedTurn};
//! use agent_loop::{Agent, AgentOptions};
//! use agent_store::{SessionStore, StoreOptions};
//! use agent_tools::{ToolState, builtin_tools};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let project = tempfile::tempdir()?;
//! std::fs::write(project.path().join("notes.txt"), "hello\n")?;
//! let sessions = tempfile::tempdir()?;
//! let store = Arc::new(SessionStore::open(StoreOptions::new(sessions.path())).await?);
//! let provider = Arc::new(ScriptedProvider::new(vec![
//!     ScriptedTurn::tools(None, vec![("t1", "Read", json!({"file_path": "notes.txt"}))]),
//!     ScriptedTurn::text("The file says hello."),
//! ]));
//! let mut agent = Agent::builder(provider, store, project.path())
//!     .options(AgentOptions::new("scripted"))
//!     .tools(builtin_tools(&ToolState::new()))
//!     .start()
//!     .await?;
//! let result = agent.prompt("What does notes.txt say?").await?;
//! assert_eq!(result.final_text, "The file says hello.");
//! assert_eq!(result.stop_reason, "end_turn");
//! agent.close().await?;
//! # Ok(()) }
//! ```
//!
//! docs/agent.md describes the loop; `examples/` holds a minimal agent, a resumed session, a
//! code reviewer and the system prompt.

mod agent;
mod compaction;
mod context;
mod error;
mod events;
mod hook_extension;
mod hooks;
pub mod memory;
mod model_call;
mod options;
mod prompt;
mod questions;
mod result;
mod run;
mod runner;
mod start;
mod subagent;
mod tool_calls;

pub use agent::{Agent, AgentBuilder};
pub use context::{History, SUMMARY_PREFIX, estimate_tokens, output_text};
pub use error::AgentError;
pub use events::{AgentEvent, Interrupt};
pub use hook_extension::ModelHooks;
pub use hooks::MAX_INJECTED_CHARS;
pub use options::{AgentOptions, COMPACT_AT, TOOL_RESULT_BUDGET};
pub use prompt::{DEFAULT_SYSTEM_PROMPT, SystemPrompt};
pub use questions::PolicyPrompter;
pub use result::{RunResult, RunStopReason};
pub use subagent::SUBAGENT_TYPES;
pub use tool_calls::CANCEL_GRACE;
