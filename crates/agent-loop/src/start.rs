//! The steps of [`AgentBuilder::start`](crate::AgentBuilder::start): which session (new or
//! resumed, and what a resumed one restores), the transcript hooks read, the permission engine
//! with the recorded prompter, the `Task` tool, and a new session's creation.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::events::{EventPayload, ToolResultEvent};
use agent_core::hooks::{HookContext, HookPermissionRequests, HookRegistry};
use agent_core::permissions::{
    PermissionEngine, PermissionEngineBuilder, PermissionMode, Prompter,
};
use agent_core::tools::Tool;
use agent_core::view::PathView;
use agent_providers::ToolSpec;
use agent_store::recovery::{Resumption, resume};
use agent_store::{LoadRange, NewSession, SessionBackend, SessionId, git_branch};
use agent_tools::Task;
use serde_json::Value;

use crate::error::AgentError;
use crate::options::AgentOptions;
use crate::questions::{RecordingPrompter, SideEvents};
use crate::runner::Core;
use crate::subagent::Subagents;

/// The earlier session the options pick (by id, the most recent, fork, resume-at), or `None`
/// for a new session.
pub(crate) async fn resumption(
    store: &dyn SessionBackend,
    options: &AgentOptions,
    cwd_text: &str,
) -> Result<Option<Resumption>, AgentError> {
    let resuming = options.resume.session_id.is_some()
        || options.resume.continue_recent
        || options.resume.resume_at.is_some();
    if !resuming {
        return Ok(None);
    }
    let mut resume_opts = options.resume.clone();
    if resume_opts.cwd.is_none() {
        resume_opts.cwd = Some(cwd_text.to_owned());
    }
    match resume(store, &resume_opts).await? {
        Some(r) => Ok(Some(r)),
        None => Err(AgentError::Options(format!(
            "there is no session to continue in {cwd_text}; start one without --continue"
        ))),
    }
}

/// What a resumed session restores from its last `system.init`: the model (when none was
/// given) and the permission mode it returns (never `plan` or `bypassPermissions`); calls left
/// without a result are answered first.
pub(crate) async fn restore(
    store: &dyn SessionBackend,
    r: &Resumption,
    options: &mut AgentOptions,
) -> Result<Option<PermissionMode>, AgentError> {
    let mut restored_mode = None;
    let events = store
        .load(&r.session.id, LoadRange::default())
        .await?
        .events;
    for e in events.iter().rev() {
        if let EventPayload::SystemInit(init) = &e.payload {
            if options.model.is_empty()
                && let Some(m) = &init.model
            {
                options.model = m.clone();
            }
            restored_mode = init
                .permission_mode
                .as_deref()
                .and_then(|m| m.parse::<PermissionMode>().ok())
                .filter(|m| !matches!(m, PermissionMode::Plan | PermissionMode::BypassPermissions));
            break;
        }
    }
    repair_dangling(store, &r.session.id, &events).await?;
    Ok(restored_mode)
}

/// Where the Claude-compatible transcript hooks read is kept: only when there are hooks and
/// the options name a directory.
pub(crate) fn transcript_path(
    hooks: &HookRegistry,
    options: &AgentOptions,
    session: &SessionId,
) -> Option<PathBuf> {
    let has_hooks = agent_core::hooks::ALL_EVENTS
        .iter()
        .any(|e| hooks.has_hooks(*e));
    options
        .transcript_dir
        .as_ref()
        .filter(|_| has_hooks)
        .map(|d| d.join(format!("{session}.jsonl")))
}

/// What the permission engine is built from.
pub(crate) struct Gate<'a> {
    pub(crate) permissions: Option<PermissionEngineBuilder>,
    pub(crate) mode: Option<PermissionMode>,
    pub(crate) hooks: &'a Arc<HookRegistry>,
    pub(crate) hook_ctx: &'a HookContext,
    pub(crate) prompter: Option<Arc<dyn Prompter>>,
    pub(crate) view: &'a Option<PathView>,
    pub(crate) side: &'a SideEvents,
    pub(crate) cwd: &'a Path,
}

/// The session's permission engine: the given builder (or one for the working directory with
/// no rules), its mode, PermissionRequest hooks, and the host's prompter wrapped so that its
/// questions and answers are recorded.
pub(crate) fn engine(gate: Gate<'_>) -> Result<Arc<PermissionEngine>, AgentError> {
    let Gate {
        permissions,
        mode,
        hooks,
        hook_ctx,
        prompter,
        view,
        side,
        cwd,
    } = gate;
    let mut builder = permissions.unwrap_or_else(|| {
        PermissionEngine::builder(
            cwd,
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default(),
        )
    });
    if let Some(m) = mode {
        builder = builder.mode(m);
    }
    builder = builder.permission_request_handler(Arc::new(HookPermissionRequests::new(
        Arc::clone(hooks),
        hook_ctx.clone(),
    )));
    if let Some(p) = prompter {
        builder = builder.prompter(Arc::new(RecordingPrompter {
            view: view.clone(),
            inner: p,
            side: side.clone(),
            hooks: Arc::clone(hooks),
            context: hook_ctx.clone(),
        }));
    }
    Ok(Arc::new(builder.build().map_err(|e| {
        AgentError::Options(format!("permission engine: {e}"))
    })?))
}

/// The tools with the `Task` tool running subagents when they are on (a `Task` given among
/// the tools is replaced by it), without it when they are off.
pub(crate) fn with_subagents(
    mut tools: Vec<Arc<dyn Tool>>,
    subagents: bool,
    core: &Arc<Core>,
    engine: &Arc<PermissionEngine>,
    cwd: &Path,
    session: &SessionId,
) -> Vec<Arc<dyn Tool>> {
    tools.retain(|t| t.name() != "Task" || !subagents);
    if subagents {
        let runner = Arc::new(Subagents::new(
            Arc::clone(core),
            Arc::clone(engine),
            tools.clone(),
            cwd.to_path_buf(),
            session.clone(),
        ));
        tools.push(Arc::new(Task::new(runner)));
    }
    tools
}

/// Creates a new session, recording the model, the tools offered and the permission mode.
pub(crate) async fn create(
    store: &dyn SessionBackend,
    session: &SessionId,
    cwd_text: &str,
    shown_cwd: &Path,
    core: &Core,
    specs: &[ToolSpec],
    engine: &PermissionEngine,
) -> Result<(), AgentError> {
    store
        .create(NewSession {
            id: Some(session.clone()),
            cwd: Some(cwd_text.to_owned()),
            model: Some(core.options.model.clone()),
            git_branch: git_branch(shown_cwd),
            tools: specs.iter().map(|t| t.name.clone()).collect(),
            permission_mode: Some(engine.mode().as_str().to_owned()),
            title: None,
            tags: Vec::new(),
        })
        .await?;
    Ok(())
}

/// Answers every `tool.use` of a log that has no `tool.result` (the process ended while it
/// ran) with an `interrupted` error result, so the conversation is whole again.
async fn repair_dangling(
    store: &dyn SessionBackend,
    id: &SessionId,
    events: &[agent_core::events::Event],
) -> Result<(), AgentError> {
    let mut open: Vec<String> = Vec::new();
    for e in events {
        match &e.payload {
            EventPayload::ToolUse(u) => open.push(u.tool_use_id.clone()),
            EventPayload::ToolResult(r) => open.retain(|x| *x != r.tool_use_id),
            _ => {}
        }
    }
    if open.is_empty() {
        return Ok(());
    }
    let text = "not finished: the run ended (interrupted or crashed) before this call returned; it may or may not have taken effect";
    let repairs = open
        .into_iter()
        .map(|tool_use_id| {
            agent_core::events::Event::new(
                0,
                None,
                EventPayload::ToolResult(ToolResultEvent {
                    tool_use_id,
                    output: Value::String(text.into()),
                    is_error: true,
                    error_type: Some("interrupted".into()),
                    error_message: Some(text.into()),
                }),
            )
        })
        .collect();
    store.append(id, repairs).await?;
    Ok(())
}
