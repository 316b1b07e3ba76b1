//! `Task` (Claude Code's `Agent`): hands a prompt to a subagent. The agent loop supplies the
//! [`SubagentRunner`]; without one the tool says it is not available.

use std::sync::Arc;

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use serde_json::{Value, json};

use super::input::{object, opt_str, str_field};

/// What a subagent is asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubagentRequest {
    /// The task, in full.
    pub prompt: String,
    /// A short description (3-5 words).
    pub description: String,
    /// Which kind of subagent.
    pub subagent_type: String,
    /// A model to use instead of the parent's.
    pub model: Option<String>,
}

/// Runs subagents: implemented by the agent loop, which starts a child session that inherits
/// the parent's hooks and sandbox.
#[async_trait::async_trait]
pub trait SubagentRunner: Send + Sync {
    /// Runs `request` to its end and returns the subagent's final text.
    ///
    /// # Errors
    /// A [`ToolError`] when the subagent could not run or failed.
    async fn run(&self, request: SubagentRequest, ctx: &ToolContext) -> Result<String, ToolError>;
}

/// The `Task` tool.
#[derive(Clone, Default)]
pub struct Task {
    runner: Option<Arc<dyn SubagentRunner>>,
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task")
            .field("runner", &self.runner.is_some())
            .finish()
    }
}

impl Task {
    /// A Task tool that runs subagents through `runner`.
    pub fn new(runner: Arc<dyn SubagentRunner>) -> Self {
        Self {
            runner: Some(runner),
        }
    }
}

#[async_trait::async_trait]
impl Tool for Task {
    fn name(&self) -> &str {
        "Task"
    }

    fn description(&self) -> &str {
        "Hands a self-contained task to a subagent and returns its final answer."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "prompt": {"type": "string"},
                "description": {"type": "string"},
                "subagent_type": {
                    "type": "string",
                    "description": "general-purpose (the parent's tools), or Explore / Plan (read-only tools only)"
                },
                "model": {"type": "string"}
            },
            "required": ["prompt", "description", "subagent_type"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let request = SubagentRequest {
            prompt: str_field(&input, "prompt")?.to_owned(),
            description: str_field(&input, "description")?.to_owned(),
            subagent_type: str_field(&input, "subagent_type")?.to_owned(),
            model: opt_str(&input, "model")?.map(str::to_owned),
        };
        let Some(runner) = &self.runner else {
            return Err(ToolError::NotSupported(
                "subagents need the agent loop, which this host does not run (`agent tool` runs one tool alone)".into(),
            ));
        };
        runner.run(request, ctx).await.map(ToolOutput::text)
    }
}
