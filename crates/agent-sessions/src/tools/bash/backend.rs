//! The seam between the Bash tool and what runs the command: the host's shell
//! ([`super::native::NativeBackend`]) today, agent-wasi's `Shell(script)` once it lands
//! ([`WasiBackend`], which says so until then).

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

/// The WASI backend: agent-wasi's `Shell(script)` over the signed core-utils bundle. Not built
/// yet; every call says so.
#[derive(Clone, Copy, Debug, Default)]
pub struct WasiBackend;

impl BashBackend for WasiBackend {
    fn name(&self) -> &'static str {
        "wasi"
    }

    fn run(&self, _request: &BashRequest) -> Result<BashOutcome, ToolError> {
        Err(ToolError::NotSupported(
            "the `wasi` Bash backend needs agent-wasi (the in-process wasmtime runner and its signed core-utils bundle), which is not built yet; use the `native` backend (settings: \"bash\": {\"backend\": \"native\"})".into(),
        ))
    }
}
