//! One provider call, streamed to the caller and interruptible, and how its answer is logged
//! (`assistant.message`, `tool.use`, each carrying the answer's ids, model and usage).

use std::sync::Arc;

use agent_core::events::{
    AssistantDelta, AssistantMessage, Event, EventPayload, TokenUsage, ToolUse,
};
use agent_providers::{
    ContentBlock, ModelRequest, ModelResponse, ProviderError, Role, StreamEvent, ToolChoice,
};
use futures_util::StreamExt as _;
use serde_json::Value;

use crate::error::AgentError;
use crate::events::{AgentEvent, Sink};
use crate::runner::{RunState, Runner};

/// How a provider call ended.
pub(crate) enum CallOutcome {
    Response(ModelResponse),
    Failed(ProviderError, String),
    Interrupted(String),
}

impl Runner {
    /// The request for the next call.
    pub(crate) fn request(&self, choice: ToolChoice) -> ModelRequest {
        let o = &self.core.options;
        ModelRequest {
            model: o.model.clone(),
            system: Some(self.system().to_owned()),
            messages: self.history.messages().to_vec(),
            tools: Arc::clone(&self.specs),
            tool_choice: choice,
            max_tokens: o.max_tokens,
            temperature: o.temperature,
        }
    }

    /// One provider call, streamed to the caller.
    pub(crate) async fn call(
        &mut self,
        sink: &Sink,
        choice: ToolChoice,
        state: &mut RunState,
    ) -> Result<CallOutcome, AgentError> {
        // A turn is what `max_turns` counts: a call that may end in tool calls (the summary
        // asked for at the limit, without tools, is not one).
        if !matches!(choice, ToolChoice::None) {
            state.turns += 1;
        }
        let request = self.request(choice);
        let seen = self.history.len();
        let provider = Arc::clone(&self.core.provider);
        let interrupt = self.interrupt.clone();
        let log_deltas = self.core.options.log_deltas;
        let mut partial = String::new();
        // With `log_deltas`, each fragment as it came, logged together after the call.
        let mut fragments: Vec<String> = Vec::new();
        let outcome = {
            let work = async {
                let retries = sink.clone();
                let observer: agent_providers::RetryObserver =
                    Arc::new(move |r| retries.send(AgentEvent::Retry(r.clone())));
                let mut stream =
                    agent_providers::report_retries(observer, provider.stream(&request)).await?;
                while let Some(item) = stream.next().await {
                    match item? {
                        StreamEvent::TextDelta(d) => {
                            partial.push_str(&d);
                            if log_deltas {
                                fragments.push(d.clone());
                            }
                            if sink.is_listening() {
                                sink.send(AgentEvent::TextDelta(d));
                                // Let the caller of `query` (polled in this task) see the
                                // fragment now, even when the stream has more ready.
                                tokio::task::yield_now().await;
                            }
                        }
                        StreamEvent::ToolUse(_) => {}
                        StreamEvent::Done(r) => return Ok(Some(r)),
                    }
                }
                Ok(None)
            };
            tokio::select! {
                biased;
                () = interrupt.wait() => None,
                r = work => Some(r),
            }
        };
        if !fragments.is_empty() {
            self.log(
                sink,
                fragments
                    .into_iter()
                    .map(|text_delta| EventPayload::AssistantDelta(AssistantDelta { text_delta }))
                    .collect(),
            )
            .await?;
        }
        Ok(match outcome {
            None => CallOutcome::Interrupted(partial),
            Some(Ok(Some(r))) => {
                state.usage.add(&r.usage);
                self.history
                    .measured(r.usage.context_tokens(), r.usage.output_tokens, seen);
                CallOutcome::Response(r)
            }
            Some(Ok(None)) => CallOutcome::Failed(
                ProviderError::Stream {
                    provider: provider.name().to_owned(),
                    message: "the stream ended before the response was complete".into(),
                },
                partial,
            ),
            Some(Err(e)) => CallOutcome::Failed(e, partial),
        })
    }

    /// Logs the text of an answer that broke off, so a resumed session shows it.
    pub(crate) async fn log_partial(
        &mut self,
        sink: &Sink,
        partial: &str,
    ) -> Result<(), AgentError> {
        if partial.is_empty() {
            return Ok(());
        }
        let mut e = Event::new(
            0,
            None,
            EventPayload::AssistantMessage(AssistantMessage::text(partial)),
        );
        e.extra.insert("partial".into(), Value::Bool(true));
        self.log_events(sink, vec![e]).await?;
        self.history
            .push(Role::Assistant, ContentBlock::text(partial));
        Ok(())
    }

    /// Logs an answer: its text as `assistant.message`, each call as `tool.use`, every one of
    /// them carrying the answer's fields (see [`Answer`]).
    pub(crate) async fn log_response(
        &mut self,
        sink: &Sink,
        response: &ModelResponse,
        calls: &[ContentBlock],
    ) -> Result<(), AgentError> {
        let answer = Answer::of(response);
        let text = response.text();
        let mut payloads = Vec::new();
        if !text.is_empty() {
            payloads.push(EventPayload::AssistantMessage(AssistantMessage {
                text: text.clone(),
                message_id: Some(answer.message_id.clone()),
                request_id: Some(answer.request_id.clone()),
                model: answer.model.clone(),
                usage: Some(answer.usage),
            }));
            self.history.push(Role::Assistant, ContentBlock::text(text));
        }
        for c in calls {
            if let ContentBlock::ToolUse { id, name, input } = c {
                payloads.push(EventPayload::ToolUse(ToolUse {
                    tool_use_id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    message_id: Some(answer.message_id.clone()),
                    request_id: Some(answer.request_id.clone()),
                    model: answer.model.clone(),
                    usage: Some(answer.usage),
                }));
                self.history.push(Role::Assistant, c.clone());
            }
        }
        self.log(sink, payloads).await?;
        Ok(())
    }
}

/// What every logged event of one model answer carries: the same message id, request id,
/// model and usage on its `assistant.message` and each of its `tool.use`s, so a reader counts
/// the answer's tokens once per `messageId` (as readers of Claude Code transcripts do).
struct Answer {
    /// The provider's message id, else a generated `msg_…`.
    message_id: String,
    /// `req_…`, generated once per provider call (the providers' own request ids are HTTP
    /// headers the adapters do not read).
    request_id: String,
    /// The model that answered, as the provider named it.
    model: Option<String>,
    /// The tokens of the call.
    usage: TokenUsage,
}

impl Answer {
    fn of(response: &ModelResponse) -> Self {
        let generated = |prefix: &str| format!("{prefix}_{}", uuid::Uuid::now_v7().simple());
        Self {
            message_id: response
                .id
                .clone()
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| generated("msg")),
            request_id: generated("req"),
            model: response.model.clone().filter(|m| !m.is_empty()),
            usage: response.usage.into(),
        }
    }
}
