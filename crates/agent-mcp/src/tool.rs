//! [`McpTool`]: one tool of an MCP server as an agent-core [`Tool`], named
//! `mcp__<server>__<tool>` as Claude Code names them, so that permission rules such as
//! `mcp__github`, `mcp__github__get_issue` or `mcp__github__get_*` apply to it.

use std::sync::Arc;
use std::time::Duration;

use agent_core::permissions::ToolCall;
use agent_core::tools::{CancellationFlag, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;
use tracing::Instrument as _;

use crate::client::{McpError, McpServer, ServerTool, arguments};

/// How often a running call looks at its [`CancellationFlag`].
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// One tool of a connected MCP server.
///
/// It runs only when the runtime calls it, after PreToolUse hooks and the permission engine;
/// [`McpTool::tool_call`] describes a call to that gate.
#[derive(Debug)]
pub struct McpTool {
    server: Arc<McpServer>,
    name: String,
    tool: ServerTool,
    call_timeout: Duration,
}

impl McpTool {
    /// The tool `tool` of `server`, with `call_timeout` for each call.
    pub fn new(server: Arc<McpServer>, tool: ServerTool, call_timeout: Duration) -> Self {
        Self {
            name: tool_name(server.name(), &tool.name),
            server,
            tool,
            call_timeout,
        }
    }

    /// The server's name.
    pub fn server_name(&self) -> &str {
        self.server.name()
    }

    /// The server's own name for the tool (what `tools/call` sends).
    pub fn server_tool_name(&self) -> &str {
        &self.tool.name
    }

    /// Whether the server marks the tool as needing a person to answer
    /// (`_meta["anthropic/requiresUserInteraction"]`).
    pub fn requires_user_interaction(&self) -> bool {
        self.tool.requires_user_interaction
    }

    /// The call to hand to the permission gate (`agent_core::hooks::check_tool_call`): the
    /// tool's name, kind, read-only flag and user-interaction flag.
    pub fn tool_call(&self, input: Value) -> ToolCall {
        ToolCall::for_tool(self, input).with_user_interaction(self.requires_user_interaction())
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(args) = arguments(input) else {
            return Err(ToolError::invalid_input(format!(
                "{}: the input must be a JSON object",
                self.name
            )));
        };
        if ctx.cancellation.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let call = self.server.call_tool(&self.tool.name, args);
        // Dropping `call` (timeout or cancellation) sends `notifications/cancelled`.
        tokio::select! {
            result = tokio::time::timeout(self.call_timeout, call) => match result {
                Ok(Ok(result)) => Ok(to_output(result)),
                Ok(Err(e)) => Err(self.execution_error(&e)),
                Err(_) => {
                    tracing::warn!(timeout_ms = millis(self.call_timeout), "MCP tool call timed out");
                    Err(ToolError::Timeout(millis(self.call_timeout)))
                }
            },
            () = cancelled(&ctx.cancellation) => Err(ToolError::Cancelled),
        }
    }

    fn execution_error(&self, e: &McpError) -> ToolError {
        let closed = if self.server.is_closed() {
            " (the server is no longer connected; restart the session to reconnect it)"
        } else {
            ""
        };
        ToolError::Execution(format!(
            "MCP tool `{}` (server `{}`, tool `{}`) failed: {e}{closed}",
            self.name,
            self.server.name(),
            self.tool.name
        ))
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.tool.description
    }

    fn input_schema(&self) -> Value {
        self.tool.input_schema.clone()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    /// True only when the server annotates the tool with `readOnlyHint: true` (a hint the server
    /// gives; permission rules still apply).
    fn is_read_only(&self) -> bool {
        self.tool.read_only_hint
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let span = tracing::info_span!(
            "mcp.tool_call",
            tool = %self.name,
            server = %self.server.name(),
            tool_use_id = %ctx.tool_use_id,
        );
        async {
            let started = std::time::Instant::now();
            let result = self.run(input, ctx).await;
            tracing::debug!(
                elapsed_ms = millis(started.elapsed()),
                ok = result.is_ok(),
                is_error = result.as_ref().is_ok_and(|o| o.is_error),
                "MCP tool call finished"
            );
            result
        }
        .instrument(span)
        .await
    }
}

/// `mcp__<server>__<tool>`, with characters outside `[A-Za-z0-9_-]` in the tool's name replaced
/// by `_` (model APIs accept only those in tool names).
pub fn tool_name(server: &str, tool: &str) -> String {
    let tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("mcp__{server}__{tool}")
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Resolves once the flag is set.
async fn cancelled(flag: &CancellationFlag) {
    while !flag.is_cancelled() {
        tokio::time::sleep(CANCEL_POLL).await;
    }
}

/// A `tools/call` result for the model: text blocks joined with `"\n"`, other blocks described
/// in one line each, `structuredContent` when there is no text, `isError` kept.
pub fn to_output(result: CallToolResult) -> ToolOutput {
    let is_error = result.is_error.unwrap_or(false);
    let mut lines = Vec::with_capacity(result.content.len());
    let mut has_text = false;
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => {
                has_text = true;
                lines.push(t.text.clone());
            }
            other => lines.push(describe(other)),
        }
    }
    let output = match result.structured_content {
        Some(structured) if !has_text => {
            if lines.is_empty() {
                structured
            } else {
                lines.push(structured.to_string());
                Value::String(lines.join("\n"))
            }
        }
        _ if lines.is_empty() => Value::String("(the tool returned no content)".into()),
        _ => Value::String(lines.join("\n")),
    };
    ToolOutput { output, is_error }
}

/// One line for a content block that is not text.
fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!(
            "[image: {}, {} bytes of base64 data]",
            i.mime_type,
            i.data.len()
        ),
        ContentBlock::Audio(a) => format!(
            "[audio: {}, {} bytes of base64 data]",
            a.mime_type,
            a.data.len()
        ),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => format!(
                "[embedded resource: {uri} ({}, {} characters of text)]",
                mime_type.as_deref().unwrap_or("text"),
                text.chars().count()
            ),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[embedded resource: {uri} ({}, {} bytes of base64 data)]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len()
            ),
            _ => "[embedded resource]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => {
            format!("[resource link: {} <{}>]", link.name, link.uri)
        }
        other => {
            let kind = serde_json::to_value(other)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| "unknown".into());
            format!("[{kind} content]")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn names() {
        assert_eq!(tool_name("demo", "echo"), "mcp__demo__echo");
        assert_eq!(tool_name("gh", "issues.get/x"), "mcp__gh__issues_get_x");
    }

    #[test]
    fn text_is_joined_and_others_described() {
        let out = to_output(result(json!({"content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "hello"}},
            {"type": "resource_link", "uri": "file:///y", "name": "y"},
            {"type": "text", "text": "b"}
        ], "structuredContent": {"ignored": true}})));
        assert_eq!(
            out.output,
            json!(
                "a\n[image: image/png, 4 bytes of base64 data]\n\
                 [embedded resource: file:///x (text, 5 characters of text)]\n\
                 [resource link: y <file:///y>]\nb"
            )
        );
        assert!(!out.is_error);
    }

    #[test]
    fn structured_content_without_text() {
        let out = to_output(result(
            json!({"content": [], "structuredContent": {"n": 3}}),
        ));
        assert_eq!(out.output, json!({"n": 3}));
        let out = to_output(result(json!({"content": [
            {"type": "image", "data": "AA", "mimeType": "image/gif"}
        ], "structuredContent": {"n": 3}})));
        assert_eq!(
            out.output,
            json!("[image: image/gif, 2 bytes of base64 data]\n{\"n\":3}")
        );
    }

    #[test]
    fn is_error_and_empty() {
        let out = to_output(result(
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
        ));
        assert_eq!(out, ToolOutput::failed("boom"));
        let out = to_output(result(json!({"content": []})));
        assert_eq!(out.output, json!("(the tool returned no content)"));
    }
}
