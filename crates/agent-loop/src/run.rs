//! The loop itself: prompt → provider → tool calls through the gate → results → provider …
//! until the model stops, every step appended to the session log.

use std::sync::Arc;
use std::time::Instant;

use agent_core::events::{
    AssistantDelta, AssistantMessage, Compaction, ErrorEvent, Event, EventPayload,
    PermissionDecisionEvent, ResultEvent, SystemInit, TokenUsage, ToolResultEvent, ToolUse,
    UserMessage,
};
use agent_core::hooks::{
    CompactInput, Decision, EventFields, HookContext, HookEvent, HookExecution, HookRegistry,
    SessionEndInput, SessionStartInput, StopInput,
};
use agent_core::permissions::Behavior;
use agent_core::tools::CancellationFlag;
use agent_providers::{
    ContentBlock, ModelRequest, ModelResponse, Provider, ProviderError, Role, StopReason,
    StreamEvent, ToolChoice, ToolSpec, Usage,
};
use futures_util::StreamExt as _;
use serde_json::{Map, Value, json};

use super::context::{History, estimate_tokens, fixed_tokens, output_text, reminder};
use super::events::{AgentEvent, Interrupt, Sink};
use super::options::AgentOptions;
use super::questions::SideEvents;
use super::result::{RunResult, RunStopReason};
use agent_store::{SessionBackend, SessionId, StoreError};
use agent_tools::executor::{Execution, ToolExecutor};

/// The instructions of a system prompt when none are given: what the agent is and how it
/// works with the tools and the permission gate. It claims nothing about where the agent runs;
/// [`super::SystemPrompt`] adds those facts (the folder, the shadow workspace, the mode, ...).
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a coding agent working in the user's project. \
Use the tools to read, search, edit and run commands in the working directory. Every tool call \
is checked against the user's permission rules and may be refused; when one is refused, do not \
retry it unchanged. Keep answers short and say what you changed.";

/// Hook output injected into the model's context is capped at this many characters.
pub const MAX_INJECTED_CHARS: usize = 10_000;

/// How long a running tool call is given to stop after an interrupt (it sees its
/// cancellation flag; Bash ends its processes within a few tens of milliseconds). A call
/// still running then is abandoned and recorded as such.
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Why the agent could not start or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// Occurs when the session store fails.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Occurs when the options are inconsistent.
    #[error("{0}")]
    Options(String),
}

/// Everything a loop needs, shared with its subagents.
pub(crate) struct Core {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) store: Arc<dyn SessionBackend>,
    pub(crate) hooks: Arc<HookRegistry>,
    pub(crate) options: AgentOptions,
    pub(crate) side: SideEvents,
}

/// One session's loop.
pub(crate) struct Runner {
    pub(crate) core: Arc<Core>,
    pub(crate) executor: ToolExecutor,
    pub(crate) session: SessionId,
    pub(crate) history: History,
    pub(crate) hook_ctx: HookContext,
    pub(crate) interrupt: Interrupt,
    /// Inside a subagent: its id (Stop hooks become SubagentStop).
    pub(crate) agent_id: Option<String>,
    pub(crate) specs: Arc<[ToolSpec]>,
    /// Estimated tokens of the system prompt and the tool specs, computed once.
    pub(crate) fixed: std::sync::OnceLock<u64>,
    /// The Claude-compatible transcript hooks read, when one is kept.
    pub(crate) transcript: Option<std::path::PathBuf>,
}

enum CallOutcome {
    Response(ModelResponse),
    Failed(ProviderError, String),
    Interrupted(String),
}

impl Runner {
    fn system(&self) -> &str {
        self.core
            .options
            .system_prompt
            .as_deref()
            .unwrap_or(DEFAULT_SYSTEM_PROMPT)
    }

    pub(crate) fn window(&self) -> u64 {
        self.core
            .options
            .context_window
            .unwrap_or_else(|| self.core.provider.context_window(&self.core.options.model))
            .max(1)
    }

    /// Appends events to the log and shows them to the caller.
    pub(crate) async fn log(
        &self,
        sink: &Sink,
        payloads: Vec<EventPayload>,
    ) -> Result<Vec<Event>, AgentError> {
        self.log_events(
            sink,
            payloads
                .into_iter()
                .map(|p| Event::new(0, None, p))
                .collect(),
        )
        .await
    }

    async fn log_events(&self, sink: &Sink, events: Vec<Event>) -> Result<Vec<Event>, AgentError> {
        if events.is_empty() {
            return Ok(events);
        }
        let written = self.core.store.append(&self.session, events).await?;
        if sink.is_listening() {
            for e in &written {
                sink.send(AgentEvent::Logged(e.clone()));
            }
        }
        Ok(written)
    }

    /// A `user.message` the runtime injected (hook context, notices to the model).
    fn meta_message(text: &str) -> Event {
        let mut e = Event::new(
            0,
            None,
            EventPayload::UserMessage(UserMessage {
                text: reminder(text),
            }),
        );
        e.extra.insert("isMeta".into(), Value::Bool(true));
        e
    }

    /// Rewrites the transcript hooks read (`transcript_path`) from the log, when one is kept.
    /// A failure is reported, not fatal: the hooks still run.
    pub(crate) async fn write_transcript(&self) {
        let Some(path) = &self.transcript else {
            return;
        };
        let text = match self
            .core
            .store
            .export(&self.session, agent_store::ExportFormat::Claude)
            .await
        {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "cannot export the transcript for hooks");
                return;
            }
        };
        let tmp = path.with_extension("jsonl.tmp");
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&tmp, text))
            .and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            tracing::warn!(error = %e, path = %path.display(), "cannot write the transcript for hooks");
        }
    }

    /// Runs hooks of one event and logs what ran; returns the execution.
    pub(crate) async fn hooks(
        &self,
        sink: &Sink,
        event: HookEvent,
        fields: EventFields,
    ) -> Result<HookExecution, AgentError> {
        if !self.core.hooks.has_hooks(event) {
            return Ok(HookExecution::default());
        }
        self.write_transcript().await;
        let mut ctx = self.hook_ctx.clone();
        ctx.permission_mode = Some(self.executor.engine().mode());
        let run = self.core.hooks.execute(ctx.input(event, fields)).await;
        self.log(
            sink,
            run.runs
                .iter()
                .map(|r| EventPayload::HookRun(r.to_event(event)))
                .collect(),
        )
        .await?;
        for n in run
            .outcome
            .notices
            .iter()
            .chain(run.outcome.system_message.iter())
        {
            sink.send(AgentEvent::Notice(n.clone()));
        }
        Ok(run)
    }

    /// Context hooks gave for the model, capped.
    fn injected(run: &HookExecution) -> Option<String> {
        let text = run.outcome.additional_context.join("\n");
        if text.trim().is_empty() {
            return None;
        }
        Some(if text.chars().count() > MAX_INJECTED_CHARS {
            let cut: String = text.chars().take(MAX_INJECTED_CHARS).collect();
            format!("{cut}\n[hook output cut at {MAX_INJECTED_CHARS} characters]")
        } else {
            text
        })
    }

    /// Logs injected context as an `isMeta` user message and adds it to the history.
    async fn inject(&mut self, sink: &Sink, text: &str) -> Result<(), AgentError> {
        self.log_events(sink, vec![Self::meta_message(text)])
            .await?;
        self.history
            .push(Role::User, ContentBlock::text(reminder(text)));
        Ok(())
    }

    /// SessionStart hooks (`startup`, `resume` or `fork`); their context goes to the model.
    pub(crate) async fn session_start(
        &mut self,
        sink: &Sink,
        source: &str,
    ) -> Result<(), AgentError> {
        let run = self
            .hooks(
                sink,
                HookEvent::SessionStart,
                EventFields::SessionStart(SessionStartInput {
                    source: source.to_owned(),
                    model: Some(self.core.options.model.clone()),
                    extra: Map::new(),
                }),
            )
            .await?;
        if let Some(text) = Self::injected(&run) {
            self.inject(sink, &text).await?;
        }
        Ok(())
    }

    /// SessionEnd hooks.
    pub(crate) async fn session_end(&self, reason: &str) -> Result<(), AgentError> {
        self.hooks(
            &Sink::default(),
            HookEvent::SessionEnd,
            EventFields::SessionEnd(SessionEndInput {
                reason: reason.to_owned(),
                extra: Map::new(),
            }),
        )
        .await?;
        Ok(())
    }

    /// One prompt, to the end of the model's answer.
    pub(crate) async fn run(&mut self, prompt: &str, sink: &Sink) -> Result<RunResult, AgentError> {
        let cancel = self.interrupt.reset();
        let mut state = RunState::new(self.session.to_string());

        // UserPromptSubmit: a block erases the prompt (nothing of it reaches the model).
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
            return self
                .finish(sink, state, RunStopReason::PromptBlocked, Some(reason))
                .await;
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

        let mut stop_hook_active = false;
        loop {
            if self.interrupt.is_set() {
                return self
                    .finish(sink, state, RunStopReason::Interrupted, None)
                    .await;
            }
            let forced = state.turns >= self.core.options.max_turns;
            if forced {
                let note = format!(
                    "You have used all {} turns of this run. Do not call any tool. Answer now with a summary of what you did, what you found, and what is left to do.",
                    self.core.options.max_turns
                );
                self.inject(sink, &note).await?;
            }
            self.compact_if_needed(sink, &mut state).await?;
            let choice = if forced {
                ToolChoice::None
            } else {
                ToolChoice::Auto
            };
            let response = match self.call(sink, choice, &mut state).await? {
                CallOutcome::Response(r) => r,
                CallOutcome::Interrupted(partial) => {
                    self.log_partial(sink, &partial).await?;
                    return self
                        .finish(sink, state, RunStopReason::Interrupted, None)
                        .await;
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
                    return self
                        .finish(sink, state, RunStopReason::Error, Some(e.to_string()))
                        .await;
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
                match self.run_tools(sink, &calls, &cancel).await? {
                    ToolsOutcome::Continue => continue,
                    ToolsOutcome::Stop(reason) => {
                        return self
                            .finish(sink, state, RunStopReason::HookStopped, Some(reason))
                            .await;
                    }
                    ToolsOutcome::Interrupted => {
                        return self
                            .finish(sink, state, RunStopReason::Interrupted, None)
                            .await;
                    }
                }
            }
            if forced {
                return self
                    .finish(sink, state, RunStopReason::MaxTurns, None)
                    .await;
            }
            match response.stop_reason {
                StopReason::PauseTurn => continue,
                StopReason::MaxTokens => {
                    return self
                        .finish(sink, state, RunStopReason::MaxTokens, None)
                        .await;
                }
                StopReason::Refusal => {
                    return self.finish(sink, state, RunStopReason::Refusal, None).await;
                }
                _ => {}
            }
            // The model is done: Stop (or SubagentStop) hooks may send it back to work.
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
                        stop_hook_active,
                        last_assistant_message: Some(state.final_text.clone()),
                        agent_transcript_path: None,
                        extra: Map::new(),
                    }),
                )
                .await?;
            if !run.outcome.continue_ {
                let reason = run.outcome.stop_reason.clone().unwrap_or_default();
                return self
                    .finish(sink, state, RunStopReason::HookStopped, Some(reason))
                    .await;
            }
            if blocks(run.outcome.decision) && !stop_hook_active {
                let reason = run
                    .outcome
                    .reason
                    .clone()
                    .unwrap_or_else(|| "a Stop hook asked to continue".into());
                self.inject(sink, &format!("Stop hook feedback: {reason}"))
                    .await?;
                stop_hook_active = true;
                continue;
            }
            let reason = match response.stop_reason {
                StopReason::StopSequence => RunStopReason::StopSequence,
                _ => RunStopReason::EndTurn,
            };
            return self.finish(sink, state, reason, None).await;
        }
    }

    /// Logs the text of an answer that broke off, so a resumed session shows it.
    async fn log_partial(&mut self, sink: &Sink, partial: &str) -> Result<(), AgentError> {
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

    /// The request for the next call.
    fn request(&self, choice: ToolChoice) -> ModelRequest {
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
    async fn call(
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

    /// Logs an answer: its text as `assistant.message`, each call as `tool.use`, every one of
    /// them carrying the answer's fields (see [`Answer`]).
    async fn log_response(
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

    /// Runs an answer's tool calls: consecutive read-only calls together, the others one at a
    /// time, results logged in call order.
    async fn run_tools(
        &mut self,
        sink: &Sink,
        calls: &[ContentBlock],
        cancel: &CancellationFlag,
    ) -> Result<ToolsOutcome, AgentError> {
        let mut i = 0;
        let mut contexts: Vec<String> = Vec::new();
        let mut stop: Option<String> = None;
        let mut interrupted = false;
        while i < calls.len() {
            let read_only = |c: &ContentBlock| match c {
                ContentBlock::ToolUse { name, input, .. } => {
                    input.is_object() && self.executor.tool(name).is_some_and(|t| t.is_read_only())
                }
                _ => false,
            };
            let mut j = i + 1;
            if self.core.options.parallel_read_only && read_only(&calls[i]) {
                while j < calls.len() && read_only(&calls[j]) {
                    j += 1;
                }
            }
            let batch = &calls[i..j];
            i = j;
            self.write_transcript().await;
            let results: Vec<CallResult> = if interrupted || stop.is_some() {
                batch
                    .iter()
                    .map(|c| CallResult::skipped(c, stop.is_some()))
                    .collect()
            } else {
                futures_util::future::join_all(
                    batch
                        .iter()
                        .map(|c| self.cancellable_call(c, cancel.clone())),
                )
                .await
            };
            interrupted |= self.interrupt.is_set();
            for r in results {
                let mut payloads: Vec<EventPayload> = self.core.side.take(&r.tool_use_id);
                if let Some(exec) = &r.execution {
                    payloads.extend(exec.hook_runs.iter().cloned().map(EventPayload::HookRun));
                    for n in &exec.notices {
                        sink.send(AgentEvent::Notice(n.clone()));
                    }
                    let d = &exec.decision;
                    payloads.push(EventPayload::PermissionDecision(PermissionDecisionEvent {
                        question_id: r.tool_use_id.clone(),
                        allowed: d.behavior == Behavior::Allow,
                        decision: Some(d.behavior.as_str().to_owned()),
                        step: Some(d.step.as_str().to_owned()),
                        rule: d.rule.as_ref().map(|x| x.text.clone()),
                        rule_source: d.rule.as_ref().map(|x| x.origin.to_string()),
                        reason: Some(d.reason.clone()),
                    }));
                    contexts.extend(exec.additional_context.iter().cloned());
                    if let Some(s) = &exec.stop {
                        stop.get_or_insert_with(|| s.clone());
                    }
                    if d.interrupt {
                        interrupted = true;
                    }
                }
                let window = self.window();
                let mut result = r.result;
                let tokens = estimate_tokens(&output_text(&result.output));
                let budget = (window as f64 * self.core.options.tool_result_budget) as u64;
                if tokens > budget {
                    result = ToolResultEvent {
                        tool_use_id: result.tool_use_id,
                        output: Value::String(format!(
                            "The tool's output was too large for the context: about {tokens} tokens, more than the {budget}-token budget for one result ({:.0} % of the {window}-token window). It was not kept. Ask for less (a narrower search, an offset and limit, a filter).",
                            self.core.options.tool_result_budget * 100.0
                        )),
                        is_error: true,
                        error_type: Some("output_too_large".into()),
                        error_message: Some(format!("about {tokens} tokens; budget {budget}")),
                    };
                }
                self.history.push(
                    Role::User,
                    ContentBlock::ToolResult {
                        tool_use_id: result.tool_use_id.clone(),
                        content: output_text(&result.output),
                        is_error: result.is_error,
                    },
                );
                payloads.push(EventPayload::ToolResult(result));
                self.log(sink, payloads).await?;
            }
        }
        let context = contexts.join("\n");
        if !context.trim().is_empty() {
            let capped: String = context.chars().take(MAX_INJECTED_CHARS).collect();
            self.inject(sink, &capped).await?;
        }
        Ok(if interrupted || self.interrupt.is_set() {
            ToolsOutcome::Interrupted
        } else if let Some(s) = stop {
            ToolsOutcome::Stop(s)
        } else {
            ToolsOutcome::Continue
        })
    }

    /// [`Self::one_call`], stopped by an interrupt: the call sees its cancellation flag and
    /// has [`CANCEL_GRACE`] to end; its result then says it was cancelled after it started
    /// (or, when it did not end in time, that it was abandoned). A call that finished its
    /// work regardless keeps its real result.
    async fn cancellable_call(&self, call: &ContentBlock, cancel: CancellationFlag) -> CallResult {
        let started = Instant::now();
        let mut run = std::pin::pin!(self.one_call(call, cancel));
        let done = tokio::select! {
            biased;
            r = &mut run => r,
            () = self.interrupt.wait() => {
                match tokio::time::timeout(CANCEL_GRACE, &mut run).await {
                    Ok(r) => r,
                    Err(_) => return CallResult::abandoned(call, started.elapsed()),
                }
            }
        };
        if self.interrupt.is_set() {
            done.cancelled()
        } else {
            done
        }
    }

    /// One call through the executor (or refused before it, for an input that is not JSON).
    async fn one_call(&self, call: &ContentBlock, cancel: CancellationFlag) -> CallResult {
        let ContentBlock::ToolUse { id, name, input } = call else {
            return CallResult::skipped(call, false);
        };
        if let Some(problem) = call.tool_input_error() {
            return CallResult {
                tool_use_id: id.clone(),
                execution: None,
                result: ToolResultEvent {
                    tool_use_id: id.clone(),
                    output: Value::String(format!(
                        "{problem}; the call was not run. Send the input as one JSON object matching the tool's schema."
                    )),
                    is_error: true,
                    error_type: Some("invalid_input".into()),
                    error_message: Some(problem),
                },
            };
        }
        let exec = self
            .executor
            .execute_cancellable(name, input.clone(), id, cancel)
            .await;
        let result = result_event(id, &exec);
        CallResult {
            tool_use_id: id.clone(),
            execution: Some(exec),
            result,
        }
    }

    /// Compacts when the context is past the threshold: PreCompact hooks, a summarising call
    /// without tools, a `compaction` event replacing everything so far, PostCompact hooks.
    async fn compact_if_needed(
        &mut self,
        sink: &Sink,
        state: &mut RunState,
    ) -> Result<(), AgentError> {
        let window = self.window();
        let fixed = *self
            .fixed
            .get_or_init(|| fixed_tokens(self.system(), &self.specs));
        let used = self.history.tokens(fixed);
        let threshold = (window as f64 * self.core.options.compact_at) as u64;
        if used < threshold || self.history.len() < 2 {
            return Ok(());
        }
        self.compact(sink, state, "auto", None).await
    }

    /// Compacts the conversation now (`trigger`: `auto` or `manual`).
    pub(crate) async fn compact(
        &mut self,
        sink: &Sink,
        state: &mut RunState,
        trigger: &str,
        instructions: Option<String>,
    ) -> Result<(), AgentError> {
        let fields = || {
            EventFields::Compact(CompactInput {
                trigger: trigger.to_owned(),
                custom_instructions: instructions.clone(),
                extra: Map::new(),
            })
        };
        self.hooks(sink, HookEvent::PreCompact, fields()).await?;
        let started = Instant::now();
        let mut request = self.request(ToolChoice::None);
        let mut ask = "Summarise the conversation so far for your own later use: the user's goals and instructions, what was done (files read and changed, commands run and their results), decisions and their reasons, and what remains to do. Be complete and concrete; this summary replaces the conversation.".to_owned();
        if let Some(i) = &instructions {
            ask.push_str("\n\nFocus: ");
            ask.push_str(i);
        }
        match request.messages.last_mut() {
            Some(last) if last.role == Role::User => {
                last.content.push(ContentBlock::text(ask));
            }
            _ => request.messages.push(agent_providers::Message::user(ask)),
        }
        let summary = match self.core.provider.complete(&request).await {
            Ok(r) => {
                state.usage.add(&r.usage);
                r.text()
            }
            Err(e) => {
                // Compaction failing is not fatal: go on with the full history and say so.
                self.log(
                    sink,
                    vec![EventPayload::Error(ErrorEvent {
                        message: format!("compaction failed: {e}"),
                        error_type: Some("compaction_failed".into()),
                    })],
                )
                .await?;
                return Ok(());
            }
        };
        let loaded = self.core.store.metadata(&self.session).await?;
        let to_seq = loaded.last_seq;
        let from_seq = self.first_conversation_seq().await?.unwrap_or(1);
        let mut e = Event::new(
            0,
            None,
            EventPayload::Compaction(Compaction {
                summary: summary.clone(),
                from_seq,
                to_seq,
            }),
        );
        e.extra.insert("trigger".into(), json!(trigger));
        e.extra.insert(
            "durationMs".into(),
            json!(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
        );
        self.log_events(sink, vec![e]).await?;
        self.history.replace_with_summary(&summary);
        self.hooks(sink, HookEvent::PostCompact, fields()).await?;
        Ok(())
    }

    /// The `seq` of the first conversation event not already replaced by a compaction.
    async fn first_conversation_seq(&self) -> Result<Option<u64>, AgentError> {
        let messages = self.core.store.messages(&self.session, None).await?;
        Ok(messages.first().map(|m| match m.content {
            agent_store::Content::Summary { from_seq, .. } => from_seq,
            _ => m.seq,
        }))
    }

    /// Ends a run: the `result` event, and the caller's last event.
    async fn finish(
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

    /// The `system.init` event of a session this loop (re)starts.
    pub(crate) fn init_event(&self, cwd: &str) -> EventPayload {
        EventPayload::SystemInit(SystemInit {
            session_id: self.session.to_string(),
            cwd: Some(cwd.to_owned()),
            model: Some(self.core.options.model.clone()),
            tools: self.specs.iter().map(|t| t.name.clone()).collect(),
            permission_mode: Some(self.executor.engine().mode().as_str().to_owned()),
            git_branch: None,
        })
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

/// Counters of one run.
pub(crate) struct RunState {
    session_id: String,
    pub(crate) turns: u32,
    pub(crate) usage: Usage,
    final_text: String,
}

impl RunState {
    pub(crate) fn new(session_id: String) -> Self {
        Self {
            session_id,
            turns: 0,
            usage: Usage::default(),
            final_text: String::new(),
        }
    }
}

enum ToolsOutcome {
    Continue,
    Stop(String),
    Interrupted,
}

struct CallResult {
    tool_use_id: String,
    execution: Option<Execution>,
    result: ToolResultEvent,
}

impl CallResult {
    /// A call that did not run: the run was interrupted before it (`cancelled`) or a hook
    /// stopped it.
    fn skipped(call: &ContentBlock, stopped: bool) -> Self {
        let id = match call {
            ContentBlock::ToolUse { id, .. } => id.clone(),
            _ => String::new(),
        };
        let (kind, text) = if stopped {
            ("hook_stopped", "not run: a hook stopped the run")
        } else {
            (
                "cancelled",
                "not run: the user interrupted the run before this call started",
            )
        };
        Self {
            tool_use_id: id.clone(),
            execution: None,
            result: ToolResultEvent {
                tool_use_id: id,
                output: Value::String(text.into()),
                is_error: true,
                error_type: Some(kind.into()),
                error_message: Some(text.into()),
            },
        }
    }
}

impl CallResult {
    /// The result of a call that ended after an interrupt, as the session records it: a call
    /// the tool stopped for the cancellation says it was cancelled by the user after it
    /// started, for how long it ran and what was ended (the tool's `stoppedBy`), keeping
    /// what it printed; a call cancelled before its tool started says it did not run; a call
    /// that completed anyway keeps its result.
    fn cancelled(mut self) -> Self {
        let Some(exec) = &self.execution else {
            return self;
        };
        let stopped = match &exec.result {
            Some(Err(agent_core::tools::ToolError::Cancelled)) => true,
            Some(Ok(out)) => out.output.get("cancelled") == Some(&Value::Bool(true)),
            _ => false,
        };
        if !stopped {
            return self;
        }
        if !exec.started {
            let text = "not run: the user interrupted the run before the call started";
            self.result = ToolResultEvent {
                tool_use_id: self.tool_use_id.clone(),
                output: Value::String(text.into()),
                is_error: true,
                error_type: Some("cancelled".into()),
                error_message: Some(text.into()),
            };
            return self;
        }
        let ended = match &exec.result {
            Some(Ok(out)) => out
                .output
                .get("stoppedBy")
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        }
        .unwrap_or_else(|| "the tool stopped when asked".to_owned());
        let message = format!(
            "cancelled by the user after it started: it ran for {}; {ended}",
            seconds(exec.duration_ms)
        );
        let output = match &exec.result {
            Some(Ok(out)) => match out.output.clone() {
                Value::Object(mut fields) => {
                    fields.insert("cancelled".into(), Value::String(message.clone()));
                    Value::Object(fields)
                }
                other => json!({"cancelled": message, "output": other}),
            },
            _ => Value::String(message.clone()),
        };
        self.result = ToolResultEvent {
            tool_use_id: self.tool_use_id.clone(),
            output,
            is_error: true,
            error_type: Some("cancelled".into()),
            error_message: Some(message),
        };
        self
    }

    /// A call that was still running [`CANCEL_GRACE`] after the interrupt: no longer waited
    /// for; what it did is unknown.
    fn abandoned(call: &ContentBlock, ran: std::time::Duration) -> Self {
        let id = match call {
            ContentBlock::ToolUse { id, .. } => id.clone(),
            _ => String::new(),
        };
        let text = format!(
            "cancelled by the user after it started: it ran for {}; it did not stop within {} s of being asked and was abandoned, so it may still have taken effect",
            seconds(u64::try_from(ran.as_millis()).unwrap_or(u64::MAX)),
            CANCEL_GRACE.as_secs()
        );
        Self {
            tool_use_id: id.clone(),
            execution: None,
            result: ToolResultEvent {
                tool_use_id: id,
                output: Value::String(text.clone()),
                is_error: true,
                error_type: Some("cancelled".into()),
                error_message: Some(text),
            },
        }
    }
}

/// `1.2 s` for 1234 ms.
fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// Whether a merged hook decision blocks what its event announces.
fn blocks(d: Decision) -> bool {
    matches!(d, Decision::Block | Decision::Deny)
}

/// The `tool.result` of an execution.
fn result_event(id: &str, exec: &Execution) -> ToolResultEvent {
    match &exec.result {
        Some(Ok(out)) => ToolResultEvent {
            tool_use_id: id.to_owned(),
            output: out.output.clone(),
            is_error: out.is_error,
            error_type: None,
            error_message: None,
        },
        Some(Err(e)) => ToolResultEvent {
            tool_use_id: id.to_owned(),
            output: Value::String(e.to_string()),
            is_error: true,
            error_type: Some(e.error_type().to_owned()),
            error_message: Some(e.to_string()),
        },
        None => {
            let reason = format!("Permission denied: {}", exec.decision.reason);
            ToolResultEvent {
                tool_use_id: id.to_owned(),
                output: Value::String(reason.clone()),
                is_error: true,
                error_type: Some("permission_denied".into()),
                error_message: Some(reason),
            }
        }
    }
}
