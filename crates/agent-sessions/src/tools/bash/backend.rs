//! The seam between the Bash tool and what runs the command: the host's shell under the outer
//! sandbox ([`super::native::NativeBackend`]) or agent-wasi's `Shell(script)` over the installed
//! bundles ([`super::wasi::WasiBackend`], with the `wasi` feature).

use std::path::PathBuf;
use std::time::Duration;

use agent_core::tools::ToolError;

/// One command to run.
#[derive(Clone, Debug)]
pub struct BashRequest {
    /// The shell text.
    pub command: String,
    /// The directory it runs in (the workspace root).
    pub cwd: PathBuf,
    /// How long it may run; its whole process group is killed after.
    pub timeout: Duration,
}

/// How it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BashOutcome {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit code, when the command exited by itself.
    pub exit_code: Option<i32>,
    /// Whether it was stopped (timeout, output limit, signal).
    pub interrupted: bool,
    /// What stopped it, when something did.
    pub stopped_by: Option<String>,
    /// One audit record per command the backend ran (argv, exit status, duration, bytes),
    /// when it knows them (the WASI backend does); they go into the tool's result.
    pub commands: Vec<serde_json::Value>,
}

/// Runs Bash commands.
pub trait BashBackend: Send + Sync {
    /// `native` or `wasi`.
    fn name(&self) -> &'static str;

    /// Runs `request` to its end (or its timeout). Blocking: the tool calls it on a blocking
    /// thread.
    ///
    /// # Errors
    /// A [`ToolError`] when the command could not be started (the sandbox is unavailable, ...).
    fn run(&self, request: &BashRequest) -> Result<BashOutcome, ToolError>;
}
