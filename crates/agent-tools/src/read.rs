//! `Read`: a text file as numbered lines (`cat -n` style), a page at a time; images and PDFs
//! reported as such; other binary files refused.

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use agent_sandbox::caps::OutputCaps;
use serde_json::{Value, json};

use super::files::Confined;
use super::input::{opt_usize, str_field};
use super::state::ToolState;

/// The `Read` tool.
#[derive(Clone, Debug, Default)]
pub struct Read {
    state: ToolState,
    caps: OutputCaps,
}

impl Read {
    /// A Read tool sharing `state` with the other tools of the session.
    pub fn new(state: ToolState) -> Self {
        Self {
            state,
            caps: OutputCaps::default(),
        }
    }
}

/// What kind of non-text file `bytes` are, by their magic numbers.
pub fn media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else if bytes.starts_with(b"%PDF-") {
        Some("application/pdf")
    } else {
        None
    }
}

#[async_trait::async_trait]
impl Tool for Read {
    fn name(&self) -> &str {
        "Read"
    }

    fn description(&self) -> &str {
        "Reads a file of the workspace. Text comes back as numbered lines (`cat -n` style), at most \
         50 KB and 2000 characters a line per call; pass `offset` (first line, 1-based) and \
         `limit` (lines) to page through long files. Images and PDFs are reported as such."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The file (absolute, or relative to the workspace root)"},
                "offset": {"type": "integer", "minimum": 1, "description": "The line to start at (1-based)"},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read"}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let file = str_field(&input, "file_path")?;
        let offset = opt_usize(&input, "offset")?.unwrap_or(1);
        if offset == 0 {
            return Err(ToolError::invalid_input(
                "`offset` is 1-based: the first line is 1",
            ));
        }
        let limit = opt_usize(&input, "limit")?;
        if limit == Some(0) {
            return Err(ToolError::invalid_input("`limit` must be at least 1"));
        }
        let fs = Confined::for_call(ctx)?;
        let path = fs.path(file);
        let bytes = fs.read(&path)?;
        self.state.saw(&ctx.session_id, &path);
        if let Some(media) = media_type(&bytes) {
            let kind = if media == "application/pdf" {
                "pdf"
            } else {
                "image"
            };
            return Ok(ToolOutput::json(json!({
                "type": kind,
                "filePath": path,
                "mediaType": media,
                "bytes": bytes.len(),
            })));
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return Err(ToolError::Execution(format!(
                "{} is a binary file (not UTF-8 text, not an image or PDF); it cannot be read as text",
                path.display()
            )));
        };
        if text.is_empty() {
            return Ok(ToolOutput::text(format!(
                "(the file {} exists but is empty)",
                path.display()
            )));
        }
        let page = self.caps.read_page(&text, offset - 1, limit);
        if page.lines == 0 {
            return Ok(ToolOutput::text(format!(
                "(the file {} has {} lines; offset {offset} is past its end)",
                path.display(),
                page.total_lines
            )));
        }
        // The numbered text stays within the read cap too: lines past it go to the next page.
        let mut out = String::with_capacity(page.text.len() + page.lines * 8);
        let mut shown = 0usize;
        for (i, line) in page.text.split('\n').enumerate() {
            let numbered = format!("{:>6}\t{line}\n", offset + i);
            if shown > 0 && out.len() + numbered.len() > self.caps.file_read_bytes {
                break;
            }
            out.push_str(&numbered);
            shown += 1;
        }
        let next_offset = if shown < page.lines {
            Some(offset - 1 + shown)
        } else {
            page.next_offset
        };
        if let Some(next) = next_offset {
            out.push_str(&format!(
                "… ({} lines in all; read on with offset={})\n",
                page.total_lines,
                next + 1
            ));
        }
        Ok(ToolOutput::text(out))
    }
}
