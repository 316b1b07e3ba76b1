//! `agent run "PROMPT"`: the agent on a real folder, through a real provider.
//!
//! The folder is imported into its shadow workspace (or the existing shadow is reused), the
//! agent works there through the full gate, the transcript streams live, and at the end the
//! change set is shown and applied only when confirmed (`--yes`, or `y` on a terminal).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::events::{Event, EventPayload, TokenUsage};
use agent_core::hooks::HooksConfig;
use agent_core::permissions::{PermissionEngine, PermissionMode, PermissionPolicy, RuleList};
use agent_core::settings::Settings;
use agent_core::tools::Tool;
use agent_loop::{Agent, AgentEvent, AgentOptions, ModelHooks, RunResult, RunStopReason};
use agent_providers::{Provider, ProviderConfig, ProviderKind};
use agent_store::recovery::ResumeOptions;
use agent_store::{SessionBackend, SessionId, SessionStore, StoreOptions};
use agent_tools::{Bash, ToolState, WebFetch, builtin_tools};
use agent_workspace::{CommitOptions, ImportOptions, Workspace, WorkspaceError};
use anyhow::{Context, Result, bail};
use futures_util::{FutureExt as _, StreamExt as _};
use serde_json::{Value, json};

use super::live::{Live, TerminalPrompter};
use super::transcript::Paths;
use super::{absolute, hook_registry_with, load_settings};
use crate::cli::{RunArgs, SessionOptions};
use crate::exit::Exit;
use crate::output;

/// The default model of each provider (overridden by `--model` or the settings' `model`).
fn default_model(kind: ProviderKind) -> Option<&'static str> {
    match kind {
        ProviderKind::Anthropic => Some("claude-sonnet-4-5"),
        ProviderKind::OpenAi => Some("gpt-4.1"),
        ProviderKind::OpenAiCompatible => None,
    }
}

/// What the settings say about the provider: `"provider": "openai"` or `"provider": {"name":
/// "openai-compatible", "baseUrl": "http://localhost:11434/v1", "apiKeyEnv": "MY_KEY"}` (or
/// `"apiKey"` itself), and `"model"`; the last file that says wins. Only files that may grant
/// capabilities count: an untrusted project must not send your key to a server of its choosing.
/// Claude Code's files (`.claude/`) are not read for these: their `model` names a Claude model
/// by Claude Code's aliases (`opus`), which no provider API knows.
#[derive(Debug, Default)]
struct ProviderSettings {
    name: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
}

/// `own`: `$AGENT_HOME/settings.json` when `--setting-sources` left the user source out. The
/// provider and model are `agent`'s own configuration, which the SDK knows nothing of, so an
/// SDK caller's `setting_sources=[]` (about Claude Code's files) does not unset them; they are
/// read first, and any file that is loaded overrides them.
fn provider_settings(
    settings: &Settings,
    own: Option<(PathBuf, serde_json::Map<String, Value>)>,
) -> Result<ProviderSettings> {
    let mut out = ProviderSettings::default();
    let own_file = own.as_ref().map(|(p, v)| (p.as_path(), true, v));
    let files = settings
        .files
        .iter()
        .filter(|f| !f.claude)
        .map(|f| (f.path.as_path(), f.trusted, &f.value));
    for (path, trusted, value) in own_file.into_iter().chain(files) {
        let file = ProviderFile {
            path,
            trusted,
            value,
        };
        let where_ = file.path.display();
        if !file.trusted {
            if file.value.contains_key("provider") || file.value.contains_key("model") {
                output::warning(&format!(
                    "{where_}: provider and model settings skipped because this folder is not trusted"
                ));
            }
            continue;
        }
        match file.value.get("provider") {
            None => {}
            Some(Value::String(s)) => out.name = Some(s.clone()),
            Some(Value::Object(o)) => {
                let text = |key: &str| -> Result<Option<String>> {
                    match o.get(key) {
                        None => Ok(None),
                        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                        Some(_) => bail!("{where_}: provider.{key} must be a non-empty string"),
                    }
                };
                if let Some(n) = text("name")? {
                    out.name = Some(n);
                }
                if let Some(b) = text("baseUrl")? {
                    out.base_url = Some(b);
                }
                if let Some(k) = text("apiKey")? {
                    out.api_key = Some(k);
                }
                if let Some(var) = text("apiKeyEnv")? {
                    match std::env::var(&var) {
                        Ok(k) if !k.trim().is_empty() => out.api_key = Some(k),
                        _ => bail!(
                            "{where_}: provider.apiKeyEnv names {var}, which is not set; export it or remove the setting"
                        ),
                    }
                }
            }
            Some(other) => bail!(
                "{where_}: provider is {other}; use \"anthropic\", \"openai\", \"openai-compatible\" or {{\"name\": ..., \"baseUrl\": ..., \"apiKeyEnv\": ...}}"
            ),
        }
        if let Some(m) = file.value.get("model") {
            match m.as_str() {
                Some(m) => out.model = Some(m.to_owned()),
                None => bail!("{where_}: model is {m}; it must be a string"),
            }
        }
    }
    Ok(out)
}

/// One settings file as [`provider_settings`] reads it.
struct ProviderFile<'a> {
    path: &'a Path,
    trusted: bool,
    value: &'a serde_json::Map<String, Value>,
}

/// `$AGENT_HOME/settings.json`, read for its provider and model alone, when the settings'
/// sources leave the user's file out.
fn own_settings(
    loaded: &super::LoadedSettings,
) -> Result<Option<(PathBuf, serde_json::Map<String, Value>)>> {
    if loaded.sources.user {
        return Ok(None);
    }
    let path = super::agent_home()?.settings();
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(Some((path, map))),
        _ => bail!("{}: not a JSON object; fix or remove it", path.display()),
    }
}

/// The provider `agent run` uses, and the model.
fn provider(
    args: &SessionOptions,
    settings: &Settings,
    own: Option<(PathBuf, serde_json::Map<String, Value>)>,
) -> Result<(Arc<dyn Provider>, String)> {
    let set = provider_settings(settings, own)?;
    let name = match args.provider.clone().or(set.name) {
        Some(n) => n,
        None if std::env::var_os("ANTHROPIC_API_KEY").is_some_and(|k| !k.is_empty()) => {
            "anthropic".into()
        }
        None if std::env::var_os("OPENAI_API_KEY").is_some_and(|k| !k.is_empty()) => {
            "openai".into()
        }
        None => bail!(
            "no model provider is configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY), or pass --provider openai-compatible --base-url URL --model M for a local server; `agent demo` shows the whole loop offline without a key"
        ),
    };
    let kind: ProviderKind = name.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut config = ProviderConfig::from_env(kind);
    if let Some(b) = args.base_url.clone().or(set.base_url) {
        config = config.with_base_url(b);
    }
    if let Some(k) = set.api_key {
        config = config.with_api_key(k);
    }
    let model = match args.model.clone().or(set.model) {
        Some(m) => m,
        None => match default_model(kind) {
            Some(m) => m.to_owned(),
            None => bail!(
                "an openai-compatible server needs --model (the name the server knows, e.g. llama3.1)"
            ),
        },
    };
    let provider = agent_providers::build(&config).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((provider, model))
}

/// The shadow workspace of `folder`: the existing one, or a fresh import.
pub(crate) fn workspace(folder: &Path, state_root: &Path) -> Result<(Workspace, Option<Event>)> {
    match Workspace::open(folder, state_root) {
        Ok(ws) => Ok((ws, None)),
        Err(WorkspaceError::NotFound(_)) => {
            let opts = ImportOptions {
                state_root: state_root.to_path_buf(),
                shadow: None,
            };
            let (ws, report) = Workspace::import(folder, &opts)?;
            let event = Event::new(
                0,
                None,
                EventPayload::WorkspaceImport(ws.import_event(&report)),
            );
            Ok((ws, Some(event)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The tools of a run and the permission policies they need.
pub(crate) type Toolset = (Vec<Arc<dyn Tool>>, Vec<Box<dyn PermissionPolicy>>);

/// Every tool `agent run` offers: the built-ins, Bash as the settings configure it, WebFetch;
/// and the permission policies they need (Bash's: ask before a command runs on the host
/// without the OS sandbox).
pub(crate) fn tools(settings: &Settings, home: &Path) -> Result<Toolset> {
    let (toolset, _) = tools_and_bash(settings, home, None)?;
    Ok(toolset)
}

/// [`tools`], and the Bash tool among them (to wait for its background commands); `view`:
/// the session works in a shadow copy of the real folder.
fn tools_and_bash(
    settings: &Settings,
    home: &Path,
    view: Option<&agent_core::view::PathView>,
) -> Result<(Toolset, Arc<Bash>)> {
    let mut tools = builtin_tools(&ToolState::new());
    let bash = Arc::new(super::tool::bash_tool(settings, home, view)?);
    let policies: Vec<Box<dyn PermissionPolicy>> = vec![Box::new(bash.host_policy())];
    tools.push(Arc::clone(&bash) as Arc<dyn Tool>);
    let sandbox = agent_sandbox::settings::SandboxSettings::from_settings(settings, home)?;
    tools.push(Arc::new(WebFetch::new(&sandbox.network)));
    Ok(((tools, policies), bash))
}

/// A reused shadow brought up to date before the model starts: changes made in the real
/// folder since are pulled in; paths changed on both sides are reported (the shadow's
/// version stays, and commit will refuse them until resolved).
fn fresh(ws: &mut Workspace) -> Result<()> {
    let report = ws
        .refresh()
        .with_context(|| format!("cannot refresh the shadow of {}", ws.real().display()))?;
    if !report.pulled.is_empty() {
        output::warning(&format!(
            "the shadow workspace was refreshed: {} path(s) changed in {} since it was made ({})",
            report.pulled.len(),
            ws.real().display(),
            summary(&report.pulled)
        ));
    }
    if !report.conflicts.is_empty() {
        output::warning(&format!(
            "{} path(s) changed both in {} and in the shadow; the shadow's version is kept and commit will refuse them until resolved: {}",
            report.conflicts.len(),
            ws.real().display(),
            summary(&report.conflicts)
        ));
    }
    Ok(())
}

/// The first few paths of a list, for a one-line message.
fn summary(paths: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        s.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    s
}

/// The MCP servers `agent run` starts: `mcpServers` of every settings file that may grant
/// capabilities (an untrusted project's files may not), then the project's `.mcp.json` when
/// the project is trusted (a later definition of a name wins). A server's command runs on the
/// host, like a hook's, so an untrusted folder never starts one. A malformed server (an unset
/// `${VAR}`, `"type": "sse"`) is left out with one warning naming the file, the server and the
/// fix; so is a `.mcp.json` that cannot be read as a whole. The others still start.
fn mcp_config(settings: &Settings, project_dir: &Path) -> agent_mcp::McpConfig {
    let mut merged = agent_mcp::McpConfig::default();
    let mut add = |partial: agent_mcp::PartialConfig| {
        merged.servers.extend(partial.config.servers);
        for skipped in partial.skipped {
            // A later definition that is skipped replaces an earlier one all the same.
            merged.servers.remove(&skipped.server);
            output::warning(&skipped.to_string());
        }
    };
    for file in &settings.files {
        if !file.trusted || !file.value.contains_key("mcpServers") {
            continue;
        }
        match agent_mcp::McpConfig::parse(
            &Value::Object(file.value.clone()),
            Some(&file.path),
            |name| std::env::var(name).ok(),
        ) {
            Ok(partial) => add(partial),
            Err(e) => output::warning(&format!("{e}; none of its MCP servers is started")),
        }
    }
    let dot = project_dir.join(".mcp.json");
    if dot.is_file() {
        if settings.project_trusted {
            match agent_mcp::McpConfig::load_partial(&dot) {
                Ok(partial) => add(partial),
                Err(e) => output::warning(&format!("{e}; none of its MCP servers is started")),
            }
        } else {
            output::warning(&format!(
                "{} is not used: the folder is not trusted (run `agent trust {}` to use its MCP servers)",
                dot.display(),
                project_dir.display()
            ));
        }
    }
    merged
}

/// Streams one prompt's run to the terminal through `live` (or collects it quietly for
/// `--json` when `None`), with Ctrl-C interrupting it cleanly.
pub(crate) async fn drive(
    agent: &mut Agent,
    prompt: &str,
    live: Option<&mut Live>,
) -> Result<(RunResult, Vec<Event>)> {
    drive_observed(agent, prompt, live, None).await
}

/// [`drive`], with every event also shown to `observe` as it happens (headless output).
pub(crate) async fn drive_observed(
    agent: &mut Agent,
    prompt: &str,
    mut live: Option<&mut Live>,
    mut observe: Option<&mut (dyn FnMut(&AgentEvent) + Send)>,
) -> Result<(RunResult, Vec<Event>)> {
    let interrupt = agent.interrupter();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            super::live::ctrl_c_pressed();
            interrupt.interrupt();
            // A second Ctrl-C ends the process at once; the log stays readable (a call
            // without its result is answered when the session is resumed).
            if tokio::signal::ctrl_c().await.is_ok() {
                // MCP servers run in process groups of their own: no Ctrl-C reaches them, and
                // no destructor runs after `exit`, so they are ended here.
                agent_mcp::end_all_blocking();
                std::process::exit(130);
            }
        }
    });
    let mut logged = Vec::new();
    let mut result = None;
    {
        let mut stream = std::pin::pin!(agent.query(prompt).fuse());
        while let Some(item) = stream.next().await {
            // With what was sent along with it (the calls of one answer come together, so
            // the transcript can number them).
            let mut batch = vec![item?];
            while let Some(Some(more)) = stream.next().now_or_never() {
                batch.push(more?);
            }
            if let Some(live) = live.as_deref_mut() {
                live.show(&batch);
            }
            if let Some(observe) = observe.as_deref_mut() {
                batch.iter().for_each(&mut *observe);
            }
            for event in batch {
                match event {
                    AgentEvent::Logged(e) => logged.push(e),
                    AgentEvent::Finished(r) => result = Some(r),
                    _ => {}
                }
            }
        }
    }
    if let Some(live) = live {
        live.finish();
    }
    ctrl_c.abort();
    let result = result.context("the run ended without a result")?;
    Ok((result, logged))
}

/// A session on a folder, set up as `agent run` and `agent chat` both set it up: the
/// settings, the provider, the shadow workspace of the folder's repository (refreshed when it
/// is reused), the tools and the permission engine, the MCP servers (started) and the agent
/// (started, or resumed as the options say), with its live transcript.
pub(crate) struct Opened {
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) store: Arc<dyn SessionBackend>,
    pub(crate) agent: Agent,
    pub(crate) ws: Workspace,
    /// The folder imported (the repository's root).
    pub(crate) root: PathBuf,
    /// The folder the session was started in (the session's `cwd`).
    pub(crate) folder: PathBuf,
    pub(crate) shadow_root: PathBuf,
    pub(crate) bash: Arc<Bash>,
    pub(crate) servers: agent_mcp::McpServers,
    pub(crate) live: Live,
}

/// Opens a session (see [`Opened`]); `quiet` leaves the terminal alone (no prompter: nothing
/// can be asked).
pub(crate) fn open(args: &mut SessionOptions, quiet: bool) -> Result<Opened> {
    open_with(
        args,
        OpenWith {
            quiet,
            ..OpenWith::default()
        },
    )
}

/// Registers more hooks in a session's registry before it is shared (the SDK's callbacks);
/// gets the real-folder view of the shadow.
pub(crate) type HookRegistrar<'a> =
    &'a dyn Fn(&mut agent_core::hooks::HookRegistry, &agent_core::view::PathView) -> Result<()>;

/// What a headless host adds to [`open`].
#[derive(Default)]
pub(crate) struct OpenWith<'a> {
    /// Leave the terminal alone (no terminal prompter).
    pub(crate) quiet: bool,
    /// Who answers permission questions (the SDK's `can_use_tool`); overrides the terminal.
    pub(crate) prompter: Option<Arc<dyn agent_core::permissions::Prompter>>,
    /// More hooks (the SDK's).
    pub(crate) hooks: Option<HookRegistrar<'a>>,
    /// Only these tools are offered (`--tools a,b`; empty: none).
    pub(crate) only_tools: Option<Vec<String>>,
    /// The id of a new session.
    pub(crate) session_id: Option<SessionId>,
    /// More MCP servers (`--mcp-config`), and whether they are the only ones.
    pub(crate) mcp: Option<(agent_mcp::McpConfig, bool)>,
    /// The host applies the change set at the end of each prompt (the system prompt says so).
    pub(crate) applied_each_prompt: bool,
}

/// Rules given on the command line: each value may hold several, separated by commas or
/// whitespace outside parentheses (`--allowedTools "Read,Bash(git log *)"`).
pub(crate) fn split_rules(values: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for v in values {
        let mut depth = 0usize;
        let mut cur = String::new();
        for c in v.chars() {
            match c {
                '(' => {
                    depth += 1;
                    cur.push(c);
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    cur.push(c);
                }
                ',' | ' ' | '\t' | '\n' if depth == 0 => {
                    if !cur.trim().is_empty() {
                        out.push(cur.trim().to_owned());
                    }
                    cur.clear();
                }
                _ => cur.push(c),
            }
        }
        if !cur.trim().is_empty() {
            out.push(cur.trim().to_owned());
        }
    }
    out
}

/// [`open`], with what a headless host adds.
pub(crate) fn open_with(args: &mut SessionOptions, with: OpenWith<'_>) -> Result<Opened> {
    let quiet = with.quiet;
    super::workspace_as_cwd(&mut args.settings, args.workspace.take())?;
    let loaded = load_settings(&args.settings)?;
    let folder = std::fs::canonicalize(&loaded.cwd)
        .with_context(|| format!("cannot open the folder {}", loaded.cwd.display()))?;
    let (provider, model) = provider(args, &loaded.settings, own_settings(&loaded)?)?;
    let requested = args
        .mode
        .as_deref()
        .map(str::parse::<PermissionMode>)
        .transpose()?;
    let resuming = args.session.is_some() || args.continue_recent || args.fork.is_some();
    let mode = match requested {
        Some(m) => Some(loaded.settings.mode(Some(m))?),
        None if resuming => None,
        None => Some(loaded.settings.mode(None)?),
    };
    let state_root = match args.state_dir.clone() {
        Some(dir) => absolute(dir)?,
        None => super::agent_home()?.workspaces(),
    };
    // The repository the folder belongs to is imported; the agent starts where it was run.
    let (root, inside) = agent_workspace::import_root(&folder);
    let (mut ws, imported) = workspace(&root, &state_root)?;
    if imported.is_none() {
        fresh(&mut ws)?;
    }
    let shadow_root = ws.shadow().to_path_buf();
    // (`join("")` would add a trailing slash, which hooks would see in `cwd`.)
    let shadow = if inside.as_os_str().is_empty() {
        shadow_root.clone()
    } else {
        shadow_root.join(&inside)
    };
    if !shadow.is_dir() {
        bail!(
            "{} is not in the shadow workspace of {} (an ignored folder?); run from a folder the workspace holds",
            folder.display(),
            root.display()
        );
    }

    let runtime = runtime()?;
    let store: Arc<dyn SessionBackend> = Arc::new(runtime.block_on(SessionStore::open(
        StoreOptions::new(super::agent_home()?.sessions()),
    ))?);
    let models: Arc<dyn agent_core::hooks::HookExtension> = Arc::new(ModelHooks::new(
        Arc::clone(&provider),
        model.clone(),
        Some(Arc::clone(&store)),
    ));
    let config = HooksConfig::from_settings(&loaded.settings)?;
    let mut registry =
        hook_registry_with(&config, &loaded.project_dir, &loaded.home, Some(models))?;
    let view = agent_core::view::PathView::new(&root, &shadow_root);
    if let Some(register) = with.hooks {
        register(&mut registry, &view)?;
    }
    let hooks = Arc::new(registry);
    // The project's rules name the real folder; they hold for its shadow copy too.
    let mut permissions = PermissionEngine::builder(&shadow, &loaded.home)
        .settings(&loaded.settings)
        .shadow_of(&root, &shadow_root);
    if shadow != shadow_root {
        // Started in a subfolder: the whole repository's shadow is the workspace.
        permissions = permissions.add_dir(&shadow_root);
    }
    let ((tools, policies), bash) = tools_and_bash(&loaded.settings, &loaded.home, Some(&view))?;
    for p in policies {
        permissions = permissions.policy(p);
    }
    for d in &args.add_dirs {
        permissions = permissions.add_dir(absolute(d.clone())?);
    }
    // Rules of the command line hold for this session (scope `session`).
    for (list, flag, values) in [
        (RuleList::Allow, "--allow", &args.allow),
        (RuleList::Deny, "--deny", &args.deny),
    ] {
        for rule in split_rules(values) {
            permissions = permissions
                .rule(list, &rule)
                .map_err(|e| anyhow::anyhow!("{flag} {rule}: {e}"))?;
        }
    }
    let mut tools = tools;
    if let Some(only) = &with.only_tools {
        // `Task` (subagents) is added when the agent starts.
        let known: Vec<String> = tools
            .iter()
            .map(|t| t.name().to_owned())
            .chain(std::iter::once("Task".to_owned()))
            .collect();
        for name in only {
            if !known.iter().any(|k| k == name) {
                output::warning(&format!(
                    "--tools names {name}, which is not a tool here (known: {})",
                    known.join(", ")
                ));
            }
        }
        tools.retain(|t| only.iter().any(|n| n == t.name()));
    }
    let mut options = AgentOptions::new(model).max_turns(args.max_turns);
    options.session_id = with.session_id.clone();
    options.view = Some(view.clone());
    options.transcript_dir = Some(super::agent_home()?.transcripts());
    options.resume = ResumeOptions {
        session_id: match (&args.session, &args.fork) {
            (Some(s), _) | (None, Some(s)) => Some(SessionId::parse(s)?),
            _ => None,
        },
        continue_recent: args.continue_recent,
        // Sessions are the real folder's (`agent sessions list --cwd FOLDER` finds them).
        cwd: Some(folder.display().to_string()),
        fork: args.fork.is_some(),
        resume_at: args.resume_at.clone().map(agent_core::events::EventId),
        fork_id: None,
    };
    if args.resume_at.is_some() && !resuming {
        bail!("--resume-at needs --session, --continue or --fork to say which session");
    }
    // `--system-prompt` replaces the instructions (an empty value keeps them: the Claude
    // Agent SDK passes `""` when its caller set none); the facts and the memory stay.
    let nonempty = |s: &Option<String>| s.clone().filter(|t| !t.trim().is_empty());
    let prompt = super::system_prompt::session_prompt(
        super::system_prompt::PromptText {
            base: nonempty(&args.system_prompt),
            append: nonempty(&args.append_system_prompt),
            applied_each_prompt: with.applied_each_prompt,
        },
        &loaded,
        &folder,
        &root,
        &ws,
        imported.is_some(),
        &bash,
    )?;
    let mut builder = Agent::builder(Arc::clone(&provider), Arc::clone(&store), &shadow)
        .options(options)
        .system_prompt(prompt)
        .permissions(permissions)
        .hooks(hooks)
        .tools(tools);
    if let Some(m) = mode {
        builder = builder.mode(m);
    }
    if with
        .only_tools
        .as_ref()
        .is_some_and(|t| !t.iter().any(|n| n == "Task"))
    {
        builder = builder.subagents(false);
    }
    let mut live = Live::new(Paths::new(&folder, Some(view.clone())));
    if let Some(p) = with.prompter {
        builder = builder.prompter(p);
    } else if std::io::stdin().is_terminal() && !quiet {
        builder = builder.prompter(Arc::new(
            TerminalPrompter::new(live.paths().clone(), &loaded.project_dir)
                .with_bash(Arc::clone(&bash)),
        ));
        live = live.questions_asked_here();
    }
    let mut mcp = match with.mcp {
        Some((only, true)) => only,
        Some((more, false)) => {
            let mut mcp = mcp_config(&loaded.settings, &loaded.project_dir);
            mcp.servers.extend(more.servers);
            mcp
        }
        None => mcp_config(&loaded.settings, &loaded.project_dir),
    };
    mcp.in_workspace(&view, &shadow);
    let (agent, servers) = runtime.block_on(async {
        let (options, warnings) = agent_mcp::McpOptions::from_env();
        if !mcp.is_empty() {
            for w in warnings {
                output::warning(&w);
            }
        }
        let servers = agent_mcp::McpServers::start(&mcp, options).await;
        for f in servers.failures() {
            output::warning(&f.to_string());
        }
        builder = builder.tools_extend(servers.tools());
        let agent = builder.start().await?;
        if let Some(e) = imported {
            store.append(agent.session_id(), vec![e]).await?;
        }
        anyhow::Ok((agent, servers))
    })?;
    Ok(Opened {
        runtime,
        store,
        agent,
        ws,
        root,
        folder,
        shadow_root,
        bash,
        servers,
        live,
    })
}

/// Waits for the background commands Bash started (each within its own timeout), so a review
/// taken after holds the whole of what they did.
pub(crate) async fn join_background(bash: &Arc<Bash>, quiet: bool) -> Result<()> {
    let waiting = bash.background_running();
    if waiting > 0 && !quiet {
        output::warning(&format!(
            "waiting for {waiting} background command(s) to finish before the review"
        ));
    }
    let joined = Arc::clone(bash);
    tokio::task::spawn_blocking(move || joined.wait_background()).await?;
    Ok(())
}

pub fn run(mut args: RunArgs) -> Result<Exit> {
    let Opened {
        runtime,
        store,
        mut agent,
        mut ws,
        root,
        shadow_root,
        bash,
        mut servers,
        mut live,
        ..
    } = open(&mut args.session, args.json || args.output_format.is_some())?;
    let format = args.output_format.clone();
    let stream = format.as_deref() == Some("stream-json");
    let mut encoder = super::headless::stream::TurnEncoder::new(
        agent.session_id().as_str(),
        agent.model(),
        args.include_partial_messages,
    );
    if stream {
        let facts = super::headless::init_facts(&agent, &root, &servers);
        output::stdout_line(&super::headless::stream::init_message(&facts).to_string());
    }
    let (result, agent_session, model) = runtime.block_on(async {
        let quiet = args.json || format.is_some();
        // The encoder sees every event (the result sums usage and denials); stream-json
        // writes its messages as they come.
        let mut show = |e: &AgentEvent| {
            for m in encoder.encode(e) {
                if stream {
                    output::stdout_line(&m.to_string());
                }
            }
        };
        let (result, _) = drive_observed(
            &mut agent,
            &args.prompt,
            (!quiet).then_some(&mut live),
            Some(&mut show),
        )
        .await?;
        // Background commands finish before the review, so the change set is the whole of
        // what the run did.
        join_background(&bash, args.json).await?;
        let id = agent.session_id().clone();
        let model = agent.model().to_owned();
        agent.close().await?;
        servers.shutdown().await;
        anyhow::Ok((result, id, model))
    })?;
    if !args.json {
        super::cost::print_summary(&result.usage, &model);
    }

    // The review: the change set is pinned down (paths, kinds, hashes) before it is shown, and
    // the commit applies exactly that review.
    let review = ws.review()?;
    let set = review.changes().clone();
    let log = |payload: EventPayload| -> Result<()> {
        runtime.block_on(store.append(&agent_session, vec![Event::new(0, None, payload)]))?;
        Ok(())
    };
    log(EventPayload::WorkspaceDiff(set.event()))?;
    let mut commit = json!(null);
    let mut refused = false;
    if !set.is_empty() && !args.no_commit {
        let apply = if args.yes {
            true
        } else if std::io::stdin().is_terminal() && !args.json {
            output::stdout_line("");
            super::workspace::print_set(&set);
            for (_, text) in ws.diff(None)? {
                output::stdout_text(&crate::colour::Palette::for_stdout().diff(&text));
            }
            super::workspace::confirm(&format!("Apply these changes to {}?", root.display()))
                .is_ok()
        } else {
            false
        };
        if apply {
            match ws.commit_review(&review, &CommitOptions::default()) {
                Ok(report) => {
                    log(EventPayload::WorkspaceCommit(report.event()))?;
                    commit = serde_json::to_value(&report)?;
                }
                Err(WorkspaceError::Conflicts(conflicts)) => {
                    log(EventPayload::WorkspaceCommit(
                        agent_workspace::CommitReport::refused_event(&conflicts),
                    ))?;
                    refused = true;
                    commit = json!({"refused": conflicts});
                }
                Err(WorkspaceError::ChangedSinceReview(paths)) => {
                    output::warning(&WorkspaceError::ChangedSinceReview(paths.clone()).to_string());
                    refused = true;
                    commit = json!({"changedSinceReview": paths});
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    runtime.block_on(store.close(&agent_session))?;
    if let Some(format) = &format {
        let mut message = encoder.result(&result, &model, false);
        if let Some(obj) = message.as_object_mut() {
            obj.insert("changes".into(), serde_json::to_value(&set.changes)?);
            obj.insert("commit".into(), commit);
        }
        match format.as_str() {
            "text" => output::stdout_line(&result.final_text),
            _ => output::stdout_line(&message.to_string()),
        }
    } else if args.json {
        output::stdout_line(
            &json!({
                "sessionId": result.session_id,
                "finalText": result.final_text,
                "stopReason": result.stop_reason,
                "turns": result.turns,
                "usage": TokenUsage::from(result.usage),
                "costUsd": super::cost::cost_usd(&result.usage, &model),
                "error": result.error,
                "real": root,
                "shadow": shadow_root,
                "changes": set.changes,
                "commit": commit,
            })
            .to_string(),
        );
    } else if !set.is_empty() && commit.is_null() {
        output::stdout_line(&format!(
            "{} change(s) wait in the shadow workspace: review with `agent workspace diff --workspace {}`, apply with `agent workspace commit --workspace {}`",
            set.changes.len(),
            root.display(),
            root.display()
        ));
    } else if refused {
        output::warning(
            "the commit was refused: files changed in the real folder since import, or in the shadow since the review (nothing was applied)",
        );
    }
    Ok(run_exit(&result, refused))
}

/// The exit status of a run: 130 interrupted; 1 an error, the turn limit reached, or the
/// commit refused; 0 otherwise.
pub(crate) fn run_exit(result: &RunResult, refused: bool) -> Exit {
    match result.stop_reason {
        RunStopReason::Interrupted => Exit::Code(130),
        RunStopReason::MaxTurns => Exit::Denied,
        _ if result.is_error || refused => Exit::Denied,
        _ => Exit::Success,
    }
}

/// The async runtime of one verb.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
