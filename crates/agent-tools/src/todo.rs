//! `TodoWrite`: the agent's todo list for the session, replaced whole on each call.

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use serde_json::{Value, json};

use super::input::object;
use super::state::{Todo, ToolState};

/// The `TodoWrite` tool.
#[derive(Clone, Debug, Default)]
pub struct TodoWrite {
    state: ToolState,
}

impl TodoWrite {
    /// A TodoWrite tool keeping its list in `state`.
    pub fn new(state: ToolState) -> Self {
        Self { state }
    }
}

#[async_trait::async_trait]
impl Tool for TodoWrite {
    fn name(&self) -> &str {
        "TodoWrite"
    }

    fn description(&self) -> &str {
        "Replaces the session's todo list. Each item: content, status (pending, in_progress, \
         completed), and activeForm (what is shown while it runs). Keep one item in_progress."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"todos": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "minLength": 1},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                    "activeForm": {"type": "string"}
                },
                "required": ["content", "status"]
            }}},
            "required": ["todos"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let Some(list) = input.get("todos") else {
            return Err(ToolError::invalid_input("`todos` is required (an array)"));
        };
        let todos: Vec<Todo> = serde_json::from_value(list.clone()).map_err(|e| {
            ToolError::invalid_input(format!(
                "`todos` must be an array of {{content, status, activeForm?}}: {e}"
            ))
        })?;
        for (i, t) in todos.iter().enumerate() {
            if t.content.trim().is_empty() {
                return Err(ToolError::invalid_input(format!(
                    "todo {} has no content",
                    i + 1
                )));
            }
            if !matches!(t.status.as_str(), "pending" | "in_progress" | "completed") {
                return Err(ToolError::invalid_input(format!(
                    "todo {} has status `{}`; use pending, in_progress or completed",
                    i + 1,
                    t.status
                )));
            }
        }
        let old = self.state.todos(&ctx.session_id);
        self.state.set_todos(&ctx.session_id, todos.clone());
        Ok(ToolOutput::json(
            json!({"oldTodos": old, "newTodos": todos}),
        ))
    }
}
