//! The MCP client of the agent runtime: tools of Model Context Protocol servers as agent-core
//! [`Tool`](agent_core::tools::Tool)s.
//!
//! The model:
//! 1. **Servers come from configuration**: the `mcpServers` object of Claude Code's `.mcp.json`
//!    (or a settings file), parsed by [`McpConfig`]: stdio servers (`command`, `args`, `env`,
//!    `cwd`) and streamable HTTP servers (`"type": "http"`, `url`, `headers`), with `${VAR}` and
//!    `${VAR:-default}` expansion. [`McpConfig::parse`] keeps the well-formed servers and
//!    reports each malformed one (an unset variable, the unsupported `"type": "sse"`) as a
//!    [`SkippedServer`], so one bad entry does not stop the others.
//! 2. **[`McpServers::start`]** starts every server concurrently (each within
//!    [`McpOptions::startup_timeout`]), runs the MCP handshake and `tools/list`. A server that
//!    fails is reported in [`McpServers::failures`] and left out; the others still start.
//! 3. **Each tool becomes an [`McpTool`] named `mcp__<server>__<tool>`**, as Claude Code names
//!    them, so permission rules like `mcp__github` (the whole server), `mcp__github__get_issue`
//!    or `mcp__github__get_*` apply. Its kind is `Other`; it is read-only only when the server
//!    annotates it `readOnlyHint: true`.
//! 4. **A tool runs only through the runtime's gate**: like every tool, an MCP tool is called
//!    after PreToolUse hooks and the permission engine
//!    ([`agent_core::hooks::check_tool_call`]) allowed it; [`McpTool::tool_call`] builds the
//!    [`ToolCall`](agent_core::permissions::ToolCall) to check. Each call has
//!    [`McpOptions::call_timeout`] and honours the context's cancellation flag.
//! 5. **[`McpServers::shutdown`]** closes every connection and ends stdio servers' processes
//!    (each server runs in a process group of its own; what is left gets SIGTERM, then SIGKILL
//!    after [`STOP_GRACE`]); dropping [`McpServers`] does so too, and [`end_all_blocking`] ends
//!    them all before a `std::process::exit` (a stdio server never outlives the runtime).
//!
//! ```no_run
//! use agent_mcp::{McpConfig, McpOptions, McpServers};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = McpConfig::load(".mcp.json")?;
//! let mut servers = McpServers::start(&config, McpOptions::default()).await;
//! for failure in servers.failures() {
//!     eprintln!("{failure}");
//! }
//! for tool in servers.tools() {
//!     // Register with the session's tool registry; calls go through hooks and permissions.
//!     println!("{}: {}", tool.name(), tool.description());
//! }
//! servers.shutdown().await;
//! # Ok(())
//! # }
//! ```

pub mod client;
pub mod config;
mod failure;
pub mod manager;
pub mod processes;
pub mod tool;

pub use client::{McpError, McpServer, ServerTool};
pub use config::{
    ConfigError, HttpServer, McpConfig, PartialConfig, ServerConfig, SkippedServer, StdioServer,
};
pub use manager::{CALL_TIMEOUT_VAR, McpOptions, McpServers, STARTUP_TIMEOUT_VAR, StartFailure};
pub use processes::{STOP_GRACE, end_all_blocking};
pub use tool::McpTool;
