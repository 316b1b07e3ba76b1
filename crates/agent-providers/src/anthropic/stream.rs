//! Decoding the Messages API's stream.
//!
//! `message_start`, then per content block `content_block_start`, `content_block_delta`s and
//! `content_block_stop`, then `message_delta` and `message_stop`, with `ping`s anywhere. Text
//! deltas are passed on as they arrive; a tool call's `input_json_delta` fragments are
//! collected and the call is yielded at its `content_block_stop` (input that is not valid JSON
//! is kept as a string, see [`ContentBlock::tool_input_error`]). Thinking, redacted-thinking
//! and server-tool blocks, and event or delta types this version does not know, are skipped.
//! An `error` event ends the stream with a
//! [`ProviderError::Stream`](crate::ProviderError::Stream).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::http::{Decoder, truncate};
use crate::sse::SseEvent;
use crate::types::{ContentBlock, ModelResponse, StopReason, StreamEvent, Usage, parse_tool_input};

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
pub(super) struct AnthropicDecoder {
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

impl AnthropicDecoder {
    /// The typed event of an SSE event's data, or why it is not one (the message names the
    /// line or the event type).
    fn parse(event: &SseEvent) -> Result<WireEvent, String> {
        let value: Value = serde_json::from_str(&event.data).map_err(|e| {
            format!(
                "invalid JSON in the data line {:?}: {e}",
                truncate(&format!("data: {}", event.data), 200)
            )
        })?;
        WireEvent::deserialize(&value).map_err(|e| {
            let kind = value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or(&event.event);
            format!("unexpected shape of a {kind:?} event: {e}")
        })
    }

    /// `content_block_start`: opens block `index` (a start with text passes the text on).
    fn start_block(&mut self, index: usize, start: WireBlockStart, out: &mut Vec<StreamEvent>) {
        let block = match start {
            WireBlockStart::Text { text } => {
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta(text.clone()));
                }
                Block::Text(text)
            }
            WireBlockStart::ToolUse { id, name, input } => Block::Tool(Box::new(ToolBlock {
                id,
                name,
                json: String::new(),
                start_input: input,
                done: None,
            })),
            WireBlockStart::Other => Block::Skipped,
        };
        self.blocks.insert(index, block);
    }

    /// `content_block_delta`: text is passed on at once, a tool's input fragment collected.
    fn delta(
        &mut self,
        index: usize,
        delta: WireDelta,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), String> {
        match delta {
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
        }
        Ok(())
    }

    /// `message_stop`: yields the tool calls not yet finished, then `Done` with the whole
    /// answer.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
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
}

/// The stream error an `error` event stands for.
fn api_error(error: WireError) -> String {
    let kind = error.kind.unwrap_or_else(|| "error".to_owned());
    let message = error.message.unwrap_or_default();
    let hint = match kind.as_str() {
        "overloaded_error" => " (the API is overloaded; try again in a moment)",
        _ => "",
    };
    format!("the API reported {kind}: {message}{hint}")
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), String> {
        if event.event == "ping" || event.data.trim().is_empty() {
            return Ok(());
        }
        match Self::parse(&event)? {
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
            } => self.start_block(index, content_block, out),
            WireEvent::ContentBlockDelta { index, delta } => self.delta(index, delta, out)?,
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
            WireEvent::MessageStop => self.finish(out),
            WireEvent::Ping | WireEvent::Unknown => {}
            WireEvent::Error { error } => return Err(api_error(error)),
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
    use pretty_assertions::assert_eq;

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
