//! One session's loop and what it shares with its subagents ([`Core`]): the provider, the
//! store, the hooks, the tool executor, the history; appending to the session log. The loop
//! itself is in `run.rs`; its parts (hooks, the model call, tool calls, compaction) each in a
//! module of their own, all `impl Runner`.

use std::sync::Arc;

use agent_core::events::{Event, EventPayload, SystemInit};
use agent_core::hooks::{HookContext, HookRegistry};
use agent_providers::{Provider, ToolSpec, Usage};
use agent_store::{SessionBackend, SessionId};
use agent_tools::executor::ToolExecutor;

use crate::context::History;
use crate::error::AgentError;
use crate::events::{AgentEvent, Interrupt, Sink};
use crate::options::AgentOptions;
use crate::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::questions::SideEvents;

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

impl Runner {
    pub(crate) fn system(&self) -> &str {
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

    pub(crate) async fn log_events(
        &self,
        sink: &Sink,
        events: Vec<Event>,
    ) -> Result<Vec<Event>, AgentError> {
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

/// Counters of one run.
pub(crate) struct RunState {
    pub(crate) session_id: String,
    pub(crate) turns: u32,
    pub(crate) usage: Usage,
    pub(crate) final_text: String,
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
