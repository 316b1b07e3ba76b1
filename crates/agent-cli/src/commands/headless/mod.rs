//! `agent` driven headless, as Claude Code's command line is: `agent -p PROMPT` (print
//! mode) and the Claude Agent SDK's transport (`--output-format stream-json --input-format
//! stream-json`, `../shared/compat/claude-agent-sdk.md`).
//!
//! An SDK session is `agent run`'s session ([`super::open::open_with`]: the settings, the
//! provider, the shadow workspace, the gate, the MCP servers) with the SDK in the places a
//! person has on a terminal: its `can_use_tool` callback answers permission questions, the
//! hooks it registers in `initialize` are hooks of the session, and its control requests
//! interrupt, switch the mode or the model. Nobody reviews a change set here: every edit was
//! approved call by call (rules, mode, or the SDK's callback), so the change set is applied to
//! the folder at the end of each prompt, before its `result` (`--keep-shadow` keeps it in
//! the shadow instead). docs/sdk.md records these decisions.

pub(crate) mod callbacks;
pub(crate) mod control;
pub(crate) mod stream;

use std::collections::VecDeque;
use std::io::{IsTerminal as _, Read as _};
use std::path::Path;
use std::sync::Arc;

use agent_core::events::{Event, EventPayload};
use agent_core::permissions::PermissionMode;
use agent_loop::{Agent, AgentEvent, RunStopReason};
use agent_workspace::{CommitOptions, Workspace, WorkspaceError};
use anyhow::{Context, Result, bail};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use self::control::{Channel, Inbound};
use self::stream::{InitFacts, TurnEncoder};
use super::open::{OpenWith, Opened, open_with};
use crate::cli::run::SessionOptions;
use crate::cli::sdk::SdkCli;
use crate::cli::settings::SettingsArgs;
use crate::exit::Exit;
use crate::output;

/// What `system`/`init` says about an open session.
pub(crate) fn init_facts(
    agent: &Agent,
    folder: &Path,
    servers: &agent_mcp::McpServers,
) -> InitFacts {
    InitFacts {
        session_id: agent.session_id().to_string(),
        cwd: folder.display().to_string(),
        model: agent.model().to_owned(),
        tools: agent.tool_names(),
        permission_mode: agent.mode().as_str().to_owned(),
        mcp_servers: mcp_servers(servers),
    }
}

/// The MCP servers and how each is: `connected` or `failed`.
fn mcp_servers(servers: &agent_mcp::McpServers) -> Vec<(String, String)> {
    servers
        .servers()
        .iter()
        .map(|s| (s.name().to_owned(), "connected".to_owned()))
        .chain(
            servers
                .failures()
                .iter()
                .map(|f| (f.server.clone(), "failed".to_owned())),
        )
        .collect()
}

/// `--max-budget-usd`: a prompt is interrupted once the estimated cost of its answers reaches
/// the limit (a model without a listed price has no cost and is never stopped).
struct Budget {
    limit: Option<f64>,
    price: Option<agent_providers::pricing::Price>,
    exceeded: bool,
}

impl Budget {
    fn new(limit: Option<f64>, model: &str) -> Self {
        Self {
            limit,
            price: agent_providers::pricing::price(model),
            exceeded: false,
        }
    }

    /// Interrupts the run the first time `usage` costs the limit or more.
    fn check(&mut self, usage: &agent_providers::Usage, interrupt: &agent_loop::Interrupt) {
        if let (Some(limit), Some(p)) = (self.limit, self.price)
            && !self.exceeded
            && p.cost(usage) >= limit
        {
            self.exceeded = true;
            interrupt.interrupt();
        }
    }
}

/// `agent -p …` / `agent --output-format stream-json --input-format stream-json …`.
pub fn run(cli: SdkCli) -> Result<Exit> {
    let given = cli.unhonoured.given();
    if !given.is_empty() {
        output::warning(&format!(
            "accepted but not honoured by agent: {} (see docs/sdk.md)",
            given.join(", ")
        ));
    }
    let streaming_in = cli.input_format.as_deref() == Some("stream-json");
    if streaming_in && cli.output_format.as_deref() != Some("stream-json") {
        bail!("--input-format stream-json needs --output-format stream-json");
    }
    let inputs = Inputs::from_cli(&cli)?;
    if streaming_in {
        return sdk_session(cli, inputs);
    }
    print_mode(cli, inputs)
}

/// The session options of a headless invocation, and the files it made (inline `--settings`
/// JSON) that must live as long as it.
struct Inputs {
    options: SessionOptions,
    _files: Vec<tempfile::NamedTempFile>,
    mcp: Option<(agent_mcp::McpConfig, bool)>,
    only_tools: Option<Vec<String>>,
    session_id: Option<agent_store::SessionId>,
}

impl Inputs {
    fn from_cli(cli: &SdkCli) -> Result<Self> {
        let mut files = Vec::new();
        let mut settings = Vec::new();
        for s in &cli.settings {
            if s.trim_start().starts_with('{') {
                let value: Value = serde_json::from_str(s)
                    .with_context(|| "--settings: the JSON text does not parse".to_owned())?;
                let mut f = tempfile::Builder::new()
                    .prefix("agent-settings-")
                    .suffix(".json")
                    .tempfile()
                    .context("cannot write --settings JSON to a temporary file")?;
                std::io::Write::write_all(&mut f, value.to_string().as_bytes())?;
                settings.push(f.path().to_path_buf());
                files.push(f);
            } else {
                settings.push(s.into());
            }
        }
        let system_prompt = match (&cli.system_prompt, &cli.system_prompt_file) {
            (_, Some(path)) => Some(std::fs::read_to_string(path).with_context(|| {
                format!("--system-prompt-file: cannot read {}", path.display())
            })?),
            (s, None) => s.clone(),
        };
        let options = SessionOptions {
            provider: cli.provider.clone(),
            model: cli.model.clone(),
            base_url: cli.base_url.clone(),
            mode: cli.permission_mode.clone(),
            settings: SettingsArgs {
                settings,
                cwd: None,
                project_dir: None,
                trust: false,
                setting_sources: cli.setting_sources.clone(),
            },
            sessions_url: cli.sessions_url.clone(),
            session: cli.resume.clone(),
            continue_recent: cli.continue_recent && cli.resume.is_none(),
            fork: None,
            resume_at: cli.resume_session_at.clone(),
            max_turns: cli.max_turns.unwrap_or(50),
            workspace: None,
            state_dir: None,
            add_dirs: cli.add_dirs.clone(),
            allow: cli.allowed_tools.clone(),
            deny: cli.disallowed_tools.clone(),
            system_prompt,
            append_system_prompt: cli.append_system_prompt.clone(),
        };
        let mut options = options;
        if cli.fork_session {
            match options.session.take() {
                Some(id) => options.fork = Some(id),
                None if options.continue_recent => {
                    bail!("--fork-session with --continue is not supported; give --resume ID")
                }
                None => bail!("--fork-session needs --resume ID"),
            }
        }
        let mut mcp = agent_mcp::McpConfig::default();
        for m in &cli.mcp_config {
            let value: Value = if m.trim_start().starts_with('{') {
                serde_json::from_str(m).context("--mcp-config: the JSON text does not parse")?
            } else {
                let text = std::fs::read_to_string(m)
                    .with_context(|| format!("--mcp-config: cannot read {m}"))?;
                serde_json::from_str(&text)
                    .with_context(|| format!("--mcp-config: {m} is not JSON"))?
            };
            let mut value = value;
            if let Some(servers) = value.get_mut("mcpServers").and_then(Value::as_object_mut) {
                let sdk: Vec<String> = servers
                    .iter()
                    .filter(|(_, v)| v.get("type").and_then(Value::as_str) == Some("sdk"))
                    .map(|(k, _)| k.clone())
                    .collect();
                for name in sdk {
                    servers.remove(&name);
                    output::warning(&format!(
                        "MCP server {name} is an SDK in-process server, which agent does not support; it is skipped"
                    ));
                }
            }
            // As in settings files: a bad entry is skipped with a warning, the rest start.
            let partial = agent_mcp::McpConfig::parse(&value, None, |k| std::env::var(k).ok())
                .with_context(|| {
                    format!("--mcp-config {}", m.chars().take(60).collect::<String>())
                })?;
            for skipped in &partial.skipped {
                output::warning(&format!("--mcp-config: {skipped}"));
            }
            mcp.servers.extend(partial.config.servers);
        }
        let mcp = (!cli.mcp_config.is_empty() || cli.strict_mcp_config)
            .then_some((mcp, cli.strict_mcp_config));
        let only_tools = match cli.tools.as_deref().map(str::trim) {
            None | Some("default") => None,
            Some(list) => Some(
                list.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
        };
        let session_id = cli
            .session_id
            .as_deref()
            .map(agent_store::SessionId::parse)
            .transpose()
            .context("--session-id")?;
        Ok(Self {
            options,
            _files: files,
            mcp,
            only_tools,
            session_id,
        })
    }
}

/// `agent -p PROMPT [--output-format text|json|stream-json]`: one prompt, as `agent run` with
/// a headless output; the change set stays in the shadow (apply it with `agent workspace
/// commit`), since nobody reviewed it.
fn print_mode(cli: SdkCli, mut inputs: Inputs) -> Result<Exit> {
    let prompt = match cli.prompt.clone() {
        Some(p) => p,
        None if !std::io::stdin().is_terminal() => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the prompt from stdin")?;
            text
        }
        None => bail!("no prompt: give it as an argument (`agent -p \"...\"`) or on stdin"),
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    let format = cli.output_format.clone().unwrap_or_else(|| "text".into());
    let Opened {
        runtime,
        store,
        mut agent,
        ws,
        folder,
        bash,
        mut servers,
        ..
    } = open_with(
        &mut inputs.options,
        OpenWith {
            quiet: true,
            only_tools: inputs.only_tools.clone(),
            session_id: inputs.session_id.clone(),
            mcp: inputs.mcp.take(),
            ..OpenWith::default()
        },
    )?;
    let stream = format == "stream-json";
    let channel = Channel::default();
    if stream {
        channel.send(&stream::init_message(&init_facts(
            &agent, &folder, &servers,
        )));
    }
    let mut encoder = TurnEncoder::new(
        agent.session_id().as_str(),
        agent.model(),
        cli.include_partial_messages,
    );
    let model = agent.model().to_owned();
    let mut budget = Budget::new(cli.max_budget_usd, &model);
    let interrupt = agent.interrupter();
    let result = runtime.block_on(async {
        let mut show = |e: &AgentEvent| {
            for m in encoder.encode(e) {
                if stream {
                    channel.send(&m);
                }
            }
            budget.check(encoder.usage(), &interrupt);
        };
        let (result, _) =
            super::drive::drive_observed(&mut agent, &prompt, None, Some(&mut show)).await?;
        super::drive::join_background(&bash, true).await?;
        let id = agent.session_id().clone();
        let set = ws.review()?.changes().clone();
        store
            .append(
                &id,
                vec![Event::new(0, None, EventPayload::WorkspaceDiff(set.event()))],
            )
            .await?;
        agent.close().await?;
        servers.shutdown().await;
        store.close(&id).await?;
        if !set.is_empty() {
            output::warning(&format!(
                "{} change(s) wait in the shadow workspace: review with `agent workspace diff`, apply with `agent workspace commit`",
                set.changes.len()
            ));
        }
        anyhow::Ok(result)
    })?;
    let message = encoder.result(&result, &model, budget.exceeded);
    match format.as_str() {
        "text" => output::stdout_line(&result.final_text),
        _ => channel.send(&message),
    }
    if budget.exceeded {
        output::warning(&format!(
            "the prompt was stopped at --max-budget-usd {}",
            cli.max_budget_usd.unwrap_or_default()
        ));
        return Ok(Exit::Denied);
    }
    Ok(super::drive::run_exit(&result, false))
}

/// The SDK's session: reads `initialize` (its hooks become the session's), opens the session,
/// then runs each user message as a prompt until stdin closes.
fn sdk_session(cli: SdkCli, mut inputs: Inputs) -> Result<Exit> {
    let channel = Channel::default();
    let (tx, mut inbox) = mpsc::unbounded_channel();
    {
        let channel = channel.clone();
        std::thread::Builder::new()
            .name("sdk-stdin".into())
            .spawn(move || channel.read_stdin(tx))
            .context("cannot start the stdin reader")?;
    }
    // The first message decides: `initialize` (the SDK always sends it first) or a user
    // message from a plain script.
    let mut queue: VecDeque<String> = VecDeque::new();
    let mut initialize: Option<(String, Value)> = None;
    let mut closed = false;
    match inbox.blocking_recv() {
        Some(Inbound::Control { id, request }) => {
            if request.get("subtype").and_then(Value::as_str) == Some("initialize") {
                initialize = Some((id, request));
            } else {
                channel.respond_error(
                    &id,
                    "the session is not initialized yet: send `initialize` first",
                );
            }
        }
        Some(Inbound::User(text)) => queue.push_back(text),
        Some(Inbound::Closed) | None => closed = true,
    }
    if closed && queue.is_empty() {
        return Ok(Exit::Success);
    }
    let hooks = initialize
        .as_ref()
        .and_then(|(_, r)| r.get("hooks"))
        .filter(|h| h.is_object())
        .cloned();
    // The TypeScript SDK sends the system prompt in `initialize` (a string or a list of
    // strings), not as a flag; it means what --system-prompt / --append-system-prompt mean.
    if let Some((_, request)) = &initialize {
        let text = |key: &str| match request.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(parts)) => Some(
                parts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
            _ => None,
        };
        if let Some(base) = text("systemPrompt").filter(|t| !t.trim().is_empty()) {
            inputs.options.system_prompt = Some(base);
        }
        if let Some(append) = text("appendSystemPrompt").filter(|t| !t.trim().is_empty()) {
            inputs.options.append_system_prompt = Some(append);
        }
    }
    let registered = std::sync::atomic::AtomicUsize::new(0);
    let register = |registry: &mut agent_core::hooks::HookRegistry,
                    view: &agent_core::view::PathView|
     -> Result<()> {
        if let Some(h) = &hooks {
            let n = callbacks::register_hooks(registry, h, &channel, Some(view))?;
            registered.store(n, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(())
    };
    let prompter: Option<Arc<dyn agent_core::permissions::Prompter>> = match cli
        .permission_prompt_tool
        .as_deref()
    {
        Some("stdio") => Some(Arc::new(callbacks::SdkPrompter {
            channel: channel.clone(),
        })),
        Some(other) => {
            output::warning(&format!(
                "--permission-prompt-tool {other}: only `stdio` (the SDK's callback) is supported; questions are denied"
            ));
            None
        }
        None => None,
    };
    let opened = open_with(
        &mut inputs.options,
        OpenWith {
            quiet: true,
            prompter,
            hooks: Some(&register),
            only_tools: inputs.only_tools.clone(),
            session_id: inputs.session_id.clone(),
            mcp: inputs.mcp.take(),
            applied_each_prompt: !cli.keep_shadow,
        },
    );
    let opened = match opened {
        Ok(o) => o,
        Err(e) => {
            if let Some((id, _)) = &initialize {
                channel.respond_error(id, &output::chain(&e));
            }
            return Err(e);
        }
    };
    if let Some((id, _)) = &initialize {
        channel.respond(
            id,
            json!({
                "commands": [],
                "models": [],
                "output_style": "default",
                "available_output_styles": ["default"],
                "hook_on_failure_supported": true,
                "hooks_applied": true,
                "agent_version": stream::VERSION,
                "pid": std::process::id(),
            }),
        );
    }
    let mut session = SdkSession {
        opened,
        channel,
        partial: cli.include_partial_messages,
        keep_shadow: cli.keep_shadow,
        budget: cli.max_budget_usd,
        queue,
        closed,
    };
    let runtime = session.opened.runtime.handle().clone();
    runtime.block_on(session.serve(&mut inbox))?;
    let SdkSession { opened, .. } = session;
    let Opened {
        runtime,
        store,
        agent,
        mut servers,
        ..
    } = opened;
    runtime.block_on(async {
        let id = agent.session_id().clone();
        agent.close().await?;
        servers.shutdown().await;
        store.close(&id).await?;
        anyhow::Ok(())
    })?;
    Ok(Exit::Success)
}

/// An open SDK session and what it keeps between prompts.
struct SdkSession {
    opened: Opened,
    channel: Channel,
    partial: bool,
    keep_shadow: bool,
    budget: Option<f64>,
    /// User messages waiting for their turn.
    queue: VecDeque<String>,
    /// stdin closed: finish what is queued, then end.
    closed: bool,
}

/// What a control request changes for the prompt that runs or the next one.
#[derive(Default)]
struct Pending {
    mode: Option<PermissionMode>,
    model: Option<String>,
}

impl SdkSession {
    async fn serve(&mut self, inbox: &mut mpsc::UnboundedReceiver<Inbound>) -> Result<()> {
        let mut pending = Pending::default();
        loop {
            self.apply(&mut pending).await?;
            let text = match self.queue.pop_front() {
                Some(t) => t,
                None if self.closed => return Ok(()),
                None => match inbox.recv().await {
                    Some(Inbound::User(t)) => t,
                    Some(Inbound::Control { id, request }) => {
                        answer_control(
                            &self.channel,
                            &id,
                            &request,
                            None,
                            &self.opened.agent.permissions(),
                            &self.opened.servers,
                            &mut pending,
                        );
                        continue;
                    }
                    Some(Inbound::Closed) | None => return Ok(()),
                },
            };
            self.turn(&text, inbox, &mut pending).await?;
        }
    }

    /// Records mode and model switches asked for while a prompt ran (or between prompts).
    async fn apply(&mut self, pending: &mut Pending) -> Result<()> {
        if let Some(m) = pending.mode.take() {
            self.opened.agent.set_mode(m).await?;
        }
        if let Some(m) = pending.model.take() {
            self.opened.agent.set_model(&m).await?;
        }
        Ok(())
    }

    /// One prompt: `system`/`init`, the conversation as it happens, the change set applied,
    /// then `result`. Control requests are answered while it runs; user messages wait.
    async fn turn(
        &mut self,
        text: &str,
        inbox: &mut mpsc::UnboundedReceiver<Inbound>,
        pending: &mut Pending,
    ) -> Result<()> {
        let facts = init_facts(
            &self.opened.agent,
            &self.opened.folder,
            &self.opened.servers,
        );
        self.channel.send(&stream::init_message(&facts));
        let model = self.opened.agent.model().to_owned();
        let mut budget = Budget::new(self.budget, &model);
        let mut encoder = TurnEncoder::new(&facts.session_id, &model, self.partial);
        let interrupt = self.opened.agent.interrupter();
        let engine = self.opened.agent.permissions();
        let mut result = None;
        {
            let agent = &mut self.opened.agent;
            let mut stream = std::pin::pin!(agent.query(text).fuse());
            loop {
                tokio::select! {
                    item = stream.next() => {
                        let Some(item) = item else { break };
                        let event = item?;
                        for m in encoder.encode(&event) {
                            self.channel.send(&m);
                        }
                        if let AgentEvent::Finished(r) = event {
                            result = Some(r);
                        }
                        budget.check(encoder.usage(), &interrupt);
                    }
                    msg = inbox.recv(), if !self.closed => match msg {
                        Some(Inbound::User(t)) => self.queue.push_back(t),
                        Some(Inbound::Control { id, request }) => {
                            // `control` needs `&self` while the stream borrows the agent:
                            // answer through a view of what it needs.
                            answer_control(&self.channel, &id, &request, Some(&interrupt), &engine, &self.opened.servers, pending);
                        }
                        Some(Inbound::Closed) | None => self.closed = true,
                    },
                }
            }
        }
        let result = result.context("the run ended without a result")?;
        if result.stop_reason == RunStopReason::Interrupted && !budget.exceeded {
            self.channel.send(&json!({
                "type": "user",
                "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]},
                "parent_tool_use_id": null,
                "session_id": facts.session_id,
                "uuid": agent_core::events::EventId::new().as_str(),
            }));
        }
        self.land().await?;
        self.report_timings();
        self.channel
            .send(&encoder.result(&result, &model, budget.exceeded));
        Ok(())
    }

    /// With `AGENT_SDK_TIMINGS` set, one stderr line per prompt with the round trip of each
    /// control request this side sent (`can_use_tool`, `hook_callback`): `agent-sdk-timings
    /// {"can_use_tool": [µs, …], …}` (the SDK bench reads it; docs/sdk.md).
    fn report_timings(&self) {
        let timings = self.channel.take_timings();
        if std::env::var_os("AGENT_SDK_TIMINGS").is_none() || timings.is_empty() {
            return;
        }
        let mut by: serde_json::Map<String, Value> = serde_json::Map::new();
        for (subtype, micros) in timings {
            if let Some(list) = by
                .entry(subtype)
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
            {
                list.push(json!(micros));
            }
        }
        let line = format!("agent-sdk-timings {}\n", Value::Object(by));
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }

    /// The end of a prompt: background commands finish, then the change set, every edit of
    /// which was approved call by call, is applied to the folder (unless `--keep-shadow`),
    /// and a `system` message says what was applied or refused.
    async fn land(&mut self) -> Result<()> {
        super::drive::join_background(&self.opened.bash, true).await?;
        let ws: &mut Workspace = &mut self.opened.ws;
        let review = ws.review()?;
        let set = review.changes().clone();
        if set.is_empty() {
            return Ok(());
        }
        let id = self.opened.agent.session_id().clone();
        let log = |payload: EventPayload| {
            let store = Arc::clone(&self.opened.store);
            let id = id.clone();
            async move { store.append(&id, vec![Event::new(0, None, payload)]).await }
        };
        log(EventPayload::WorkspaceDiff(set.event())).await?;
        if self.keep_shadow {
            self.channel.send(&json!({
                "type": "system",
                "subtype": "workspace_changes",
                "session_id": id.as_str(),
                "applied": false,
                "changes": set.changes,
            }));
            return Ok(());
        }
        let (applied, refused) = match ws.commit_review(&review, &CommitOptions::default()) {
            Ok(report) => {
                log(EventPayload::WorkspaceCommit(report.event())).await?;
                (serde_json::to_value(&report)?, Value::Null)
            }
            Err(WorkspaceError::Conflicts(conflicts)) => {
                log(EventPayload::WorkspaceCommit(
                    agent_workspace::CommitReport::refused_event(&conflicts),
                ))
                .await?;
                output::warning(&format!(
                    "{} path(s) changed in the folder since they were copied; those changes stay in the shadow (agent workspace diff)",
                    conflicts.len()
                ));
                (Value::Null, serde_json::to_value(&conflicts)?)
            }
            Err(WorkspaceError::ChangedSinceReview(paths)) => {
                (Value::Null, json!({"changedSinceReview": paths}))
            }
            Err(e) => return Err(e.into()),
        };
        self.channel.send(&json!({
            "type": "system",
            "subtype": "workspace_commit",
            "session_id": id.as_str(),
            "applied": !applied.is_null(),
            "commit": applied,
            "refused": refused,
        }));
        Ok(())
    }
}

/// Answers one control request of the SDK, between prompts or while one runs (`running`: its
/// interrupt handle). A mode switch takes effect at once for the calls that follow and is
/// recorded in the log after the prompt; a model switch applies from the next prompt.
fn answer_control(
    channel: &Channel,
    id: &str,
    request: &Value,
    running: Option<&agent_loop::Interrupt>,
    engine: &agent_core::permissions::PermissionEngine,
    servers: &agent_mcp::McpServers,
    pending: &mut Pending,
) {
    match request.get("subtype").and_then(Value::as_str).unwrap_or("") {
        "interrupt" => {
            if let Some(i) = running {
                i.interrupt();
                // A question the SDK is still answering is moot now.
                channel.cancel_pending("interrupted");
            }
            channel.respond(id, json!({}));
        }
        "set_permission_mode" => {
            let mode = request.get("mode").and_then(Value::as_str).unwrap_or("");
            match mode.parse::<PermissionMode>() {
                Ok(m) => {
                    engine.set_mode(m);
                    pending.mode = Some(m);
                    channel.respond(id, json!({}));
                }
                Err(e) => channel.respond_error(id, &e.to_string()),
            }
        }
        "set_model" => {
            // null: the default model, which is the one this session started with.
            if let Some(m) = request.get("model").and_then(Value::as_str)
                && !m.trim().is_empty()
            {
                pending.model = Some(m.to_owned());
            }
            channel.respond(id, json!({}));
        }
        "mcp_status" => channel.respond(
            id,
            json!({"mcpServers": mcp_servers(servers)
                .iter()
                .map(|(n, s)| json!({"name": n, "status": s}))
                .collect::<Vec<_>>()}),
        ),
        "initialize" => channel.respond_error(id, "the session is already initialized"),
        other => channel.respond_error(
            id,
            &format!(
                "agent does not support the control request `{other}` (supported: initialize, interrupt, set_permission_mode, set_model, mcp_status)"
            ),
        ),
    }
}
