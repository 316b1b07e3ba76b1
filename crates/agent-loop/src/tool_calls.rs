//! The tools the model is offered ([`specs`]) and how an answer's calls run: through the
//! executor, read-only calls of one answer together, each result logged in call order (and
//! replaced by an error when it would not fit the context), an interrupt cancelling what runs.

use std::sync::Arc;
use std::time::Instant;

use agent_core::events::{EventPayload, PermissionDecisionEvent, ToolResultEvent};
use agent_core::permissions::{Behavior, PermissionEngine};
use agent_core::tools::{CancellationFlag, Tool};
use agent_providers::{ContentBlock, Role, ToolSpec};
use agent_tools::executor::Execution;
use serde_json::{Value, json};

use crate::context::{estimate_tokens, output_text};
use crate::error::AgentError;
use crate::events::{AgentEvent, Sink};
use crate::hooks::MAX_INJECTED_CHARS;
use crate::runner::Runner;

/// How long a running tool call is given to stop after an interrupt (it sees its
/// cancellation flag; Bash ends its processes within a few tens of milliseconds). A call
/// still running then is abandoned and recorded as such.
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The provider-facing descriptions of the tools offered to the model: every tool except
/// those a deny rule without argument removes (`Bash`, `mcp__srv`, `mcp__srv__*`; see
/// [`PermissionEngine::denies_whole_tool`]), as Claude Code leaves them out of the context.
/// Such a tool stays registered with the executor, so a call naming it anyway is refused by
/// that rule as before.
pub(crate) fn specs(tools: &[Arc<dyn Tool>], engine: &PermissionEngine) -> Arc<[ToolSpec]> {
    tools
        .iter()
        .filter(|t| engine.denies_whole_tool(t.name()).is_none())
        .map(|t| ToolSpec {
            name: t.name().to_owned(),
            description: t.description().to_owned(),
            input_schema: t.input_schema(),
        })
        .collect()
}

impl Runner {
    /// Runs an answer's tool calls: consecutive read-only calls together, the others one at a
    /// time, results logged in call order.
    pub(crate) async fn run_tools(
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
}

/// What the loop does after an answer's tool calls.
pub(crate) enum ToolsOutcome {
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
