//! The provider-neutral request and response: what the loop sends and what comes back.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who a message is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user: prompts and tool results.
    User,
    /// The model.
    Assistant,
}

/// One piece of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call the model asked for.
    ToolUse {
        /// Pairs the call with its result (`toolu_…`, `call_…`).
        id: String,
        /// The tool's name.
        name: String,
        /// The input. An object when the model produced valid JSON; otherwise the raw text
        /// as a JSON string (see [`ContentBlock::tool_input_error`]).
        input: Value,
    },
    /// What a tool returned.
    ToolResult {
        /// The call this answers.
        tool_use_id: String,
        /// The result as text.
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// For a tool call whose input is not a JSON object, why not (the loop answers such a call
    /// with an error result instead of running the tool).
    pub fn tool_input_error(&self) -> Option<String> {
        match self {
            Self::ToolUse { input, .. } if !input.is_object() => Some(match input {
                Value::String(raw) => format!("the tool input is not valid JSON: {raw:?}"),
                other => format!("the tool input must be a JSON object, not {other}"),
            }),
            _ => None,
        }
    }
}

/// A streamed tool call's input from its collected JSON fragments: `{}` when empty, the raw
/// text as a JSON string when it is not valid JSON (what [`ContentBlock::tool_input_error`]
/// then reports).
pub(crate) fn parse_tool_input(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// What it holds, in order.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// An assistant message holding one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![ContentBlock::text(text)],
        }
    }
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its input object.
    pub input_schema: Value,
}

/// Whether the model may call tools in this request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The tools are described (the history may hold calls) but the model must answer in text:
    /// the forced summary when turns run out, and compaction.
    None,
}

/// One call to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The model name, as the API knows it.
    pub model: String,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation so far; user and assistant turns alternate after adapters merge
    /// neighbours of one role.
    pub messages: Vec<Message>,
    /// The tools on offer (shared: a loop sends the same specs with every call).
    pub tools: Arc<[ToolSpec]>,
    /// Whether tools may be called.
    pub tool_choice: ToolChoice,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// Sampling temperature, when set.
    pub temperature: Option<f32>,
}

impl ModelRequest {
    /// A request for `model` with `messages`, no system prompt, no tools, 4096 output tokens.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        Self {
            model: model.into(),
            system: None,
            messages,
            tools: Arc::from(Vec::new()),
            tool_choice: ToolChoice::Auto,
            max_tokens: 4096,
            temperature: None,
        }
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer (`end_turn`, OpenAI `stop`).
    EndTurn,
    /// It wants tool results (`tool_use`, OpenAI `tool_calls`).
    ToolUse,
    /// It hit `max_tokens` (OpenAI `length`).
    MaxTokens,
    /// It produced a stop sequence.
    StopSequence,
    /// It declined to answer (`refusal`, OpenAI `content_filter`).
    Refusal,
    /// A long turn was paused by the server (`pause_turn`); send the response back to go on.
    PauseTurn,
    /// A reason this version does not know, as the API wrote it.
    Other(String),
}

impl StopReason {
    /// The reason as written in `result.stopReason`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::Refusal => "refusal",
            Self::PauseTurn => "pause_turn",
            Self::Other(s) => s,
        }
    }
}

/// Tokens used by one call, as the provider reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (not counting cache reads and writes).
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Prompt tokens written to the cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Prompt tokens read from the cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl Usage {
    /// Every prompt token of the call: what the context held when it was sent.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// Adds another call's usage.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
    }
}

impl From<agent_core::events::TokenUsage> for Usage {
    fn from(u: agent_core::events::TokenUsage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            cache_read_input_tokens: u.cache_read_input_tokens,
        }
    }
}

impl From<Usage> for agent_core::events::TokenUsage {
    fn from(u: Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            cache_read_input_tokens: u.cache_read_input_tokens,
        }
    }
}

/// A whole answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The provider's message id, when it gives one.
    pub id: Option<String>,
    /// The model that answered, as the provider named it.
    pub model: Option<String>,
    /// The content blocks in order (text and tool calls).
    pub content: Vec<ContentBlock>,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Tokens used.
    pub usage: Usage,
}

impl ModelResponse {
    /// The text blocks joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ContentBlock> {
        self.content
            .iter()
            .filter(|b| matches!(b, ContentBlock::ToolUse { .. }))
    }
}

/// What a provider's stream yields, in order: any number of `TextDelta` and `ToolUse`, then
/// exactly one `Done` as the last item (a stream that ends without `Done` was cut off, and
/// the provider yields a [`crate::ProviderError`] instead).
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// A fragment of text, as soon as it arrives.
    TextDelta(String),
    /// A tool call whose input is complete (a [`ContentBlock::ToolUse`]).
    ToolUse(ContentBlock),
    /// The whole response.
    Done(ModelResponse),
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn tool_inputs() {
        assert_eq!(parse_tool_input(""), json!({}));
        assert_eq!(parse_tool_input("{\"a\":1}"), json!({"a": 1}));
        assert_eq!(parse_tool_input("{\"a\":"), json!("{\"a\":"));
    }
}
