//! The request body of the Messages API.
//!
//! Neighbouring messages of one role are merged (the API wants user and assistant turns to
//! alternate), with a user turn's `tool_result` blocks first, as the API requires; empty text
//! blocks and messages are dropped (the API rejects them); a tool call whose input is not an
//! object is sent with `{}`; `tools` and `tool_choice` are left out when no tool is offered; the
//! system prompt is a list of one text block. Prompt caching (on unless
//! [`ProviderConfig::prompt_caching`](crate::ProviderConfig::prompt_caching) is off):
//! `cache_control: {"type": "ephemeral"}` on the last tool, the system block and the last block
//! of each of the last two user messages, as Claude Code marks them (docs/agent.md, Prompt
//! caching).

use serde::Serialize;
use serde_json::Value;

use crate::types::{ContentBlock, Message, ModelRequest, Role, ToolChoice};

/// The most `cache_control` breakpoints one request may carry (the API rejects more).
const MAX_CACHE_BREAKPOINTS: usize = 4;

/// How many of the last user turns get a breakpoint.
const CACHED_USER_TURNS: usize = 2;

/// The request body as sent (borrowing from the [`ModelRequest`]).
#[derive(Serialize)]
pub(super) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<WireSystemBlock<'a>>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    stream: bool,
}

/// `{"type": "ephemeral"}`: the prefix up to and including the block that carries it is
/// cached (written on a miss, read on a hit).
#[derive(Clone, Copy, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
struct WireSystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl WireBlock<'_> {
    fn mark(&mut self) {
        let (Self::Text { cache_control, .. }
        | Self::ToolUse { cache_control, .. }
        | Self::ToolResult { cache_control, .. }) = self;
        *cache_control = Some(EPHEMERAL);
    }
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Serialize)]
struct WireToolChoice {
    #[serde(rename = "type")]
    kind: &'static str,
}

static EMPTY_OBJECT: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(serde_json::Map::new()));

fn wire_block(block: &ContentBlock) -> Option<WireBlock<'_>> {
    Some(match block {
        ContentBlock::Text { text } if text.is_empty() => return None,
        ContentBlock::Text { text } => WireBlock::Text {
            text,
            cache_control: None,
        },
        ContentBlock::ToolUse { id, name, input } => WireBlock::ToolUse {
            id,
            name,
            input: if input.is_object() {
                input
            } else {
                &EMPTY_OBJECT
            },
            cache_control: None,
        },
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => WireBlock::ToolResult {
            tool_use_id,
            content,
            is_error: *is_error,
            cache_control: None,
        },
    })
}

fn wire_messages(messages: &[Message]) -> Vec<WireMessage<'_>> {
    let mut out: Vec<WireMessage<'_>> = Vec::new();
    for message in messages {
        let blocks: Vec<WireBlock<'_>> = message.content.iter().filter_map(wire_block).collect();
        if blocks.is_empty() {
            continue;
        }
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(WireMessage {
                role,
                content: blocks,
            }),
        }
    }
    for message in &mut out {
        if message.role == "user" {
            // Stable: tool results first, in order, then the rest in order.
            message
                .content
                .sort_by_key(|b| !matches!(b, WireBlock::ToolResult { .. }));
        }
    }
    out
}

/// The request body. With `caching`, prompt-cache breakpoints go where Claude Code puts them
/// (the API caches the prefix tools → system → messages up to each one): the last tool
/// definition, the system prompt, and the last block of each of the last
/// [`CACHED_USER_TURNS`] user messages, at most [`MAX_CACHE_BREAKPOINTS`] in all. A request
/// then reads the prefix the previous one wrote (its last user turn is this one's second to
/// last) and writes its own. Without `caching`, no block carries `cache_control`.
pub(super) fn request_body(request: &ModelRequest, caching: bool) -> WireRequest<'_> {
    let has_tools = !request.tools.is_empty();
    let mut body = WireRequest {
        model: &request.model,
        max_tokens: request.max_tokens,
        system: request
            .system
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|text| WireSystemBlock {
                kind: "text",
                text,
                cache_control: None,
            })
            .into_iter()
            .collect(),
        messages: wire_messages(&request.messages),
        tools: request
            .tools
            .iter()
            .map(|t| WireTool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.input_schema,
                cache_control: None,
            })
            .collect(),
        tool_choice: has_tools.then_some(WireToolChoice {
            kind: match request.tool_choice {
                ToolChoice::Auto => "auto",
                ToolChoice::None => "none",
            },
        }),
        temperature: request.temperature,
        stream: true,
    };
    if caching {
        body.mark_cache_breakpoints();
    }
    body
}

impl WireRequest<'_> {
    /// Marks the breakpoints [`request_body`] describes: the last tool, the system block and
    /// the last block of each of the last [`CACHED_USER_TURNS`] user messages, at most
    /// [`MAX_CACHE_BREAKPOINTS`] in all.
    fn mark_cache_breakpoints(&mut self) {
        let mut left = MAX_CACHE_BREAKPOINTS;
        if let Some(tool) = self.tools.last_mut() {
            tool.cache_control = Some(EPHEMERAL);
            left -= 1;
        }
        if let Some(system) = self.system.last_mut() {
            system.cache_control = Some(EPHEMERAL);
            left -= 1;
        }
        let user_turns = self
            .messages
            .iter_mut()
            .rev()
            .filter(|m| m.role == "user")
            .take(CACHED_USER_TURNS.min(left));
        for message in user_turns {
            if let Some(block) = message.content.last_mut() {
                block.mark();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolSpec;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn request_merges_roles_orders_tool_results_and_cleans_inputs() {
        let mut request = ModelRequest::new(
            "claude-x",
            vec![
                Message::user("first"),
                Message::user(""),
                Message::user("second"),
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::ToolUse {
                        id: "t1".into(),
                        name: "Read".into(),
                        input: json!("not an object"),
                    }],
                },
                Message::user("and text first"),
                Message {
                    role: Role::User,
                    content: vec![ContentBlock::ToolResult {
                        tool_use_id: "t1".into(),
                        content: "ok".into(),
                        is_error: false,
                    }],
                },
            ],
        );
        request.system = Some(String::new());
        let body = serde_json::to_value(request_body(&request, false)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude-x",
                "max_tokens": 4096,
                "messages": [
                    {"role": "user", "content": [
                        {"type": "text", "text": "first"},
                        {"type": "text", "text": "second"}]},
                    {"role": "assistant", "content": [
                        {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": false},
                        {"type": "text", "text": "and text first"}]},
                ],
                "stream": true,
            })
        );
        request.tools = vec![ToolSpec {
            name: "Read".into(),
            description: "reads".into(),
            input_schema: json!({"type": "object"}),
        }]
        .into();
        request.temperature = Some(0.5);
        let body = serde_json::to_value(request_body(&request, false)).unwrap();
        assert_eq!(body["tool_choice"], json!({"type": "auto"}));
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
        assert_eq!(body["temperature"], json!(0.5));
    }

    #[test]
    fn cache_breakpoints_go_on_the_last_tool_the_system_and_the_last_two_user_turns() {
        let tool = |name: &str| ToolSpec {
            name: name.into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        };
        let call = |id: &str| Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "Read".into(),
                input: json!({}),
            }],
        };
        let result = |id: &str| Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: "ok".into(),
                is_error: false,
            }],
        };
        let mut request = ModelRequest::new(
            "claude-x",
            vec![
                Message::user("q1"),
                call("t1"),
                result("t1"),
                call("t2"),
                result("t2"),
                Message::user("note"),
            ],
        );
        request.system = Some("sys".into());
        request.tools = vec![tool("Read"), tool("Glob")].into();
        let body = serde_json::to_value(request_body(&request, true)).unwrap();
        let ephemeral = json!({"type": "ephemeral"});
        assert_eq!(body["tools"][0].get("cache_control"), None);
        assert_eq!(body["tools"][1]["cache_control"], ephemeral);
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}])
        );
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 5, "the last tool result and the note merge");
        assert_eq!(messages[0]["content"][0].get("cache_control"), None);
        assert_eq!(messages[2]["content"][0]["cache_control"], ephemeral);
        assert_eq!(messages[4]["content"][0].get("cache_control"), None);
        assert_eq!(
            messages[4]["content"][1],
            json!({"type": "text", "text": "note", "cache_control": {"type": "ephemeral"}})
        );
        let marks = |body: &Value| body.to_string().matches("cache_control").count();
        assert_eq!(marks(&body), MAX_CACHE_BREAKPOINTS);

        // Turned off: no breakpoint anywhere; the system prompt is still a block list.
        let body = serde_json::to_value(request_body(&request, false)).unwrap();
        assert_eq!(marks(&body), 0);
        assert_eq!(body["system"], json!([{"type": "text", "text": "sys"}]));

        // Without tools or a system prompt, only the user turns are marked.
        let bare = ModelRequest::new("claude-x", vec![Message::user("only")]);
        let body = serde_json::to_value(request_body(&bare, true)).unwrap();
        assert_eq!(marks(&body), 1);
        assert_eq!(body.get("system"), None);
    }
}
