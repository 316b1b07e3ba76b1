//! [`ScriptedProvider`]: replays a fixed list of responses through the [`Provider`] trait. It
//! is what `agent demo` runs on (clearly labelled as scripted), and what tests and benchmarks
//! use when the wire format is not the subject.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::error::ProviderError;
use crate::provider::{EventStream, Provider};
use crate::types::{ContentBlock, ModelRequest, ModelResponse, StopReason, StreamEvent, Usage};

/// One scripted answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptedTurn {
    /// A whole response, streamed as text deltas of a few characters, then its tool calls,
    /// then `Done`.
    Respond(ModelResponse),
    /// A stream that breaks off with a [`ProviderError::Stream`] carrying this message.
    Fail(String),
}

impl ScriptedTurn {
    /// A text answer that ends the turn.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Respond(ModelResponse {
            id: None,
            model: Some("scripted".into()),
            content: vec![ContentBlock::text(text)],
            stop_reason: StopReason::EndTurn,
            usage: Usage::default(),
        })
    }

    /// An answer of optional text followed by tool calls (`(id, name, input)`), stopping for
    /// their results.
    pub fn tools(text: Option<&str>, calls: Vec<(&str, &str, Value)>) -> Self {
        let mut content: Vec<ContentBlock> = text.map(ContentBlock::text).into_iter().collect();
        content.extend(
            calls
                .into_iter()
                .map(|(id, name, input)| ContentBlock::ToolUse {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    input,
                }),
        );
        Self::Respond(ModelResponse {
            id: None,
            model: Some("scripted".into()),
            content,
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        })
    }

    /// The same turn reporting `usage`.
    pub fn with_usage(self, usage: Usage) -> Self {
        match self {
            Self::Respond(mut r) => {
                r.usage = usage;
                Self::Respond(r)
            }
            other => other,
        }
    }
}

/// Replays [`ScriptedTurn`]s in order, one per call, and records every request it was sent.
#[derive(Clone, Debug, Default)]
pub struct ScriptedProvider {
    turns: Arc<Mutex<VecDeque<ScriptedTurn>>>,
    given: usize,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
    context_window: Option<u64>,
    chunk: usize,
}

impl ScriptedProvider {
    /// A provider answering with `turns`, in order.
    pub fn new(turns: Vec<ScriptedTurn>) -> Self {
        Self {
            given: turns.len(),
            turns: Arc::new(Mutex::new(turns.into())),
            requests: Arc::default(),
            context_window: None,
            chunk: 16,
        }
    }

    /// Reports `tokens` as every model's context window (default 200,000).
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Streams text in deltas of `chars` characters (default 16; at least 1).
    pub fn with_delta_size(mut self, chars: usize) -> Self {
        self.chunk = chars.max(1);
        self
    }

    /// Appends turns to the script.
    pub fn push(&self, turns: impl IntoIterator<Item = ScriptedTurn>) {
        self.turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(turns);
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many turns are left.
    pub fn remaining(&self) -> usize {
        self.turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

fn deltas(text: &str, chunk: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(chunk).map(|c| c.iter().collect()).collect()
}

#[async_trait::async_trait]
impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        "scripted"
    }

    fn context_window(&self, _model: &str) -> u64 {
        self.context_window.unwrap_or(200_000)
    }

    async fn stream(&self, request: &ModelRequest) -> Result<EventStream, ProviderError> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.clone());
        let turn = self
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .ok_or(ProviderError::ScriptExhausted(self.given))?;
        let items: Vec<Result<StreamEvent, ProviderError>> = match turn {
            ScriptedTurn::Respond(response) => {
                let mut items = Vec::new();
                for block in &response.content {
                    match block {
                        ContentBlock::Text { text } => items.extend(
                            deltas(text, self.chunk)
                                .into_iter()
                                .map(|d| Ok(StreamEvent::TextDelta(d))),
                        ),
                        ContentBlock::ToolUse { .. } => {
                            items.push(Ok(StreamEvent::ToolUse(block.clone())));
                        }
                        ContentBlock::ToolResult { .. } => {}
                    }
                }
                items.push(Ok(StreamEvent::Done(response)));
                items
            }
            ScriptedTurn::Fail(message) => vec![Err(ProviderError::Stream {
                provider: "scripted".into(),
                message,
            })],
        };
        Ok(Box::pin(futures_util::stream::iter(items)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Message;
    use futures_util::StreamExt as _;
    use serde_json::json;

    #[tokio::test]
    async fn replays_turns_in_order_and_records_requests() {
        let p = ScriptedProvider::new(vec![
            ScriptedTurn::tools(
                Some("let me look"),
                vec![("t1", "Read", json!({"file_path": "a"}))],
            ),
            ScriptedTurn::text("done"),
        ])
        .with_delta_size(4);
        let req = ModelRequest::new("m", vec![Message::user("hi")]);
        let mut s = p.stream(&req).await.unwrap();
        let mut seen = Vec::new();
        while let Some(e) = s.next().await {
            seen.push(e.unwrap());
        }
        assert_eq!(seen[0], StreamEvent::TextDelta("let ".into()));
        assert!(matches!(seen[3], StreamEvent::ToolUse(_)));
        let StreamEvent::Done(r) = &seen[4] else {
            panic!("no Done: {seen:?}")
        };
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        assert_eq!(p.complete(&req).await.unwrap().text(), "done");
        assert!(matches!(
            p.complete(&req).await,
            Err(ProviderError::ScriptExhausted(2))
        ));
        assert_eq!(p.requests().len(), 3);
    }

    #[tokio::test]
    async fn a_failing_turn_breaks_the_stream() {
        let p = ScriptedProvider::new(vec![ScriptedTurn::Fail("cut".into())]);
        let err = p
            .complete(&ModelRequest::new("m", vec![]))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), "stream");
    }
}
