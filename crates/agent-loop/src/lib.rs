//! The agent loop of the agent runtime: a model-driven tool loop that is safe, resumable and
//! streamed. It is the crate that puts the others together: a provider (agent-providers) for
//! the model, the built-in tools and their executor (agent-tools), the session store
//! (agent-store) for the log every step is written to, and agent-core's hooks and permission
//! engine for the gate each call goes through.
//!
//! An [`Agent`] owns one session. [`Agent::prompt`] (or the streaming [`Agent::query`]) takes
//! a prompt through:
//!
//! 1. `UserPromptSubmit` hooks (a block erases the prompt; their context reaches the model);
//! 2. the provider call, streamed ([`AgentEvent::TextDelta`] as bytes arrive), after the context
//!    check: at 83.5 % of the model's window the conversation is compacted first (PreCompact
//!    hooks, a summarising call without tools, a `compaction` event, PostCompact hooks);
//! 3. each tool call through the one gate: PreToolUse hooks → permission engine (asks go to
//!    PermissionRequest hooks, then the host's [`Prompter`]) → the tool, sandboxed → PostToolUse
//!    hooks; read-only calls of one answer run concurrently, the others one at a time; a result
//!    over 80 % of the window is replaced by an error saying so;
//! 4. back to the provider until the model stops; `Stop` hooks may send it back to work; when
//!    `max_turns` calls are used up, one last call without tools asks for a summary;
//! 5. a `result` event.
//!
//! Every step is appended to the session log as it happens, so an interrupted run
//! ([`Interrupt`], Ctrl-C in the CLI: running tools are cancelled and their calls answered
//! `cancelled`) or a crashed process leaves a log that resumes: calls without a result are
//! answered with an `interrupted` result when the session is resumed.
//! [`AgentOptions::resume`] picks an earlier session (by id, the most recent, fork, resume-at);
//! a resumed run restores the session's model and permission mode, except `plan` and
//! `bypassPermissions`, which are never restored.
//!
//! The `Task` tool starts subagents: each runs in a session of its own (tagged `subagent`,
//! linked from the parent by `subagent.start` / `subagent.stop`), with the parent's tools (no
//! `Task`), permission engine, hooks and sandbox; its hooks see `agent_id` and `agent_type`, and
//! its end fires `SubagentStop`.
//!
//! [`SystemPrompt`] states what the model should know of where it works; [`memory`] finds the
//! project memory for it (the `AGENTS.md` / `CLAUDE.md` files of the user and of the project,
//! found as codex and Claude Code find them).
//!
//! ```
//! use std::sync::Arc;
//! use agent_providers::{ScriptedProvider, ScriptedTurn};
//! use agent_loop::{Agent, AgentOptions};
//! use agent_store::{SessionStore, StoreOptions};
//! use agent_tools::{ToolState, builtin_tools};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let project = tempfile::tempdir()?;
//! std::fs::write(project.path().join("notes.txt"), "hello\n")?;
//! let sessions = tempfile::tempdir()?;
//! let store = Arc::new(SessionStore::open(StoreOptions::new(sessions.path())).await?);
//! let provider = Arc::new(ScriptedProvider::new(vec![
//!     ScriptedTurn::tools(None, vec![("t1", "Read", json!({"file_path": "notes.txt"}))]),
//!     ScriptedTurn::text("The file says hello."),
//! ]));
//! let mut agent = Agent::builder(provider, store, project.path())
//!     .options(AgentOptions::new("scripted"))
//!     .tools(builtin_tools(&ToolState::new()))
//!     .start()
//!     .await?;
//! let result = agent.prompt("What does notes.txt say?").await?;
//! assert_eq!(result.final_text, "The file says hello.");
//! assert_eq!(result.stop_reason, "end_turn");
//! agent.close().await?;
//! # Ok(()) }
//! ```
//!
//! docs/agent.md describes the loop; `examples/` holds a minimal agent, a resumed session, a
//! code reviewer and the system prompt.

mod compaction;
mod context;
mod error;
mod events;
mod hook_extension;
mod hooks;
pub mod memory;
mod model_call;
mod options;
mod prompt;
mod questions;
mod result;
mod run;
mod runner;
mod subagent;
mod tool_calls;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::events::{EventPayload, ToolResultEvent};
use agent_core::hooks::{HookContext, HookPermissionRequests, HookRegistry};
use agent_core::permissions::{
    PermissionEngine, PermissionEngineBuilder, PermissionMode, Prompter,
};
use agent_core::tools::Tool;
use agent_providers::Provider;
use futures_util::Stream;
use serde_json::Value;
use tokio::sync::mpsc;

pub use context::{History, SUMMARY_PREFIX, estimate_tokens, output_text};
pub use error::AgentError;
pub use events::{AgentEvent, Interrupt};
pub use hook_extension::ModelHooks;
pub use hooks::MAX_INJECTED_CHARS;
pub use options::{AgentOptions, COMPACT_AT, TOOL_RESULT_BUDGET};
pub use prompt::{DEFAULT_SYSTEM_PROMPT, SystemPrompt};
pub use questions::PolicyPrompter;
pub use result::{RunResult, RunStopReason};
pub use subagent::SUBAGENT_TYPES;
pub use tool_calls::CANCEL_GRACE;

use self::context::History as Hist;
use self::events::Sink;
use self::questions::{RecordingPrompter, SideEvents};
use self::runner::{Core, RunState, Runner};
use self::subagent::Subagents;
use self::tool_calls::specs;
use agent_store::recovery::{ResumeOptions, resume};
use agent_store::{LoadRange, NewSession, SessionBackend, SessionId, git_branch};
use agent_tools::Task;
use agent_tools::executor::ToolExecutor;

/// Builds an [`Agent`]: deny-by-default (no tools until given, the permission engine's
/// `default` mode, no prompter, so what would ask is denied).
pub struct AgentBuilder {
    provider: Arc<dyn Provider>,
    store: Arc<dyn SessionBackend>,
    cwd: PathBuf,
    permissions: Option<PermissionEngineBuilder>,
    mode: Option<PermissionMode>,
    hooks: Arc<HookRegistry>,
    tools: Vec<Arc<dyn Tool>>,
    prompter: Option<Arc<dyn Prompter>>,
    options: AgentOptions,
    subagents: bool,
    system_prompt: Option<SystemPrompt>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("provider", &self.provider.name())
            .field("cwd", &self.cwd)
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// Sets the options (model, turns, context, resume).
    pub fn options(mut self, options: AgentOptions) -> Self {
        self.options = options;
        self
    }

    /// Decides with this engine (rules, settings, policies, additional directories). Default:
    /// an engine for the working directory with no rules.
    pub fn permissions(mut self, builder: PermissionEngineBuilder) -> Self {
        self.permissions = Some(builder);
        self
    }

    /// Runs in this mode. Without it, a new session uses the engine's mode and a resumed one
    /// the mode it had (never `plan` or `bypassPermissions`).
    pub fn mode(mut self, mode: PermissionMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Runs these hooks (register `prompt`/`agent` kinds with [`ModelHooks`] before loading
    /// a configuration that uses them).
    pub fn hooks(mut self, hooks: Arc<HookRegistry>) -> Self {
        self.hooks = hooks;
        self
    }

    /// Offers these tools (replacing any given before).
    pub fn tools(mut self, tools: Vec<Arc<dyn Tool>>) -> Self {
        self.tools = tools;
        self
    }

    /// Offers more tools (MCP servers' tools, say).
    pub fn tools_extend(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Offers one more tool.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Answers permission questions with `prompter` (the TTY prompt, an SDK callback, a
    /// [`PolicyPrompter`]). Without one, what would ask is denied with the rule that would
    /// allow it.
    pub fn prompter(mut self, prompter: Arc<dyn Prompter>) -> Self {
        self.prompter = Some(prompter);
        self
    }

    /// Renders `prompt` as the session's system prompt when it starts, stating the permission
    /// mode the session actually starts in (the one given, the settings', or the one a resumed
    /// session restores). Replaces [`AgentOptions::system_prompt`].
    pub fn system_prompt(mut self, prompt: SystemPrompt) -> Self {
        self.system_prompt = Some(prompt);
        self
    }

    /// Offers the `Task` tool, running subagents (default: on).
    pub fn subagents(mut self, enabled: bool) -> Self {
        self.subagents = enabled;
        self
    }

    /// Opens the session (new, or resumed as the options say), logs `system.init`, runs
    /// SessionStart hooks.
    ///
    /// # Errors
    /// [`AgentError`] when the session cannot be created or resumed, or the engine cannot be
    /// built.
    pub async fn start(self) -> Result<Agent, AgentError> {
        let AgentBuilder {
            provider,
            store,
            cwd,
            permissions,
            mode,
            hooks,
            mut tools,
            prompter,
            mut options,
            subagents,
            system_prompt,
        } = self;
        // The session is the real folder's when the working directory is its shadow.
        let shown_cwd = options
            .view
            .as_ref()
            .map_or_else(|| cwd.clone(), |v| v.shown_path(&cwd));
        let cwd_text = shown_cwd.display().to_string();
        let resuming = options.resume.session_id.is_some()
            || options.resume.continue_recent
            || options.resume.resume_at.is_some();
        let mut resume_opts: ResumeOptions = options.resume.clone();
        if resume_opts.cwd.is_none() {
            resume_opts.cwd = Some(cwd_text.clone());
        }
        let resumption = if resuming {
            match resume(store.as_ref(), &resume_opts).await? {
                Some(r) => Some(r),
                None => {
                    return Err(AgentError::Options(format!(
                        "there is no session to continue in {cwd_text}; start one without --continue"
                    )));
                }
            }
        } else {
            None
        };
        let mut restored_mode = None;
        let (session, source) = match &resumption {
            Some(r) => {
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
                            .filter(|m| {
                                !matches!(
                                    m,
                                    PermissionMode::Plan | PermissionMode::BypassPermissions
                                )
                            });
                        break;
                    }
                }
                repair_dangling(store.as_ref(), &r.session.id, &events).await?;
                (r.session.id.clone(), r.hook_source())
            }
            // Created once the engine and tools are known, so `system.init` records them.
            None => (
                options
                    .session_id
                    .clone()
                    .unwrap_or_else(SessionId::generate),
                "startup",
            ),
        };
        if options.model.is_empty() {
            return Err(AgentError::Options(
                "no model given, and the session does not name one; set AgentOptions::model".into(),
            ));
        }
        let mut hook_ctx = HookContext::new(session.to_string(), &cwd);
        let has_hooks = agent_core::hooks::ALL_EVENTS
            .iter()
            .any(|e| hooks.has_hooks(*e));
        let transcript = options
            .transcript_dir
            .as_ref()
            .filter(|_| has_hooks)
            .map(|d| d.join(format!("{session}.jsonl")));
        hook_ctx.transcript_path = transcript.clone();
        let side = SideEvents::default();
        let mut builder = permissions.unwrap_or_else(|| {
            PermissionEngine::builder(
                &cwd,
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_default(),
            )
        });
        if let Some(m) = mode.or(restored_mode) {
            builder = builder.mode(m);
        }
        builder = builder.permission_request_handler(Arc::new(HookPermissionRequests::new(
            Arc::clone(&hooks),
            hook_ctx.clone(),
        )));
        if let Some(p) = prompter {
            builder = builder.prompter(Arc::new(RecordingPrompter {
                view: options.view.clone(),
                inner: p,
                side: side.clone(),
                hooks: Arc::clone(&hooks),
                context: hook_ctx.clone(),
            }));
        }
        let engine = Arc::new(
            builder
                .build()
                .map_err(|e| AgentError::Options(format!("permission engine: {e}")))?,
        );
        if let Some(p) = system_prompt {
            options.system_prompt = Some(p.permission_mode(engine.mode()).render());
        }
        let core = Arc::new(Core {
            provider,
            store: Arc::clone(&store),
            hooks: Arc::clone(&hooks),
            options,
            side,
        });
        tools.retain(|t| t.name() != "Task" || !subagents);
        if subagents {
            let runner = Arc::new(Subagents::new(
                Arc::clone(&core),
                Arc::clone(&engine),
                tools.clone(),
                cwd.clone(),
                session.clone(),
            ));
            tools.push(Arc::new(Task::new(runner)));
        }
        let specs = specs(&tools, &engine);
        if resumption.is_none() {
            store
                .create(NewSession {
                    id: Some(session.clone()),
                    cwd: Some(cwd_text.clone()),
                    model: Some(core.options.model.clone()),
                    git_branch: git_branch(&shown_cwd),
                    tools: specs.iter().map(|t| t.name.clone()).collect(),
                    permission_mode: Some(engine.mode().as_str().to_owned()),
                    title: None,
                    tags: Vec::new(),
                })
                .await?;
        }
        let executor = ToolExecutor::shared(tools, engine, Arc::clone(&hooks), hook_ctx.clone())
            .with_view(core.options.view.clone());
        let history = match &resumption {
            Some(_) => Hist::from_messages(&store.messages(&session, None).await?),
            None => Hist::default(),
        };
        let mut runner = Runner {
            core,
            executor,
            session,
            history,
            hook_ctx,
            interrupt: Interrupt::new(),
            agent_id: None,
            specs,
            fixed: std::sync::OnceLock::new(),
            transcript,
        };
        let sink = Sink::default();
        if resumption.is_some() {
            let init = runner.init_event(&cwd_text);
            runner.log(&sink, vec![init]).await?;
        }
        runner.session_start(&sink, source).await?;
        Ok(Agent {
            runner,
            forked_from: resumption.and_then(|r| r.forked_from),
            cwd_text,
        })
    }
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

/// A session's agent. See the [module documentation](self).
pub struct Agent {
    runner: Runner,
    forked_from: Option<SessionId>,
    /// The working directory as the session records it (the real folder's, under a view).
    cwd_text: String,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("session", &self.runner.session)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// A builder for an agent on `provider`, logging to `store`, working in `cwd` (the shadow
    /// workspace root when one is used).
    pub fn builder(
        provider: Arc<dyn Provider>,
        store: Arc<dyn SessionBackend>,
        cwd: impl AsRef<Path>,
    ) -> AgentBuilder {
        AgentBuilder {
            provider,
            store,
            cwd: cwd.as_ref().to_path_buf(),
            permissions: None,
            mode: None,
            hooks: Arc::new(HookRegistry::new()),
            tools: Vec::new(),
            prompter: None,
            options: AgentOptions::default(),
            subagents: true,
            system_prompt: None,
        }
    }

    /// The session this agent writes to.
    pub fn session_id(&self) -> &SessionId {
        &self.runner.session
    }

    /// The session this one was forked from, when it was.
    pub fn forked_from(&self) -> Option<&SessionId> {
        self.forked_from.as_ref()
    }

    /// The model in use (restored from the session on resume when none was given).
    pub fn model(&self) -> &str {
        &self.runner.core.options.model
    }

    /// The permission mode in use.
    pub fn mode(&self) -> PermissionMode {
        self.runner.executor.engine().mode()
    }

    /// The permission engine that decides this session's calls: its mode can be switched from
    /// another task while a run goes on (an SDK's `set_permission_mode`); [`Agent::set_mode`]
    /// also records the switch in the log.
    pub fn permissions(&self) -> Arc<PermissionEngine> {
        Arc::clone(self.runner.executor.engine())
    }

    /// The names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.runner.specs.iter().map(|s| s.name.clone()).collect()
    }

    /// A handle that interrupts the current run from anywhere.
    pub fn interrupter(&self) -> Interrupt {
        self.runner.interrupt.clone()
    }

    /// Runs one prompt to the end of the model's answer.
    ///
    /// # Errors
    /// [`AgentError`] when the session log cannot be written. Provider failures are not
    /// errors here: they end the run with `stop_reason: "error"` and an `error` event.
    pub async fn prompt(&mut self, text: &str) -> Result<RunResult, AgentError> {
        let span = tracing::info_span!("agent_run", session = %self.runner.session);
        tracing::Instrument::instrument(self.runner.run(text, &Sink::default()), span).await
    }

    /// Runs one prompt, yielding what happens as it happens: text deltas, each logged event,
    /// notices, and [`AgentEvent::Finished`] last. Dropping the stream abandons the run where it
    /// is (use [`Interrupt`] to end it cleanly): the log stays readable, and a call left
    /// without its result is answered with an `interrupted` result when the session resumes.
    pub fn query<'a>(
        &'a mut self,
        text: &'a str,
    ) -> impl Stream<Item = Result<AgentEvent, AgentError>> + Send + 'a {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = Sink::channel(tx);
        let span = tracing::info_span!("agent_run", session = %self.runner.session);
        let work = Box::pin(tracing::Instrument::instrument(
            async move { self.runner.run(text, &sink).await },
            span,
        ));
        futures_util::stream::unfold(
            (Some(work), rx, false),
            |(mut work, mut rx, mut done)| async move {
                loop {
                    if done {
                        return None;
                    }
                    match work.as_mut() {
                        Some(w) => {
                            tokio::select! {
                                biased;
                                Some(ev) = rx.recv() => return Some((Ok(ev), (work, rx, done))),
                                r = w => {
                                    work = None;
                                    if let Err(e) = r {
                                        done = true;
                                        return Some((Err(e), (work, rx, done)));
                                    }
                                }
                            }
                        }
                        None => {
                            return rx.recv().await.map(|ev| (Ok(ev), (None, rx, false)));
                        }
                    }
                }
            },
        )
    }

    /// Compacts the conversation now (`/compact`), with optional focus instructions.
    ///
    /// # Errors
    /// [`AgentError`] when the log cannot be written.
    pub async fn compact(&mut self, instructions: Option<String>) -> Result<(), AgentError> {
        let mut state = RunState::new(self.runner.session.to_string());
        self.runner
            .compact(&Sink::default(), &mut state, "manual", instructions)
            .await
    }

    /// Switches the permission mode for the calls that follow (`/mode` in a session) and
    /// records it: a `system.init` with the new mode, which a resumed session restores (except
    /// `plan` and `bypassPermissions`, which a resume never restores).
    ///
    /// # Errors
    /// [`AgentError`] when the log cannot be written.
    pub async fn set_mode(&mut self, mode: PermissionMode) -> Result<(), AgentError> {
        self.runner.executor.engine().set_mode(mode);
        self.log_init().await
    }

    /// Switches the model for the provider calls that follow (`/model` in a session; seed 000
    /// part 6: runtime model switching) and records it in a `system.init`, which a resumed
    /// session restores. The provider stays the same; subagents (the `Task` tool) keep the
    /// model the session started with unless their definition names one.
    ///
    /// # Errors
    /// [`AgentError::Options`] for an empty name; [`AgentError`] when the log cannot be
    /// written.
    pub async fn set_model(&mut self, model: &str) -> Result<(), AgentError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(AgentError::Options(
                "no model named; give the model's name as the provider knows it".into(),
            ));
        }
        let core = &self.runner.core;
        let mut options = core.options.clone();
        options.model = model.to_owned();
        self.runner.core = Arc::new(Core {
            provider: Arc::clone(&core.provider),
            store: Arc::clone(&core.store),
            hooks: Arc::clone(&core.hooks),
            options,
            side: core.side.clone(),
        });
        self.log_init().await
    }

    async fn log_init(&self) -> Result<(), AgentError> {
        let init = self.runner.init_event(&self.cwd_text);
        self.runner.log(&Sink::default(), vec![init]).await?;
        Ok(())
    }

    /// The provider-facing history (for inspection and tests).
    pub fn history(&self) -> &History {
        &self.runner.history
    }

    /// Ends the session: SessionEnd hooks, then the log is closed for writing.
    ///
    /// # Errors
    /// [`AgentError`] when the store cannot close the log.
    pub async fn close(self) -> Result<(), AgentError> {
        self.runner.session_end("other").await?;
        self.runner.core.hooks.wait_async().await;
        self.runner.core.store.close(&self.runner.session).await?;
        Ok(())
    }
}
