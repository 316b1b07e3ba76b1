//! The built-in tools of the agent runtime, and the executor that runs a tool call through the
//! gate.
//!
//! The tools are agent-core [`Tool`]s with Claude Code's input shapes: [`Read`], [`Write`],
//! [`Edit`], [`MultiEdit`], [`Glob`], [`Grep`], [`TodoWrite`], [`Task`], and [`Bash`] and
//! [`WebFetch`] (built separately: they need a backend or the network settings). They
//! work inside the call's workspace root (`ToolContext::cwd`, the shadow workspace when one
//! is active) and additional directories only, through agent-sandbox's `SandboxedFs`
//! ([`files`]), with agent-sandbox's output caps. [`ToolState`] is what they remember within a
//! session (files read, for stale-read detection; the todo list). [`executor`] runs a call
//! through the gate: hooks, permissions, the tool, PostToolUse hooks.
//!
//! ```
//! use agent_core::tools::ToolContext;
//! use agent_tools::{ToolState, builtin_tools};
//! # let dir = tempfile::tempdir().unwrap();
//! # std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
//! # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let tools = builtin_tools(&ToolState::new());
//! let read = tools.iter().find(|t| t.name() == "Read").unwrap();
//! let ctx = ToolContext::new(dir.path(), "session-1", "toolu_1");
//! let out = rt.block_on(read.call(serde_json::json!({"file_path": "a.txt"}), &ctx)).unwrap();
//! assert_eq!(out.output, "     1\thello\n");
//! ```
//!
//! The crate sits between the shadow workspace (agent-workspace: Glob and Grep walk with its
//! ignore rules) and the agent loop (agent-loop: it hands the tools to the model and runs each
//! call through [`executor`]). With the `wasi` feature the Bash tool gains agent-wasi's
//! WebAssembly backend (`WasiBackend`).
//!
//! docs/tools.md describes each tool.

pub mod bash;
mod edit;
pub mod executor;
pub mod files;
mod glob;
mod grep;
mod input;
mod markdown;
mod read;
mod search;
mod state;
mod task;
mod todo;
mod web_fetch;
mod write;

use std::sync::Arc;

use agent_core::tools::Tool;

#[cfg(feature = "wasi")]
pub use bash::WasiBackend;
pub use bash::{
    Bash, BashBackend, Choice, HostCommandPolicy, NativeBackend, RoutedBackend, Unsandboxed,
};
pub use edit::{Edit, MultiEdit};
pub use glob::Glob;
pub use grep::Grep;
pub use markdown::html_to_markdown;
pub use read::{Read, media_type};
pub use state::{Seen, Todo, ToolState};
pub use task::{SubagentRequest, SubagentRunner, Task};
pub use todo::TodoWrite;
pub use web_fetch::WebFetch;
pub use write::Write;

/// The names of the built-in tools [`builtin_tools`] returns, in its order (Bash is made with
/// [`Bash::new`]).
pub const BUILTIN_NAMES: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Glob",
    "Grep",
    "TodoWrite",
    "Task",
];

/// Every built-in tool, sharing `state` (Task without a subagent runner).
pub fn builtin_tools(state: &ToolState) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Read::new(state.clone())),
        Arc::new(Write::new(state.clone())),
        Arc::new(Edit::new(state.clone())),
        Arc::new(MultiEdit::new(state.clone())),
        Arc::new(Glob::default()),
        Arc::new(Grep::default()),
        Arc::new(TodoWrite::new(state.clone())),
        Arc::new(Task::default()),
    ]
}
