//! Extension hooks: the handler kinds the registry cannot run itself (`prompt`, `agent`,
//! `mcp_tool`), run through a [`HookExtension`] the host provides.

use std::time::Duration;

use serde_json::{Map, Value};

use super::input::HookInput;
use super::output::HookOutput;

/// Runs handler kinds the registry cannot run itself (`prompt`, `agent`, `mcp_tool`):
/// agent-loop supplies one that asks the model. Until a host registers one for a kind,
/// configuring a hook of that kind is an error at load time.
#[async_trait::async_trait]
pub trait HookExtension: Send + Sync {
    /// Runs one hook; an `Err` is a hook failure (non-blocking unless `onFailure: "block"`).
    async fn run(&self, hook: &ExtensionHook, input: &HookInput) -> Result<HookOutput, String>;
}

/// A hook handled by a [`HookExtension`].
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionHook {
    /// `prompt`, `agent` or `mcp_tool`.
    pub kind: String,
    /// The handler object as configured (`prompt`, `model`, `server`, `tool`, ...).
    pub fields: Map<String, Value>,
    /// Its timeout.
    pub timeout: Duration,
}
