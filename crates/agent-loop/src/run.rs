//! The loop itself: prompt → provider → tool calls through the gate → results → provider …
//! until the model stops, every step appended to the session log.

use agent_core::events::{ErrorEvent, Event, EventPayload, ResultEvent, TokenUsage, UserMessage};
use agent_core::hooks::{EventFields, HookEvent, StopInput};
use agent_core::tools::CancellationFlag;
use agent_providers::{ContentBlock, ModelResponse, Role, StopReason, ToolChoice};
use serde_json::{Map, json};

use crate::error::AgentError;
use crate::events::{AgentEvent, Sink};
use crate::hooks::blocks;
use crate::model_call::CallOutcome;
use crate::result::{RunResult, RunStopReason};
use crate::runner::{RunState, Runner};
use crate::tool_calls::ToolsOutcome;

/// What comes after a turn.
enum Next {
    /// Another turn.
    Continue,
    /// The end of the run: why, and the error when there was one.
    Finish(RunStopReason, Option<String>),
}

impl Runner {
    /// One prompt, to the end of the model's answer: the prompt submitted, then turns until
    /// one ends the run.
    pub(crate) async fn run(&mut self, prompt: &str, sink: &Sink) -> Result<RunResult, AgentError> {
        let cancel = self.interrupt.reset();
        let mut state = RunState::new(self.session.to_string());
        if let Some(reason) = self.submit(sink, prompt).await? {
            return self
                .finish(sink, state, RunStopReason::PromptBlocked, Some(reason))
                .await;
        }
        let mut stop_hook_active = false;
        loop {
            if let Next::Finish(reason, error) = self
                .turn(sink, &mut state, &cancel, &mut stop_hook_active)
                .await?
            {
                return self.finish(sink, state, reason, error).await;
            }
        }
    }

    /// UserPromptSubmit hooks, then the prompt logged and added to the history with the
    /// context the hooks gave. A block erases the prompt (nothing of it reaches the model):
    /// returns why.
    async fn submit(&mut self, sink: &Sink, prompt: &str) -> Result<Option<String>, AgentError> {
        let run = self
            .hooks(
                sink,
                HookEvent::UserPromptSubmit,
                self.hook_ctx.user_prompt_submit(prompt).fields,
            )
            .await?;
        if blocks(run.outcome.decision) || !run.outcome.continue_ {
            let reason = run
                .outcome
                .reason
                .clone()
                .or(run.outcome.stop_reason.clone())
                .unwrap_or_else(|| "a UserPromptSubmit hook blocked the prompt".into());
            return Ok(Some(reason));
        }
        self.log(
            sink,
            vec![EventPayload::UserMessage(UserMessage {
                text: prompt.to_owned(),
            })],
        )
        .await?;
        self.history.push(Role::User, ContentBlock::text(prompt));
        if let Some(text) = Self::injected(&run) {
            self.inject(sink, &text).await?;
        }
        Ok(None)
    }

    /// One turn: a provider call (the last one, without tools, when `max_turns` is used up;
    /// compacting first when the context is past the threshold), its tool calls, and, when the
    /// model is done, the Stop hooks.
    async fn turn(
        &mut self,
        sink: &Sink,
        state: &mut RunState,
        cancel: &CancellationFlag,
        stop_hook_active: &mut bool,
    ) -> Result<Next, AgentError> {
        if self.interrupt.is_set() {
            return Ok(Next::Finish(RunStopReason::Interrupted, None));
        }
        let forced = state.turns >= self.core.options.max_turns;
        if forced {
            let note = format!(
                "You have used all {} turns of this run. Do not call any tool. Answer now with a summary of what you did, what you found, and what is left to do.",
                self.core.options.max_turns
            );
            self.inject(sink, &note).await?;
        }
        self.compact_if_needed(sink, state).await?;
        let choice = if forced {
            ToolChoice::None
        } else {
            ToolChoice::Auto
        };
        let response = match self.call(sink, choice, state).await? {
            CallOutcome::Response(r) => r,
            CallOutcome::Interrupted(partial) => {
                self.log_partial(sink, &partial).await?;
                return Ok(Next::Finish(RunStopReason::Interrupted, None));
            }
            CallOutcome::Failed(e, partial) => {
                self.log_partial(sink, &partial).await?;
                self.log(
                    sink,
                    vec![EventPayload::Error(ErrorEvent {
                        message: e.to_string(),
                        error_type: Some(format!("provider_{}", e.kind())),
                    })],
                )
                .await?;
                state.final_text = partial;
                return Ok(Next::Finish(RunStopReason::Error, Some(e.to_string())));
            }
        };
        let calls: Vec<ContentBlock> = if forced {
            Vec::new()
        } else {
            response.tool_uses().cloned().collect()
        };
        self.log_response(sink, &response, &calls).await?;
        state.final_text = response.text();
        if !calls.is_empty() {
            return Ok(match self.run_tools(sink, &calls, cancel).await? {
                ToolsOutcome::Continue => Next::Continue,
                ToolsOutcome::Stop(reason) => {
                    Next::Finish(RunStopReason::HookStopped, Some(reason))
                }
                ToolsOutcome::Interrupted => Next::Finish(RunStopReason::Interrupted, None),
            });
        }
        if forced {
            return Ok(Next::Finish(RunStopReason::MaxTurns, None));
        }
        match response.stop_reason {
            StopReason::PauseTurn => return Ok(Next::Continue),
            StopReason::MaxTokens => return Ok(Next::Finish(RunStopReason::MaxTokens, None)),
            StopReason::Refusal => return Ok(Next::Finish(RunStopReason::Refusal, None)),
            _ => {}
        }
        self.stop_hooks(sink, state, &response, stop_hook_active)
            .await
    }

    /// The model is done: Stop (or SubagentStop) hooks may send it back to work, once.
    async fn stop_hooks(
        &mut self,
        sink: &Sink,
        state: &RunState,
        response: &ModelResponse,
        stop_hook_active: &mut bool,
    ) -> Result<Next, AgentError> {
        let event = if self.agent_id.is_some() {
            HookEvent::SubagentStop
        } else {
            HookEvent::Stop
        };
        let run = self
            .hooks(
                sink,
                event,
                EventFields::Stop(StopInput {
                    stop_hook_active: *stop_hook_active,
                    last_assistant_message: Some(state.final_text.clone()),
                    agent_transcript_path: None,
                    extra: Map::new(),
                }),
            )
            .await?;
        if !run.outcome.continue_ {
            let reason = run.outcome.stop_reason.clone().unwrap_or_default();
            return Ok(Next::Finish(RunStopReason::HookStopped, Some(reason)));
        }
        if blocks(run.outcome.decision) && !*stop_hook_active {
            let reason = run
                .outcome
                .reason
                .clone()
                .unwrap_or_else(|| "a Stop hook asked to continue".into());
            self.inject(sink, &format!("Stop hook feedback: {reason}"))
                .await?;
            *stop_hook_active = true;
            return Ok(Next::Continue);
        }
        let reason = match response.stop_reason {
            StopReason::StopSequence => RunStopReason::StopSequence,
            _ => RunStopReason::EndTurn,
        };
        Ok(Next::Finish(reason, None))
    }

    /// Ends a run: the `result` event, and the caller's last event.
    pub(crate) async fn finish(
        &mut self,
        sink: &Sink,
        state: RunState,
        stop_reason: RunStopReason,
        error: Option<String>,
    ) -> Result<RunResult, AgentError> {
        let is_error = stop_reason == RunStopReason::Error;
        let final_text = match (&error, state.final_text.is_empty()) {
            (Some(e), true) if !is_error => e.clone(),
            _ => state.final_text.clone(),
        };
        let mut e = Event::new(
            0,
            None,
            EventPayload::Result(ResultEvent {
                final_text: final_text.clone(),
                stop_reason: Some(stop_reason.as_str().to_owned()),
                usage: serde_json::to_value(TokenUsage::from(state.usage)).ok(),
            }),
        );
        e.extra.insert("turns".into(), json!(state.turns));
        if let Some(err) = &error {
            e.extra.insert("error".into(), json!(err));
        }
        self.log_events(sink, vec![e]).await?;
        let result = RunResult {
            session_id: state.session_id,
            final_text,
            stop_reason,
            turns: state.turns,
            usage: state.usage,
            is_error,
            error,
        };
        sink.send(AgentEvent::Finished(result.clone()));
        Ok(result)
    }
}
