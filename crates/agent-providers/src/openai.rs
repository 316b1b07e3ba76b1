//! [`OpenAiProvider`]: OpenAI Chat Completions (`POST /chat/completions`, streamed), at
//! api.openai.com or any server that speaks it (Ollama, vLLM, llama.cpp server, ...).
//!
//! The request: the system prompt is the first message (`role: system`); an assistant turn's
//! tool calls go in its `tool_calls` (arguments as a JSON string, `content` null when there is
//! no text); each tool result is its own `role: tool` message (its content prefixed with
//! `Error: ` when the call failed), placed before any text of the same user turn; `tools` and
//! `tool_choice` are left out when no tool is offered. The output limit is sent as
//! `max_completion_tokens` to OpenAI and as `max_tokens` to a compatible server (see
//! [`MaxTokensField`]); `stream_options.include_usage` asks for a final usage chunk.
//!
//! The stream: `chat.completion.chunk`s as `data:` lines, ended by `data: [DONE]`. Text deltas
//! (and refusals) are passed on as they arrive; tool calls arrive in fragments keyed by
//! `index`, several in parallel, and are yielded in index order once the choice has its
//! `finish_reason`. `Done` follows at `[DONE]`, or at the end of the body for servers that do
//! not send it, provided a `finish_reason` was seen.

use std::collections::BTreeMap;
use std::fmt;

use reqwest::header::{HeaderMap, HeaderValue};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

use crate::config::{MaxTokensField, ProviderConfig, ProviderKind};
use crate::error::ProviderError;
use crate::http::{Decoder, Transport, truncate};
use crate::provider::{EventStream, Provider};
use crate::sse::SseEvent;
use crate::types::{
    ContentBlock, Message, ModelRequest, ModelResponse, Role, StopReason, StreamEvent, ToolChoice,
    Usage, parse_tool_input,
};

/// A model behind OpenAI Chat Completions or a compatible server.
pub struct OpenAiProvider {
    transport: Transport,
    name: &'static str,
    url: String,
    headers: HeaderMap,
    max_tokens_field: MaxTokensField,
    include_usage: bool,
    context_window: Option<u64>,
}

impl OpenAiProvider {
    /// The context window reported for a model the table does not know.
    pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

    /// A provider configured by `config` (its kind must be `openai` or `openai-compatible`).
    ///
    /// # Errors
    /// [`ProviderError::Config`] when the key is missing (for `openai`) or unusable, the base
    /// URL is missing (for a compatible server) or invalid, or the kind is `anthropic`.
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let (name, default_field) = match config.kind {
            ProviderKind::OpenAi => ("openai", MaxTokensField::MaxCompletionTokens),
            ProviderKind::OpenAiCompatible => ("openai-compatible", MaxTokensField::MaxTokens),
            ProviderKind::Anthropic => {
                return Err(ProviderError::Config(
                    "an OpenAI provider cannot be built from an anthropic configuration".into(),
                ));
            }
        };
        let url = format!("{}/chat/completions", config.resolved_base_url()?);
        let key = match config.kind {
            ProviderKind::OpenAi => Some(config.required_key()?),
            _ => config
                .api_key
                .as_ref()
                .filter(|k| !k.expose().trim().is_empty()),
        };
        let mut headers = HeaderMap::new();
        if let Some(key) = key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    ProviderError::Config(
                        "the OpenAI API key holds characters an HTTP header cannot carry: check \
                         OPENAI_API_KEY"
                            .into(),
                    )
                })?;
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        crate::http::json_sse_headers(&mut headers);
        Ok(Self {
            transport: Transport::new(name, config)?,
            name,
            url,
            headers,
            max_tokens_field: config.max_tokens_field.unwrap_or(default_field),
            include_usage: config.include_usage,
            context_window: config.context_window,
        })
    }

    fn request_body(&self, request: &ModelRequest) -> Value {
        let mut body = serde_json::Map::new();
        body.insert("model".into(), json!(request.model));
        body.insert(
            "messages".into(),
            json!(wire_messages(request.system.as_deref(), &request.messages)),
        );
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.input_schema,
                        }
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            let choice = match request.tool_choice {
                ToolChoice::Auto => "auto",
                ToolChoice::None => "none",
            };
            body.insert("tool_choice".into(), json!(choice));
        }
        body.insert(
            self.max_tokens_field.as_str().into(),
            json!(request.max_tokens),
        );
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        body.insert("stream".into(), Value::Bool(true));
        if self.include_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }
}

impl fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("name", &self.name)
            .field("url", &self.url)
            .field(
                "api_key",
                &self
                    .headers
                    .contains_key(reqwest::header::AUTHORIZATION)
                    .then_some("ApiKey(****)"),
            )
            .field("max_tokens_field", &self.max_tokens_field)
            .field("include_usage", &self.include_usage)
            .field("context_window", &self.context_window)
            .finish_non_exhaustive()
    }
}

/// The context window of an OpenAI model by name, [`OpenAiProvider::DEFAULT_CONTEXT_WINDOW`]
/// for one not listed (compatible servers' models included: configure
/// [`ProviderConfig::context_window`] for them).
pub fn openai_context_window(model: &str) -> u64 {
    // Longest prefix first.
    const TABLE: &[(&str, u64)] = &[
        ("gpt-4.1", 1_047_576),
        ("gpt-4o", 128_000),
        ("gpt-4-turbo", 128_000),
        ("gpt-4-32k", 32_768),
        ("gpt-4", 8_192),
        ("gpt-3.5-turbo", 16_385),
        ("gpt-5", 400_000),
        ("o1-mini", 128_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
    ];
    TABLE
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map_or(OpenAiProvider::DEFAULT_CONTEXT_WINDOW, |(_, tokens)| {
            *tokens
        })
}

#[async_trait::async_trait]
impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        self.name
    }

    fn context_window(&self, model: &str) -> u64 {
        self.context_window
            .unwrap_or_else(|| openai_context_window(model))
    }

    async fn stream(&self, request: &ModelRequest) -> Result<EventStream, ProviderError> {
        self.transport
            .call(
                &self.url,
                &self.headers,
                &self.request_body(request),
                &request.model,
                OpenAiDecoder::default(),
            )
            .await
    }
}

// ---- The request ----

#[derive(Serialize)]
struct WireMessage {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    /// Serialized even when `None` (as `null`): an assistant message with only tool calls.
    content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Value>,
}

fn joined_text(blocks: &[ContentBlock]) -> Option<String> {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if !text.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

fn wire_messages(system: Option<&str>, messages: &[Message]) -> Vec<WireMessage> {
    let mut out = Vec::new();
    if let Some(system) = system.filter(|s| !s.is_empty()) {
        out.push(WireMessage {
            role: "system",
            tool_call_id: None,
            content: Some(system.to_owned()),
            tool_calls: Vec::new(),
        });
    }
    for message in messages {
        match message.role {
            Role::User => {
                for block in &message.content {
                    if let ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } = block
                    {
                        out.push(WireMessage {
                            role: "tool",
                            tool_call_id: Some(tool_use_id.clone()),
                            content: Some(if *is_error {
                                format!("Error: {content}")
                            } else {
                                content.clone()
                            }),
                            tool_calls: Vec::new(),
                        });
                    }
                }
                if let Some(text) = joined_text(&message.content) {
                    out.push(WireMessage {
                        role: "user",
                        tool_call_id: None,
                        content: Some(text),
                        tool_calls: Vec::new(),
                    });
                }
            }
            Role::Assistant => {
                let tool_calls: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolUse { id, name, input } => Some(json!({
                            "id": id,
                            "type": "function",
                            "function": {
                                "name": name,
                                "arguments": match input {
                                    Value::String(raw) => raw.clone(),
                                    other => other.to_string(),
                                },
                            }
                        })),
                        _ => None,
                    })
                    .collect();
                let content = joined_text(&message.content);
                if content.is_none() && tool_calls.is_empty() {
                    continue;
                }
                out.push(WireMessage {
                    role: "assistant",
                    tool_call_id: None,
                    content,
                    tool_calls,
                });
            }
        }
    }
    out
}

// ---- The stream ----

fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Deserialize)]
struct WireChunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<WireDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    tool_calls: Vec<WireToolCall>,
    /// The legacy single function call.
    #[serde(default)]
    function_call: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<WirePromptDetails>,
}

#[derive(Deserialize)]
struct WirePromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

/// Decodes Chat Completions chunks.
#[derive(Default)]
pub(crate) struct OpenAiDecoder {
    id: Option<String>,
    model: Option<String>,
    text: String,
    refused: bool,
    calls: BTreeMap<u32, PendingCall>,
    last_call: Option<u32>,
    finish_reason: Option<String>,
    emitted: Vec<ContentBlock>,
    usage: Usage,
}

impl OpenAiDecoder {
    fn call_slot(&mut self, index: Option<u32>, id: Option<&str>) -> &mut PendingCall {
        // Servers that leave out `index` send each call whole, or its fragments in a row:
        // a new id starts a new call, fragments without one continue the last.
        let index = index.unwrap_or_else(|| match (self.last_call, id) {
            (Some(last), Some(id)) if self.calls.get(&last).is_some_and(|c| c.id != id) => last + 1,
            (Some(last), _) => last,
            (None, _) => 0,
        });
        self.last_call = Some(index);
        self.calls.entry(index).or_default()
    }

    fn finish_choice(&mut self, reason: String, out: &mut Vec<StreamEvent>) {
        if self.finish_reason.is_some() {
            return;
        }
        self.finish_reason = Some(reason);
        for (index, call) in std::mem::take(&mut self.calls) {
            let block = ContentBlock::ToolUse {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                name: call.name,
                input: parse_tool_input(&call.arguments),
            };
            out.push(StreamEvent::ToolUse(block.clone()));
            self.emitted.push(block);
        }
    }

    fn done(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), String> {
        let Some(reason) = self.finish_reason.as_deref() else {
            return Err(
                "the stream ended without a finish_reason (the response is incomplete); try again"
                    .into(),
            );
        };
        let stop_reason = match reason {
            _ if self.refused => StopReason::Refusal,
            "stop" => StopReason::EndTurn,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            "length" => StopReason::MaxTokens,
            "content_filter" => StopReason::Refusal,
            other => StopReason::Other(other.to_owned()),
        };
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(ContentBlock::text(std::mem::take(&mut self.text)));
        }
        content.append(&mut self.emitted);
        out.push(StreamEvent::Done(ModelResponse {
            id: self.id.take(),
            model: self.model.take(),
            content,
            stop_reason,
            usage: self.usage,
        }));
        Ok(())
    }
}

impl Decoder for OpenAiDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), String> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            return self.done(out);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "invalid JSON in the data line {:?}: {e}",
                truncate(&format!("data: {data}"), 200)
            )
        })?;
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .or_else(|| error.as_str())
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(format!("the server reported an error: {message}"));
        }
        let chunk = WireChunk::deserialize(&value)
            .map_err(|e| format!("unexpected shape of a chat.completion.chunk: {e}"))?;
        if self.id.is_none() {
            self.id = chunk.id;
        }
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if let Some(usage) = chunk.usage {
            let cached = usage
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0);
            self.usage = Usage {
                input_tokens: usage.prompt_tokens.saturating_sub(cached),
                output_tokens: usage.completion_tokens,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: cached,
            };
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                for text in [
                    delta.content,
                    delta.refusal.inspect(|_| self.refused = true),
                ]
                .into_iter()
                .flatten()
                .filter(|t| !t.is_empty())
                {
                    self.text.push_str(&text);
                    out.push(StreamEvent::TextDelta(text));
                }
                for call in delta.tool_calls {
                    let slot = self.call_slot(call.index, call.id.as_deref());
                    if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                        slot.id = id;
                    }
                    if let Some(function) = call.function {
                        if let Some(name) = function.name {
                            slot.name.push_str(&name);
                        }
                        if let Some(arguments) = function.arguments {
                            slot.arguments.push_str(&arguments);
                        }
                    }
                }
                if let Some(function) = delta.function_call {
                    let slot = self.calls.entry(0).or_default();
                    if let Some(name) = function.name {
                        slot.name.push_str(&name);
                    }
                    if let Some(arguments) = function.arguments {
                        slot.arguments.push_str(&arguments);
                    }
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_choice(reason, out);
            }
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), String> {
        self.done(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn decode(lines: &[&str]) -> (Vec<StreamEvent>, Result<(), String>) {
        let mut decoder = OpenAiDecoder::default();
        let mut out = Vec::new();
        for data in lines {
            let ev = SseEvent {
                event: "message".into(),
                data: (*data).into(),
                id: None,
            };
            if let Err(e) = decoder.event(ev, &mut out) {
                return (out, Err(e));
            }
        }
        let end = decoder.end(&mut out);
        (out, end)
    }

    #[test]
    fn context_windows() {
        assert_eq!(openai_context_window("gpt-4.1-mini"), 1_047_576);
        assert_eq!(openai_context_window("gpt-4o-2024-08-06"), 128_000);
        assert_eq!(openai_context_window("gpt-4"), 8_192);
        assert_eq!(openai_context_window("o1-mini"), 128_000);
        assert_eq!(openai_context_window("o3-pro"), 200_000);
        assert_eq!(openai_context_window("llama3.1:8b"), 128_000);
    }

    #[test]
    fn calls_without_index_and_the_legacy_function_call() {
        let (out, end) = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        end.unwrap();
        assert_eq!(
            out[0],
            StreamEvent::ToolUse(ContentBlock::ToolUse {
                id: "a".into(),
                name: "f".into(),
                input: json!({"x": 1})
            })
        );
        assert!(
            matches!(&out[1], StreamEvent::ToolUse(ContentBlock::ToolUse { id, .. }) if id == "b")
        );
        let (out, end) = decode(&[
            r#"{"choices":[{"delta":{"function_call":{"name":"f","arguments":"{}"}}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"function_call"}]}"#,
        ]);
        end.unwrap();
        let StreamEvent::Done(response) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert!(matches!(&response.content[0], ContentBlock::ToolUse { id, .. } if id == "call_0"));
    }

    #[test]
    fn null_fields_are_tolerated() {
        let (out, end) = decode(&[
            r#"{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":null},"finish_reason":null}],"usage":null}"#,
            r#"{"id":"x","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}"#,
            r#"{"id":"x","choices":null,"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#,
        ]);
        end.unwrap();
        let StreamEvent::Done(response) = out.last().unwrap() else {
            panic!("{out:?}")
        };
        assert_eq!(response.text(), "ok");
        assert_eq!(response.usage.input_tokens, 5);
    }

    #[test]
    fn the_request_places_tool_results_before_text() {
        let messages = vec![
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "f".into(),
                    input: json!("{broken"),
                }],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::text("note"),
                    ContentBlock::ToolResult {
                        tool_use_id: "c1".into(),
                        content: "boom".into(),
                        is_error: true,
                    },
                ],
            },
        ];
        let wire = serde_json::to_value(wire_messages(None, &messages)).unwrap();
        assert_eq!(
            wire,
            json!([
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{broken"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "Error: boom"},
                {"role": "user", "content": "note"},
            ])
        );
    }
}
