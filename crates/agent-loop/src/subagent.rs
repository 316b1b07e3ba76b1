//! Subagents: the `Task` tool's runner. Each subagent is a session of its own (tagged
//! `subagent`, titled by the task's description) run by a loop that shares the parent's
//! provider, store, hooks, permission engine (rules, mode, session grants) and sandboxed tools,
//! without `Task` (subagents do not nest). The parent's log records `subagent.start` and
//! `subagent.stop` before the Task call's result.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_core::events::{EventPayload, SubagentStart, SubagentStop};
use agent_core::permissions::PermissionEngine;
use agent_core::tools::{Tool, ToolContext, ToolError};

use super::context::History;
use super::events::{Interrupt, Sink};
use super::result::RunStopReason;
use super::runner::{Core, Runner};
use super::tool_calls::specs;
use agent_store::{NewSession, SessionId};
use agent_tools::executor::ToolExecutor;
use agent_tools::{SubagentRequest, SubagentRunner};

/// Runs the subagents of one parent session.
pub(crate) struct Subagents {
    core: Arc<Core>,
    engine: Arc<PermissionEngine>,
    tools: Vec<Arc<dyn Tool>>,
    cwd: PathBuf,
    parent: SessionId,
    started: AtomicU64,
}

impl Subagents {
    pub(crate) fn new(
        core: Arc<Core>,
        engine: Arc<PermissionEngine>,
        tools: Vec<Arc<dyn Tool>>,
        cwd: PathBuf,
        parent: SessionId,
    ) -> Self {
        Self {
            core,
            engine,
            tools,
            cwd,
            parent,
            started: AtomicU64::new(0),
        }
    }
}

#[async_trait::async_trait]
impl SubagentRunner for Subagents {
    async fn run(&self, request: SubagentRequest, ctx: &ToolContext) -> Result<String, ToolError> {
        let tools = tools_for(&request.subagent_type, &self.tools)?;
        // What the subagent is offered: its tools less those a deny rule removes whole.
        let specs = specs(&tools, &self.engine);
        let n = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        let mut options = self.core.options.clone();
        if let Some(m) = &request.model {
            options.model = m.clone();
        }
        options.resume = Default::default();
        options.session_id = None;
        let store = Arc::clone(&self.core.store);
        let meta = store
            .create(NewSession {
                id: None,
                cwd: Some(self.cwd.display().to_string()),
                model: Some(options.model.clone()),
                git_branch: None,
                tools: specs.iter().map(|t| t.name.clone()).collect(),
                permission_mode: Some(self.engine.mode().as_str().to_owned()),
                title: Some(format!(
                    "subagent {n} of {}: {}",
                    self.parent, request.description
                )),
                tags: vec!["subagent".into()],
            })
            .await
            .map_err(|e| ToolError::Execution(format!("cannot start the subagent: {e}")))?;
        let agent_id = meta.id.to_string();
        self.core.side.push(
            &ctx.tool_use_id,
            EventPayload::SubagentStart(SubagentStart {
                agent_id: agent_id.clone(),
                agent_type: Some(request.subagent_type.clone()),
                prompt: Some(request.prompt.clone()),
            }),
        );
        // Hooks see the parent's session with the subagent's id and type.
        let mut hook_ctx = self.core_hook_context();
        hook_ctx.agent_id = Some(agent_id.clone());
        hook_ctx.agent_type = Some(request.subagent_type.clone());
        let core = Arc::new(Core {
            provider: Arc::clone(&self.core.provider),
            store: Arc::clone(&store),
            hooks: Arc::clone(&self.core.hooks),
            options,
            side: self.core.side.clone(),
        });
        let executor = ToolExecutor::shared(
            tools.clone(),
            Arc::clone(&self.engine),
            Arc::clone(&self.core.hooks),
            hook_ctx.clone(),
        )
        .with_view(self.core.options.view.clone());
        let mut runner = Runner {
            core,
            executor,
            session: meta.id.clone(),
            history: History::default(),
            hook_ctx,
            interrupt: Interrupt::new(),
            agent_id: Some(agent_id.clone()),
            specs,
            fixed: std::sync::OnceLock::new(),
            transcript: None,
        };
        // The parent's cancellation reaches the subagent's loop.
        let cancel = ctx.cancellation.clone();
        let interrupt = runner.interrupt.clone();
        let watcher = tokio::spawn(async move {
            while !cancel.is_cancelled() {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            interrupt.interrupt();
        });
        let outcome = runner.run(&request.prompt, &Sink::default()).await;
        watcher.abort();
        let _ = store.close(&meta.id).await;
        let result = outcome.map_err(|e| ToolError::Execution(format!("subagent failed: {e}")))?;
        self.core.side.push(
            &ctx.tool_use_id,
            EventPayload::SubagentStop(SubagentStop {
                agent_id,
                final_text: Some(result.final_text.clone()),
            }),
        );
        match result.stop_reason {
            RunStopReason::Error => Err(ToolError::Execution(format!(
                "the subagent stopped on an error: {}",
                result.error.unwrap_or_default()
            ))),
            RunStopReason::Interrupted => Err(ToolError::Cancelled),
            _ => Ok(result.final_text),
        }
    }
}

/// The subagent types and the tools each gets: `general-purpose` all of the parent's tools (but
/// `Task`); `Explore` and `Plan` only the read-only ones (Read, Glob, Grep, and tools that
/// declare themselves read-only), for research that must not change anything.
pub const SUBAGENT_TYPES: &[&str] = &["general-purpose", "Explore", "Plan"];

fn tools_for(kind: &str, tools: &[Arc<dyn Tool>]) -> Result<Vec<Arc<dyn Tool>>, ToolError> {
    match kind {
        "general-purpose" => Ok(tools.to_vec()),
        "Explore" | "Plan" => Ok(tools.iter().filter(|t| t.is_read_only()).cloned().collect()),
        other => Err(ToolError::invalid_input(format!(
            "unknown subagent_type {other:?}; use one of {}",
            SUBAGENT_TYPES.join(", ")
        ))),
    }
}

impl Subagents {
    fn core_hook_context(&self) -> agent_core::hooks::HookContext {
        agent_core::hooks::HookContext::new(self.parent.to_string(), &self.cwd)
    }
}
