//! `Write`: creates or replaces a file. Replacing a file requires that the agent read it in
//! this session and that it did not change since (so an edit made by someone else is never
//! silently overwritten).

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use serde_json::{Value, json};

use super::files::Confined;
use super::input::{object, str_field};
use super::state::{Seen, ToolState};

/// The `Write` tool.
#[derive(Clone, Debug, Default)]
pub struct Write {
    state: ToolState,
}

impl Write {
    /// A Write tool sharing `state` with the other tools of the session.
    pub fn new(state: ToolState) -> Self {
        Self { state }
    }
}

/// Refuses a change to an existing file the agent has not read, or that changed since.
pub fn check_fresh(
    state: &ToolState,
    session: &str,
    path: &std::path::Path,
) -> Result<(), ToolError> {
    let Some(now) = Seen::of(path) else {
        return Ok(());
    };
    match state.seen(session, path) {
        None => Err(ToolError::Execution(format!(
            "{} exists and has not been read in this session; Read it first, then change it",
            path.display()
        ))),
        Some(then) if then != now => Err(ToolError::Execution(format!(
            "{} changed since it was last read (by someone or something else); Read it again before changing it",
            path.display()
        ))),
        Some(_) => Ok(()),
    }
}

#[async_trait::async_trait]
impl Tool for Write {
    fn name(&self) -> &str {
        "Write"
    }

    fn description(&self) -> &str {
        "Writes a file of the workspace (creating parent directories). An existing file must have \
         been read first in this session, and not changed since."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The file (absolute, or relative to the workspace root)"},
                "content": {"type": "string", "description": "The whole new content"}
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let file = str_field(&input, "file_path")?;
        let content = str_field(&input, "content")?;
        let fs = Confined::for_call(ctx)?;
        let path = fs.path(file);
        fs.check_write(&path)?;
        if path.is_dir() {
            return Err(ToolError::Execution(format!(
                "{} is a directory; name a file",
                path.display()
            )));
        }
        let existed = path.exists();
        check_fresh(&self.state, &ctx.session_id, &path)?;
        fs.write(&path, content.as_bytes())?;
        self.state.saw(&ctx.session_id, &path);
        Ok(ToolOutput::json(json!({
            "type": if existed { "update" } else { "create" },
            "filePath": path,
            "bytes": content.len(),
            "success": true,
        })))
    }
}
