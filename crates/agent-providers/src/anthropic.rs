//! [`AnthropicProvider`]: the Anthropic Messages API (`POST /v1/messages`, streamed).
//!
//! The request: neighbouring messages of one role are merged (the API wants user and
//! assistant turns to alternate), with a user turn's `tool_result` blocks first, as the API
//! requires; empty text blocks and messages are dropped (the API rejects them); a tool call
//! whose input is not an object is sent with `{}`; `tools` and `tool_choice` are left out when
//! no tool is offered; the system prompt is a list of one text block. Prompt caching (on unless
//! [`ProviderConfig::prompt_caching`] is off): `cache_control: {"type": "ephemeral"}` on the
//! last tool, the system block and the last block of each of the last two user messages, as
//! Claude Code marks them (docs/agent.md, Prompt caching).
//!
//! The stream: `message_start`, then per content block `content_block_start`,
//! `content_block_delta`s and `content_block_stop`, then `message_delta` and `message_stop`,
//! with `ping`s anywhere. Text deltas are passed on as they arrive; a tool call's
//! `input_json_delta` fragments are collected and the call is yielded at its
//! `content_block_stop` (input that is not valid JSON is kept as a string, see
//! [`ContentBlock::tool_input_error`]). Thinking, redacted-thinking and server-tool blocks, and
//! event or delta types this version does not know, are skipped. An `error` event ends the
//! stream with a [`ProviderError::Stream`].

use std::collections::BTreeMap;
use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{ProviderConfig, ProviderKind};
use crate::error::ProviderError;
use crate::http::{Decoder, Transport, truncate};
use crate::provider::{EventStream, Provider};
use crate::sse::SseEvent;
use crate::types::{
    ContentBlock, Message, ModelRequest, ModelResponse, Role, StopReason, StreamEvent, ToolChoice,
    Usage, parse_tool_input,
};

const NAME: &str = "anthropic";

/// A model behind the Anthropic Messages API.
pub struct AnthropicProvider {
    transport: Transport,
    url: String,
    headers: HeaderMap,
    context_window: Option<u64>,
    prompt_caching: bool,
}

impl AnthropicProvider {
    /// The `anthropic-version` header sent.
    pub const API_VERSION: &'static str = "2023-06-01";
    /// The context window reported for every model (the 1M-token window is opt-in per
    /// request; this adapter does not opt in). [`ProviderConfig::context_window`] overrides it.
    pub const CONTEXT_WINDOW: u64 = 200_000;

    /// A provider configured by `config` (its kind must be `anthropic`).
    ///
    /// # Errors
    /// [`ProviderError::Config`] when the key is missing or unusable, the base URL is invalid
    /// or the kind is not `anthropic`.
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        if config.kind != ProviderKind::Anthropic {
            return Err(ProviderError::Config(format!(
                "an Anthropic provider cannot be built from a {} configuration",
                config.kind
            )));
        }
        let url = format!("{}/v1/messages", config.resolved_base_url()?);
        let key = config.required_key()?;
        let mut key_value = HeaderValue::from_str(key.expose()).map_err(|_| {
            ProviderError::Config(
                "the Anthropic API key holds characters an HTTP header cannot carry: check \
                 ANTHROPIC_API_KEY"
                    .into(),
            )
        })?;
        key_value.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-api-key"), key_value);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(Self::API_VERSION),
        );
        crate::http::json_sse_headers(&mut headers);
        Ok(Self {
            transport: Transport::new(NAME, config)?,
            url,
            headers,
            context_window: config.context_window,
            prompt_caching: config.prompt_caching,
        })
    }
}

impl fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("url", &self.url)
            .field("api_key", &"ApiKey(****)")
            .field("context_window", &self.context_window)
            .field("prompt_caching", &self.prompt_caching)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        NAME
    }

    fn context_window(&self, _model: &str) -> u64 {
        self.context_window.unwrap_or(Self::CONTEXT_WINDOW)
    }

    async fn stream(&self, request: &ModelRequest) -> Result<EventStream, ProviderError> {
        self.transport
            .call(
                &self.url,
                &self.headers,
                &request_body(request, self.prompt_caching),
                &request.model,
                AnthropicDecoder::default(),
            )
            .await
    }
}

// ---- The request ----

/// The most `cache_control` breakpoints one request may carry (the API rejects more).
const MAX_CACHE_BREAKPOINTS: usize = 4;

/// How many of the last user turns get a breakpoint.
const CACHED_USER_TURNS: usize = 2;

#[derive(Serialize)]
struct WireRequest<'a> {
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
fn request_body(request: &ModelRequest, caching: bool) -> WireRequest<'_> {
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
        let mut left = MAX_CACHE_BREAKPOINTS;
        if let Some(tool) = body.tools.last_mut() {
            tool.cache_control = Some(EPHEMERAL);
            left -= 1;
        }
        if let Some(system) = body.system.last_mut() {
            system.cache_control = Some(EPHEMERAL);
            left -= 1;
        }
        let user_turns = body
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
    body
}

// ---- The stream ----

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: WireBlockStart,
    },
    ContentBlockDelta {
        index: usize,
        delta: WireDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: WireMessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: WireError,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct WireMessageStart {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlockStart {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireMessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Sets the counts this report holds (they are cumulative, so later reports win).
    fn apply(&self, usage: &mut Usage) {
        let fields = [
            (self.input_tokens, &mut usage.input_tokens),
            (self.output_tokens, &mut usage.output_tokens),
            (
                self.cache_creation_input_tokens,
                &mut usage.cache_creation_input_tokens,
            ),
            (
                self.cache_read_input_tokens,
                &mut usage.cache_read_input_tokens,
            ),
        ];
        for (value, slot) in fields {
            if let Some(value) = value {
                *slot = value;
            }
        }
    }
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

enum Block {
    Text(String),
    Tool(Box<ToolBlock>),
    Skipped,
}

struct ToolBlock {
    id: String,
    name: String,
    /// The `input_json_delta` fragments so far.
    json: String,
    /// The `input` of `content_block_start` (used when no fragment follows).
    start_input: Option<Value>,
    /// The call, once finished.
    done: Option<ContentBlock>,
}

/// Decodes the Messages API's stream events.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    id: Option<String>,
    model: Option<String>,
    usage: Usage,
    stop_reason: Option<String>,
    blocks: BTreeMap<usize, Block>,
}

fn finish_tool(block: &mut Block) -> Option<ContentBlock> {
    let Block::Tool(tool) = block else {
        return None;
    };
    if tool.done.is_some() {
        return None;
    }
    let input = match tool.start_input.take() {
        Some(input) if tool.json.trim().is_empty() && input.is_object() => input,
        _ => parse_tool_input(&tool.json),
    };
    let call = ContentBlock::ToolUse {
        id: std::mem::take(&mut tool.id),
        name: std::mem::take(&mut tool.name),
        input,
    };
    tool.done = Some(call.clone());
    Some(call)
}

fn stop_reason(raw: &str) -> StopReason {
    match raw {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        "pause_turn" => StopReason::PauseTurn,
        other => StopReason::Other(other.to_owned()),
    }
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), String> {
        if event.event == "ping" || event.data.trim().is_empty() {
            return Ok(());
        }
        let value: Value = serde_json::from_str(&event.data).map_err(|e| {
            format!(
                "invalid JSON in the data line {:?}: {e}",
                truncate(&format!("data: {}", event.data), 200)
            )
        })?;
        let parsed = WireEvent::deserialize(&value).map_err(|e| {
            let kind = value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or(&event.event);
            format!("unexpected shape of a {kind:?} event: {e}")
        })?;
        match parsed {
            WireEvent::MessageStart { message } => {
                self.id = message.id;
                self.model = message.model;
                if let Some(usage) = message.usage {
                    usage.apply(&mut self.usage);
                }
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    WireBlockStart::Text { text } => {
                        if !text.is_empty() {
                            out.push(StreamEvent::TextDelta(text.clone()));
                        }
                        Block::Text(text)
                    }
                    WireBlockStart::ToolUse { id, name, input } => {
                        Block::Tool(Box::new(ToolBlock {
                            id,
                            name,
                            json: String::new(),
                            start_input: input,
                            done: None,
                        }))
                    }
                    WireBlockStart::Other => Block::Skipped,
                };
                self.blocks.insert(index, block);
            }
            WireEvent::ContentBlockDelta { index, delta } => match delta {
                WireDelta::TextDelta { text } => {
                    match self
                        .blocks
                        .entry(index)
                        .or_insert_with(|| Block::Text(String::new()))
                    {
                        Block::Text(buffer) => {
                            buffer.push_str(&text);
                            out.push(StreamEvent::TextDelta(text));
                        }
                        // A block this version skips (its text is not part of the answer).
                        Block::Skipped => {}
                        Block::Tool(_) => {
                            return Err(format!("a text delta for the tool_use block {index}"));
                        }
                    }
                }
                WireDelta::InputJsonDelta { partial_json } => match self.blocks.get_mut(&index) {
                    Some(Block::Tool(tool)) => tool.json.push_str(&partial_json),
                    Some(Block::Skipped) => {}
                    _ => {
                        return Err(format!(
                            "an input_json_delta for block {index}, which is not a tool_use block"
                        ));
                    }
                },
                WireDelta::Other => {}
            },
            WireEvent::ContentBlockStop { index } => {
                if let Some(call) = self.blocks.get_mut(&index).and_then(finish_tool) {
                    out.push(StreamEvent::ToolUse(call));
                }
            }
            WireEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(usage) = usage {
                    usage.apply(&mut self.usage);
                }
            }
            WireEvent::MessageStop => {
                let mut content = Vec::new();
                for block in self.blocks.values_mut() {
                    if let Some(call) = finish_tool(block) {
                        out.push(StreamEvent::ToolUse(call));
                    }
                    match block {
                        Block::Text(text) if !text.is_empty() => {
                            content.push(ContentBlock::text(std::mem::take(text)));
                        }
                        Block::Tool(tool) => content.extend(tool.done.clone()),
                        _ => {}
                    }
                }
                let stop_reason = match self.stop_reason.as_deref() {
                    Some(raw) => stop_reason(raw),
                    None if content
                        .iter()
                        .any(|b| matches!(b, ContentBlock::ToolUse { .. })) =>
                    {
                        StopReason::ToolUse
                    }
                    None => StopReason::EndTurn,
                };
                out.push(StreamEvent::Done(ModelResponse {
                    id: self.id.take(),
                    model: self.model.take(),
                    content,
                    stop_reason,
                    usage: self.usage,
                }));
            }
            WireEvent::Ping | WireEvent::Unknown => {}
            WireEvent::Error { error } => {
                let kind = error.kind.unwrap_or_else(|| "error".to_owned());
                let message = error.message.unwrap_or_default();
                let hint = match kind.as_str() {
                    "overloaded_error" => " (the API is overloaded; try again in a moment)",
                    _ => "",
                };
                return Err(format!("the API reported {kind}: {message}{hint}"));
            }
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), String> {
        Err("the stream ended before message_stop (the connection was cut); try again".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolSpec;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn decode(events: &[(&str, &str)]) -> (Vec<StreamEvent>, Option<String>) {
        let mut decoder = AnthropicDecoder::default();
        let mut out = Vec::new();
        for (event, data) in events {
            let ev = SseEvent {
                event: (*event).into(),
                data: (*data).into(),
                id: None,
            };
            if let Err(e) = decoder.event(ev, &mut out) {
                return (out, Some(e));
            }
        }
        (out, None)
    }

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

    #[test]
    fn thinking_server_tools_and_unknown_events_are_skipped() {
        let (out, err) = decode(&[
            (
                "message_start",
                r#"{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":3,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":1}"#,
            ),
            ("brand_new_event", r#"{"type":"brand_new_event","x":1}"#),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"hi"}}"#,
            ),
            ("ping", ""),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":9}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert_eq!(err, None);
        assert_eq!(out[0], StreamEvent::TextDelta("hi".into()));
        let StreamEvent::Done(response) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!(response.content, vec![ContentBlock::text("hi")]);
        assert_eq!(response.stop_reason, StopReason::PauseTurn);
        assert_eq!(response.usage.input_tokens, 3);
        assert_eq!(response.usage.output_tokens, 9);
    }

    #[test]
    fn stop_reasons() {
        for (raw, want) in [
            ("end_turn", StopReason::EndTurn),
            ("tool_use", StopReason::ToolUse),
            ("max_tokens", StopReason::MaxTokens),
            ("stop_sequence", StopReason::StopSequence),
            ("refusal", StopReason::Refusal),
            ("pause_turn", StopReason::PauseTurn),
            (
                "model_context_window_exceeded",
                StopReason::Other("model_context_window_exceeded".into()),
            ),
        ] {
            assert_eq!(stop_reason(raw), want);
        }
    }
}
