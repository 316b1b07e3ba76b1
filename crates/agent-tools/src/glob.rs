//! `Glob`: files matching a glob pattern (`**/*.rs`, `src/**/mod.{rs,toml}`), newest first,
//! gitignore-aware, at most 100 listed.

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use agent_sandbox::caps::OutputCaps;
use globset::GlobBuilder;
use serde_json::{Value, json};

use super::files::Confined;
use super::input::{object, opt_str, str_field};
use super::search::{base, by_mtime, files};

/// The `Glob` tool.
#[derive(Clone, Debug, Default)]
pub struct Glob {
    caps: OutputCaps,
}

#[async_trait::async_trait]
impl Tool for Glob {
    fn name(&self) -> &str {
        "Glob"
    }

    fn description(&self) -> &str {
        "Finds files by glob pattern (`**/*.rs`, `src/*.{ts,tsx}`) under `path` (default: the \
         workspace root), newest first; ignored files (.gitignore, .agentignore) are left out."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The glob, relative to `path`"},
                "path": {"type": "string", "description": "The directory to search (default: the workspace root)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let pattern = str_field(&input, "pattern")?;
        let fs = Confined::for_call(ctx)?;
        let base = base(&fs, opt_str(&input, "path")?)?;
        let glob = GlobBuilder::new(pattern.trim_start_matches("./"))
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::invalid_input(format!("`pattern` is not a valid glob: {e}")))?
            .compile_matcher();
        let mut hits: Vec<_> = files(&base)
            .into_iter()
            .filter(|h| glob.is_match(&h.rel))
            .collect();
        if hits.is_empty() {
            return Ok(ToolOutput::text("No files found"));
        }
        by_mtime(&mut hits);
        let (shown, omitted) = self.caps.cap_listing(hits);
        let mut out = shown
            .iter()
            .map(|h| h.path.display().to_string())
            .collect::<Vec<_>>()
            .join("\n");
        if omitted > 0 {
            out.push_str(&format!(
                "\n… ({omitted} more; narrow the pattern or the path)"
            ));
        }
        Ok(ToolOutput::text(out))
    }
}
