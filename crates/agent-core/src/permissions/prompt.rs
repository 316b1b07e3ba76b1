//! Step 9's inputs: what the engine asks, and who answers. The CLI answers on the terminal; an
//! SDK host supplies an async callback (the equivalent of the Agent SDK's `canUseTool`); the
//! hook system answers through `PermissionRequest` hooks.

use serde::Serialize;
use serde_json::Value;

use super::grants::GrantScope;
use crate::modes::PermissionMode;

/// What a PreToolUse hook decided about a call (step 1 and step 6). The hook system builds this;
/// embedders without hooks pass [`PreToolUseOutcome::default()`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PreToolUseOutcome {
    /// The merged decision, if any hook gave one.
    pub decision: Option<HookDecision>,
    /// The reason the hook gave.
    pub reason: Option<String>,
    /// A replacement for the whole tool input; it goes through every later step.
    pub updated_input: Option<Value>,
}

/// A PreToolUse hook's permission decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HookDecision {
    /// Skip the prompt; deny and ask rules, safety checks and policies still apply.
    Allow,
    /// Force a prompt.
    Ask,
    /// Refuse the call.
    Deny,
    /// Leave the decision to the host (`-p` single-call runs): treated as a prompt.
    Defer,
}

/// What the engine asks the host.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PermissionRequest {
    /// The tool.
    pub tool_name: String,
    /// The input it would run with.
    pub input: Value,
    /// Why the engine asks.
    pub reason: String,
    /// Rules that would allow the call, best first (candidates for "allow for this session").
    pub suggestions: Vec<String>,
    /// The `tool.use` id, when known.
    pub tool_use_id: Option<String>,
    /// The current mode.
    pub mode: PermissionMode,
}

/// The host's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum PromptAnswer {
    /// Run this call (optionally with a different input, re-checked against deny rules).
    AllowOnce {
        /// A replacement input.
        updated_input: Option<Value>,
    },
    /// Run it, and every later call the scope covers in this session.
    AllowForSession {
        /// What to grant.
        scope: GrantScope,
        /// A replacement input for this call.
        updated_input: Option<Value>,
    },
    /// Do not run it.
    Deny {
        /// Shown to the model.
        message: String,
        /// Stop the whole run.
        interrupt: bool,
    },
}

/// Answers permission prompts (the TTY prompt, an SDK callback).
#[async_trait::async_trait]
pub trait Prompter: Send + Sync {
    /// Asks about one call.
    async fn prompt(&self, request: &PermissionRequest) -> PromptAnswer;
}

/// Answers permission prompts before the prompter is asked (PermissionRequest hooks). `None`
/// means no opinion.
#[async_trait::async_trait]
pub trait PermissionRequestHandler: Send + Sync {
    /// Looks at one request.
    async fn on_request(&self, request: &PermissionRequest) -> Option<PromptAnswer>;
}
