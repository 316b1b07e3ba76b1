//! [`Agent`], one session's agent, and the [`AgentBuilder`] that starts it (the steps of
//! [`AgentBuilder::start`] are in `start.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::hooks::{HookContext, HookRegistry};
use agent_core::permissions::{
    PermissionEngine, PermissionEngineBuilder, PermissionMode, Prompter,
};
use agent_core::tools::Tool;
use agent_providers::Provider;
use agent_store::{SessionBackend, SessionId};
use agent_tools::executor::ToolExecutor;
use futures_util::Stream;
use tokio::sync::mpsc;

use crate::context::History;
use crate::error::AgentError;
use crate::events::{AgentEvent, Interrupt, Sink};
use crate::options::AgentOptions;
use crate::prompt::SystemPrompt;
use crate::questions::SideEvents;
use crate::result::RunResult;
use crate::runner::{Core, RunState, Runner};
use crate::start;
use crate::tool_calls::specs;

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
            tools,
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
        let resumption = start::resumption(store.as_ref(), &options, &cwd_text).await?;
        let (session, source, restored_mode) = match &resumption {
            Some(r) => {
                let restored = start::restore(store.as_ref(), r, &mut options).await?;
                (r.session.id.clone(), r.hook_source(), restored)
            }
            // Created once the engine and tools are known, so `system.init` records them.
            None => (
                options
                    .session_id
                    .clone()
                    .unwrap_or_else(SessionId::generate),
                "startup",
                None,
            ),
        };
        if options.model.is_empty() {
            return Err(AgentError::Options(
                "no model given, and the session does not name one; set AgentOptions::model".into(),
            ));
        }
        let mut hook_ctx = HookContext::new(session.to_string(), &cwd);
        let transcript = start::transcript_path(&hooks, &options, &session);
        hook_ctx.transcript_path = transcript.clone();
        let side = SideEvents::default();
        let engine = start::engine(start::Gate {
            permissions,
            mode: mode.or(restored_mode),
            hooks: &hooks,
            hook_ctx: &hook_ctx,
            prompter,
            view: &options.view,
            side: &side,
            cwd: &cwd,
        })?;
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
        let tools = start::with_subagents(tools, subagents, &core, &engine, &cwd, &session);
        let specs = specs(&tools, &engine);
        if resumption.is_none() {
            start::create(
                store.as_ref(),
                &session,
                &cwd_text,
                &shown_cwd,
                &core,
                &specs,
                &engine,
            )
            .await?;
        }
        let executor = ToolExecutor::shared(tools, engine, Arc::clone(&hooks), hook_ctx.clone())
            .with_view(core.options.view.clone());
        let history = match &resumption {
            Some(_) => History::from_messages(&store.messages(&session, None).await?),
            None => History::default(),
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

/// A session's agent. See the [crate documentation](crate).
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
