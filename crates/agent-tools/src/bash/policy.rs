//! [`HostCommandPolicy`]: the permission engine asks, every time, before a Bash command runs on
//! the host without the OS sandbox. Installed as a [`PermissionPolicy`] (step 5), it comes
//! before hooks' allows, the mode, allow rules and session grants, so none of them can approve
//! such a command silently; in `dontAsk`, or with nobody to ask, the command is refused.

use std::sync::Arc;

use agent_core::permissions::{PermissionPolicy, PolicyVerdict, ToolCall};

use super::backend::BashBackend;

/// Asks before a Bash command the backend would run unsandboxed (see the module docs).
pub struct HostCommandPolicy {
    backend: Arc<dyn BashBackend>,
}

impl HostCommandPolicy {
    /// A policy over the Bash tool's `backend`.
    pub fn new(backend: Arc<dyn BashBackend>) -> Self {
        Self { backend }
    }
}

impl PermissionPolicy for HostCommandPolicy {
    fn evaluate(&self, call: &ToolCall) -> Option<PolicyVerdict> {
        if call.tool_name != "Bash" {
            return None;
        }
        let command = call.input.get("command")?.as_str()?;
        self.backend.unsandboxed(command).map(PolicyVerdict::Ask)
    }

    fn name(&self) -> &str {
        "unsandboxed host commands"
    }
}
