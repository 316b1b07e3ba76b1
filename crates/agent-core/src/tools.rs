//! The [`Tool`] trait: what the model can call, and how a call is described to the rest of the
//! runtime.
//!
//! A tool never runs on its own: the runtime takes a call through
//! `ToolCall → hooks → PermissionGate → sandbox → Tool::call → ToolResult`, and there is no other
//! path. The tool itself only declares what it is ([`ToolKind`], [`Tool::is_read_only`], an input
//! schema) and does the work inside the [`ToolContext`] it is given.
//!
//! ```
//! use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
//! use serde_json::{json, Value};
//!
//! struct Echo;
//!
//! #[async_trait::async_trait]
//! impl Tool for Echo {
//!     fn name(&self) -> &str { "Echo" }
//!     fn description(&self) -> &str { "Returns its `text` input." }
//!     fn input_schema(&self) -> Value {
//!         json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
//!     }
//!     fn kind(&self) -> ToolKind { ToolKind::Other }
//!     async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
//!         let text = input.get("text").and_then(Value::as_str)
//!             .ok_or_else(|| ToolError::invalid_input("`text` must be a string"))?;
//!         Ok(ToolOutput::text(text))
//!     }
//! }
//! # let ctx = ToolContext::new("/tmp", "session-1", "toolu_1");
//! # let out = futures_lite_block_on(Echo.call(json!({"text": "hi"}), &ctx));
//! # fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! # assert_eq!(out.unwrap().output, json!("hi"));
//! ```

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::modes::PermissionMode;
use crate::permissions::Containment;

/// What a tool does, as far as permissions are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// Reads files or state without changing anything (Read, Glob, Grep).
    Read,
    /// Changes files (Edit, Write, NotebookEdit).
    Edit,
    /// Runs commands (Bash).
    Execute,
    /// Talks to the network (WebFetch, WebSearch).
    Network,
    /// Anything else (TodoWrite, MCP tools, ...).
    Other,
}

impl ToolKind {
    /// The lowercase name used in settings and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Edit => "edit",
            Self::Execute => "execute",
            Self::Network => "network",
            Self::Other => "other",
        }
    }

    /// The kind of a built-in tool by its canonical name, or `None` for tools this crate does
    /// not know (their kind comes from the [`Tool`] itself).
    pub fn of_builtin(name: &str) -> Option<Self> {
        Some(match name {
            "Read" | "Glob" | "Grep" | "LS" | "NotebookRead" => Self::Read,
            "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => Self::Edit,
            "Bash" | "PowerShell" => Self::Execute,
            "WebFetch" | "WebSearch" => Self::Network,
            "TodoWrite" | "Agent" | "Task" | "Skill" => Self::Other,
            _ => return None,
        })
    }
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A cheap, cloneable flag that tells a running tool its call was cancelled.
#[derive(Clone, Debug, Default)]
pub struct CancellationFlag(Arc<AtomicBool>);

impl CancellationFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag; every clone sees it.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the call was cancelled. Long-running tools check this between steps.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What a tool may know about the call it serves.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolContext {
    /// The working directory of the session (the shadow workspace root when one is active).
    pub cwd: PathBuf,
    /// Extra directories the session may work in, besides `cwd`.
    pub additional_dirs: Vec<PathBuf>,
    /// The session this call belongs to.
    pub session_id: String,
    /// The id of this call (`tool.use`'s `toolUseId`).
    pub tool_use_id: String,
    /// The permission mode the call was approved under.
    pub permission_mode: PermissionMode,
    /// Set when the call is cancelled.
    pub cancellation: CancellationFlag,
    /// What the call was approved to do when the approval was a prediction (the read-only
    /// set, an allow rule, a mode): the tool enforces it and says so in its result. `None`:
    /// approved as written by a person, a hook or a policy.
    pub containment: Option<Containment>,
    /// The command's text and the one parse the permission decision was made on
    /// ([`PermissionDecision::prepared`]): a tool that reads shell text uses it when its
    /// input's text is that text.
    ///
    /// [`PermissionDecision::prepared`]: crate::permissions::PermissionDecision::prepared
    pub prepared: Option<Arc<crate::shell::Prepared>>,
    /// The real folder `cwd` is a shadow of, when it is one ([`crate::view`]): a tool that
    /// shows a file system of its own (the WASI shell) shows the shadow at the real folder's
    /// path, so the paths it prints and takes are the user's.
    pub view: Option<crate::view::PathView>,
}

impl ToolContext {
    /// A context with no additional directories, mode `default`, and a fresh cancellation flag.
    pub fn new(
        cwd: impl Into<PathBuf>,
        session_id: impl Into<String>,
        tool_use_id: impl Into<String>,
    ) -> Self {
        Self {
            cwd: cwd.into(),
            additional_dirs: Vec::new(),
            session_id: session_id.into(),
            tool_use_id: tool_use_id.into(),
            permission_mode: PermissionMode::Default,
            cancellation: CancellationFlag::new(),
            containment: None,
            prepared: None,
            view: None,
        }
    }

    /// Sets the additional working directories.
    pub fn with_additional_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.additional_dirs = dirs;
        self
    }

    /// Sets the permission mode.
    pub fn with_permission_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = mode;
        self
    }

    /// Sets the capabilities the call was approved with ([`PermissionDecision::containment`]).
    ///
    /// [`PermissionDecision::containment`]: crate::permissions::PermissionDecision::containment
    pub fn with_containment(mut self, containment: Option<Containment>) -> Self {
        self.containment = containment;
        self
    }

    /// Sets the parse the call was decided on ([`ToolContext::prepared`]).
    pub fn with_prepared(mut self, prepared: Option<Arc<crate::shell::Prepared>>) -> Self {
        self.prepared = prepared;
        self
    }

    /// Sets the real folder `cwd` is a shadow of.
    pub fn with_view(mut self, view: Option<crate::view::PathView>) -> Self {
        self.view = view;
        self
    }
}

/// What a tool returns on success (and, with `is_error`, on a failure the model should see as
/// an ordinary result rather than an error of the runtime).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// Text or structured JSON for the model.
    pub output: Value,
    /// Whether the tool reports a failure (for example a command that exited non-zero).
    #[serde(default)]
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            output: Value::String(text.into()),
            is_error: false,
        }
    }

    /// A successful structured result.
    pub fn json(value: Value) -> Self {
        Self {
            output: value,
            is_error: false,
        }
    }

    /// A result the tool itself marks as failed.
    pub fn failed(text: impl Into<String>) -> Self {
        Self {
            output: Value::String(text.into()),
            is_error: true,
        }
    }
}

/// Why a tool call did not produce a [`ToolOutput`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// Occurs when the input does not match the tool's schema or meaning.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Occurs when the sandbox refused an operation inside the call.
    #[error("blocked by the sandbox: {0}")]
    Sandbox(String),
    /// Occurs when the call was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// Occurs when the call ran out of time.
    #[error("timed out after {0} ms")]
    Timeout(u64),
    /// Occurs when the tool, or a feature it was asked for, is not implemented by this host.
    #[error("not supported: {0}")]
    NotSupported(String),
    /// Occurs when the tool failed while doing its work.
    #[error("{0}")]
    Execution(String),
}

impl ToolError {
    /// The same error with its message passed through `f` (a host showing paths another
    /// way, `crate::view`).
    #[must_use]
    pub fn map_text(self, f: impl Fn(&str) -> String) -> Self {
        match self {
            Self::InvalidInput(m) => Self::InvalidInput(f(&m)),
            Self::Sandbox(m) => Self::Sandbox(f(&m)),
            Self::NotSupported(m) => Self::NotSupported(f(&m)),
            Self::Execution(m) => Self::Execution(f(&m)),
            Self::Cancelled => Self::Cancelled,
            Self::Timeout(ms) => Self::Timeout(ms),
        }
    }

    /// An [`ToolError::InvalidInput`] with the given message.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::InvalidInput(message.into())
    }

    /// The machine-readable class written to `tool.result`'s `errorType`.
    pub fn error_type(&self) -> &'static str {
        match self {
            Self::InvalidInput(_) => "invalid_input",
            Self::Sandbox(_) => "sandbox_denied",
            Self::Cancelled => "cancelled",
            Self::Timeout(_) => "timeout",
            Self::NotSupported(_) => "not_supported",
            Self::Execution(_) => "execution_error",
        }
    }
}

/// A capability the model can call.
///
/// Implementations describe themselves (name, description, JSON schema, kind) and do their work
/// in [`Tool::call`]. They are shared across calls and threads, so they take `&self`.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// The canonical name, e.g. `Read`; permission rules match on it.
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The JSON schema of the input object.
    fn input_schema(&self) -> Value;

    /// What the tool does, for the permission engine.
    fn kind(&self) -> ToolKind;

    /// Whether the tool never changes anything. Defaults to `kind() == Read`.
    fn is_read_only(&self) -> bool {
        self.kind() == ToolKind::Read
    }

    /// Runs the call.
    ///
    /// # Errors
    /// A [`ToolError`] when the call could not produce an output.
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_kinds() {
        assert_eq!(ToolKind::of_builtin("Read"), Some(ToolKind::Read));
        assert_eq!(ToolKind::of_builtin("Write"), Some(ToolKind::Edit));
        assert_eq!(ToolKind::of_builtin("Bash"), Some(ToolKind::Execute));
        assert_eq!(ToolKind::of_builtin("WebFetch"), Some(ToolKind::Network));
        assert_eq!(ToolKind::of_builtin("mcp__x__y"), None);
    }

    #[test]
    fn cancellation_is_shared_by_clones() {
        let flag = CancellationFlag::new();
        let clone = flag.clone();
        assert!(!clone.is_cancelled());
        flag.cancel();
        assert!(clone.is_cancelled());
    }

    #[test]
    fn error_types_are_stable() {
        assert_eq!(ToolError::Cancelled.error_type(), "cancelled");
        assert_eq!(ToolError::Timeout(5).error_type(), "timeout");
        assert_eq!(
            ToolError::Sandbox("x".into()).to_string(),
            "blocked by the sandbox: x"
        );
    }
}
