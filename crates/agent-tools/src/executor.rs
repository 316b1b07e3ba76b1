//! The one path a tool call takes: PreToolUse hooks and the permission engine
//! (`agent_core::hooks::gate::check_tool_call`, which honours a hook's `updatedInput`), an
//! ask with no prompter becoming a deny, the tool itself (which does its own sandboxed file
//! access), then PostToolUse (or PostToolUseFailure) hooks, whose `additionalContext` is
//! kept for the model. Each call runs in a `tracing` span.

use std::sync::Arc;
use std::time::Instant;

use agent_core::events::HookRun;
use agent_core::hooks::{EventFields, HookContext, HookEvent, HookRegistry, check_tool_call};
use agent_core::permissions::{Behavior, PermissionDecision, PermissionEngine, ToolCall};
use agent_core::tools::{CancellationFlag, Tool, ToolContext, ToolError, ToolOutput};
use agent_core::view::PathView;
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

/// What happened to one call.
#[derive(Debug)]
pub struct Execution {
    /// The tool's name.
    pub tool: String,
    /// The input the tool ran with (after a hook's `updatedInput`).
    pub input: Value,
    /// The gate's decision, with the step and rule that made it.
    pub decision: PermissionDecision,
    /// The tool's result, when it ran: its output or its error.
    pub result: Option<Result<ToolOutput, ToolError>>,
    /// Context hooks added for the model (PreToolUse and PostToolUse).
    pub additional_context: Vec<String>,
    /// Whether the tool itself was called (`false` when the gate refused the call, no tool
    /// has the name, or the call was cancelled before the tool started).
    pub started: bool,
    /// How long the tool ran, in milliseconds.
    pub duration_ms: u64,
    /// The hooks that ran for the call (PreToolUse, then PostToolUse or PostToolUseFailure),
    /// as `hook.run` payloads for the session log.
    pub hook_runs: Vec<HookRun>,
    /// Set when a hook answered `continue: false`: the run must stop, with this reason.
    pub stop: Option<String>,
    /// Warnings for the user from the hooks (`systemMessage`, non-blocking failures).
    pub notices: Vec<String>,
}

impl Execution {
    /// Whether the tool ran and succeeded (its output not marked as an error).
    pub fn succeeded(&self) -> bool {
        matches!(&self.result, Some(Ok(o)) if !o.is_error)
    }

    /// The result as JSON: the decision (behaviour, step, rule, reason), then `output` and
    /// `isError`, or `errorType` and `errorMessage`.
    pub fn to_json(&self) -> Value {
        let d = &self.decision;
        let mut v = json!({
            "tool": self.tool,
            "decision": d.behavior.as_str(),
            "step": d.step.as_str(),
            "rule": d.rule.as_ref().map(|r| r.text.clone()),
            "reason": d.reason,
            "input": self.input,
            "durationMs": self.duration_ms,
        });
        match &self.result {
            Some(Ok(o)) => {
                v["output"] = o.output.clone();
                v["isError"] = json!(o.is_error);
            }
            Some(Err(e)) => {
                v["isError"] = json!(true);
                v["errorType"] = json!(e.error_type());
                v["errorMessage"] = json!(e.to_string());
            }
            None => v["isError"] = json!(true),
        }
        if !self.additional_context.is_empty() {
            v["additionalContext"] = json!(self.additional_context);
        }
        v
    }
}

/// Runs tool calls through the gate.
pub struct ToolExecutor {
    tools: Vec<Arc<dyn Tool>>,
    engine: Arc<PermissionEngine>,
    hooks: Arc<HookRegistry>,
    context: HookContext,
    view: Option<PathView>,
}

impl std::fmt::Debug for ToolExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolExecutor")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl ToolExecutor {
    /// An executor for `tools`, deciding with `engine` and running `hooks` in `context`
    /// (session id and working directory).
    pub fn new(
        tools: Vec<Arc<dyn Tool>>,
        engine: PermissionEngine,
        hooks: Arc<HookRegistry>,
        context: HookContext,
    ) -> Self {
        Self::shared(tools, Arc::new(engine), hooks, context)
    }

    /// An executor deciding with an engine shared with other executors (a subagent's shares
    /// its parent's rules, mode and session grants).
    pub fn shared(
        tools: Vec<Arc<dyn Tool>>,
        engine: Arc<PermissionEngine>,
        hooks: Arc<HookRegistry>,
        context: HookContext,
    ) -> Self {
        Self {
            tools,
            engine,
            hooks,
            context,
            view: None,
        }
    }

    /// Shows the working directory as the real folder it is a shadow of: a call's path
    /// arguments naming the real folder are moved onto the shadow before the hooks, the gate
    /// and the tool see them, and the result, the gate's reason and any error show the real
    /// folder instead of the shadow (`agent_core::view`).
    pub fn with_view(mut self, view: Option<PathView>) -> Self {
        self.view = view;
        self
    }

    /// The permission engine.
    pub fn engine(&self) -> &Arc<PermissionEngine> {
        &self.engine
    }

    /// The hooks.
    pub fn hooks(&self) -> &Arc<HookRegistry> {
        &self.hooks
    }

    /// The hook context (session id, working directory) calls run in.
    pub fn context(&self) -> &HookContext {
        &self.context
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The tools it can run.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// Runs one call: hooks, permissions, the tool, PostToolUse hooks.
    pub async fn execute(&self, tool_name: &str, input: Value, tool_use_id: &str) -> Execution {
        self.execute_cancellable(tool_name, input, tool_use_id, CancellationFlag::new())
            .await
    }

    /// [`Self::execute`], with a flag the tool sees as `ToolContext::cancellation`.
    pub async fn execute_cancellable(
        &self,
        tool_name: &str,
        input: Value,
        tool_use_id: &str,
        cancellation: CancellationFlag,
    ) -> Execution {
        let span = tracing::info_span!("tool_call", tool = tool_name, tool_use_id);
        self.run(tool_name, input, tool_use_id, cancellation)
            .instrument(span)
            .await
    }

    async fn run(
        &self,
        tool_name: &str,
        input: Value,
        tool_use_id: &str,
        cancellation: CancellationFlag,
    ) -> Execution {
        let input = match &self.view {
            Some(v) => v.input_to_actual(&input).unwrap_or(input),
            None => input,
        };
        let mut execution = self
            .gate_and_call(tool_name, input, tool_use_id, cancellation)
            .await;
        if let Some(v) = &self.view {
            execution.decision.reason = v.to_shown(&execution.decision.reason);
            execution.result = execution.result.map(|r| match r {
                Ok(mut out) => {
                    v.value_to_shown(&mut out.output);
                    Ok(out)
                }
                Err(e) => Err(e.map_text(|t| v.to_shown(t))),
            });
        }
        execution
    }

    async fn gate_and_call(
        &self,
        tool_name: &str,
        input: Value,
        tool_use_id: &str,
        cancellation: CancellationFlag,
    ) -> Execution {
        let mut call = ToolCall::new(tool_name, input.clone());
        call.tool_use_id = Some(tool_use_id.to_owned());
        let gated = check_tool_call(&self.engine, &self.hooks, &self.context, &call).await;
        let hook_runs: Vec<HookRun> = gated
            .hooks
            .runs
            .iter()
            .map(|r| r.to_event(HookEvent::PreToolUse))
            .collect();
        let mut notices: Vec<String> = gated.hooks.outcome.notices.clone();
        notices.extend(gated.hooks.outcome.system_message.clone());
        let stop = (!gated.hooks.outcome.continue_).then(|| {
            gated
                .hooks
                .outcome
                .stop_reason
                .clone()
                .unwrap_or_else(|| "a PreToolUse hook asked to stop".into())
        });
        let mut decision = gated.decision;
        let mut additional_context = gated.hooks.outcome.additional_context.clone();
        if decision.behavior == Behavior::Ask {
            decision.behavior = Behavior::Deny;
            decision.reason = format!(
                "{}; nobody can be asked here, so it is denied (add an allow rule, or answer the question in an interactive session)",
                decision.reason
            );
        }
        let input = decision.updated_input.clone().unwrap_or(input);
        let mut execution = Execution {
            tool: tool_name.to_owned(),
            input: input.clone(),
            decision,
            result: None,
            additional_context: Vec::new(),
            started: false,
            duration_ms: 0,
            hook_runs,
            stop,
            notices,
        };
        if execution.decision.behavior != Behavior::Allow {
            tracing::info!(reason = %execution.decision.reason, "tool call not allowed");
            execution.additional_context = additional_context;
            return execution;
        }
        let Some(tool) = self.tools.iter().find(|t| t.name() == tool_name) else {
            execution.result = Some(Err(ToolError::invalid_input(format!(
                "no tool named `{tool_name}`; available: {}",
                self.tools
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))));
            return execution;
        };
        let mut ctx = ToolContext::new(&self.context.cwd, &self.context.session_id, tool_use_id)
            .with_additional_dirs(
                self.engine
                    .working_dirs()
                    .iter()
                    .filter(|d| **d != self.context.cwd)
                    .cloned()
                    .collect(),
            )
            .with_permission_mode(self.engine.mode())
            .with_containment(execution.decision.containment.clone())
            .with_prepared(execution.decision.prepared.clone())
            .with_view(self.view.clone());
        if cancellation.is_cancelled() {
            // Interrupted while the gate or the hooks ran: the tool never starts.
            execution.result = Some(Err(ToolError::Cancelled));
            execution.additional_context = additional_context;
            return execution;
        }
        ctx.cancellation = cancellation;
        execution.started = true;
        let start = Instant::now();
        let result = tool.call(input.clone(), &ctx).await;
        execution.duration_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let fields = match &result {
            Ok(out) => EventFields::ToolResult(agent_core::hooks::ToolResultInput {
                tool_name: tool_name.to_owned(),
                tool_input: input.clone(),
                tool_response: out.output.clone(),
                tool_use_id: Some(tool_use_id.to_owned()),
                duration_ms: Some(execution.duration_ms),
                extra: Map::new(),
            }),
            Err(e) => EventFields::ToolFailure(agent_core::hooks::ToolFailureInput {
                tool_name: tool_name.to_owned(),
                tool_input: input.clone(),
                tool_use_id: Some(tool_use_id.to_owned()),
                error: e.to_string(),
                is_interrupt: matches!(e, ToolError::Cancelled),
                duration_ms: Some(execution.duration_ms),
                extra: Map::new(),
            }),
        };
        let event = if result.is_ok() {
            HookEvent::PostToolUse
        } else {
            HookEvent::PostToolUseFailure
        };
        let mut hook_ctx = self.context.clone();
        hook_ctx.permission_mode = Some(self.engine.mode());
        let post = self.hooks.execute(hook_ctx.input(event, fields)).await;
        execution
            .hook_runs
            .extend(post.runs.iter().map(|r| r.to_event(event)));
        execution
            .notices
            .extend(post.outcome.notices.iter().cloned());
        execution
            .notices
            .extend(post.outcome.system_message.iter().cloned());
        if !post.outcome.continue_ && execution.stop.is_none() {
            execution.stop = Some(
                post.outcome
                    .stop_reason
                    .clone()
                    .unwrap_or_else(|| format!("a {} hook asked to stop", event.as_str())),
            );
        }
        additional_context.extend(post.outcome.additional_context.iter().cloned());
        let result = match (result, post.outcome.updated_tool_output.clone()) {
            (Ok(mut out), Some(replaced)) => {
                out.output = replaced;
                Ok(out)
            }
            (r, _) => r,
        };
        execution.result = Some(result);
        execution.additional_context = additional_context;
        execution
    }
}
