//! Opening a session on a folder, as `agent run`, `agent chat` and the headless mode share it:
//! the settings, the provider, the shadow workspace, the tools and the permission engine, the
//! MCP servers and the agent itself.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::events::{Event, EventPayload};
use agent_core::hooks::{HookRegistry, HooksConfig};
use agent_core::permissions::{
    PermissionEngine, PermissionEngineBuilder, PermissionMode, PermissionPolicy, RuleList,
};
use agent_core::settings::Settings;
use agent_core::tools::Tool;
use agent_core::view::PathView;
use agent_loop::{Agent, AgentBuilder, AgentOptions, ModelHooks};
use agent_store::recovery::ResumeOptions;
use agent_store::{SessionBackend, SessionId};
use agent_tools::{Bash, ToolState, WebFetch, builtin_tools};
use agent_workspace::{ImportOptions, Workspace, WorkspaceError};
use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::live::{Live, TerminalPrompter};
use super::provider::{own_settings, provider};
use super::transcript::Paths;
use super::{LoadedSettings, absolute, hook_registry_with, load_settings};
use crate::cli::run::SessionOptions;
use crate::output;

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
    super::workspace_as_cwd(&mut args.settings, args.workspace.take())?;
    let loaded = load_settings(&args.settings)?;
    let folder = std::fs::canonicalize(&loaded.cwd)
        .with_context(|| format!("cannot open the folder {}", loaded.cwd.display()))?;
    let (provider, model) = provider(args, &loaded.settings, own_settings(&loaded)?)?;
    let (mode, resuming) = session_mode(args, &loaded.settings)?;
    let state_root = match args.state_dir.clone() {
        Some(dir) => absolute(dir)?,
        None => super::agent_home()?.workspaces(),
    };
    let shadow = Shadow::of(&folder, &state_root)?;

    let runtime = runtime()?;
    let choice = super::session_backend::Choice::of(None, &args.sessions_url, Some(&loaded))?;
    let store = runtime.block_on(choice.open())?.backend();
    let models = ModelHooks::new(
        Arc::clone(&provider),
        model.clone(),
        Some(Arc::clone(&store)),
    );
    let view = PathView::new(&shadow.root, &shadow.root_shadow);
    let hooks = hooks(&loaded, Arc::new(models), &view, with.hooks)?;
    let ((tools, policies), bash) = tools_and_bash(&loaded.settings, &loaded.home, Some(&view))?;
    let permissions = permissions(args, &loaded, &shadow, policies)?;
    let tools = only_tools(tools, with.only_tools.as_deref());
    let options = agent_options(args, with.session_id.clone(), model, &view, &folder)?;
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
        &shadow.root,
        &shadow.ws,
        shadow.imported.is_some(),
        &bash,
    )?;
    let mut builder = Agent::builder(Arc::clone(&provider), Arc::clone(&store), &shadow.start)
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
    } else if std::io::stdin().is_terminal() && !with.quiet {
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
    mcp.in_workspace(&view, &shadow.start);
    let (agent, servers) = runtime.block_on(start(builder, &mcp, &store, shadow.imported))?;
    Ok(Opened {
        runtime,
        store,
        agent,
        ws: shadow.ws,
        root: shadow.root,
        folder,
        shadow_root: shadow.root_shadow,
        bash,
        servers,
        live,
    })
}

/// The permission mode the options ask for (`None`: a resumed session keeps its own), and
/// whether they resume a session.
fn session_mode(
    args: &SessionOptions,
    settings: &Settings,
) -> Result<(Option<PermissionMode>, bool)> {
    let requested = args
        .mode
        .as_deref()
        .map(str::parse::<PermissionMode>)
        .transpose()?;
    let resuming = args.session.is_some() || args.continue_recent || args.fork.is_some();
    let mode = match requested {
        Some(m) => Some(settings.mode(Some(m))?),
        None if resuming => None,
        None => Some(settings.mode(None)?),
    };
    Ok((mode, resuming))
}

/// The shadow workspace a session works in, and where in it the session starts.
struct Shadow {
    /// The folder imported (the repository's root).
    root: PathBuf,
    ws: Workspace,
    /// The import, when the shadow was made just now (logged once the session exists).
    imported: Option<Event>,
    /// The shadow of `root`.
    root_shadow: PathBuf,
    /// The shadow of the folder the session was started in.
    start: PathBuf,
}

impl Shadow {
    /// The shadow of the repository `folder` belongs to (imported now, or reused and
    /// refreshed); the agent starts where it was run.
    fn of(folder: &Path, state_root: &Path) -> Result<Shadow> {
        let (root, inside) = agent_workspace::import_root(folder);
        let (mut ws, imported) = workspace(&root, state_root)?;
        if imported.is_none() {
            fresh(&mut ws)?;
        }
        let root_shadow = ws.shadow().to_path_buf();
        // (`join("")` would add a trailing slash, which hooks would see in `cwd`.)
        let start = if inside.as_os_str().is_empty() {
            root_shadow.clone()
        } else {
            root_shadow.join(&inside)
        };
        if !start.is_dir() {
            bail!(
                "{} is not in the shadow workspace of {} (an ignored folder?); run from a folder the workspace holds",
                folder.display(),
                root.display()
            );
        }
        Ok(Shadow {
            root,
            ws,
            imported,
            root_shadow,
            start,
        })
    }
}

/// The session's hooks: the configured ones, the model's (prompt and agent hooks), and what
/// the host registers (`more`).
fn hooks(
    loaded: &LoadedSettings,
    models: Arc<dyn agent_core::hooks::HookExtension>,
    view: &PathView,
    more: Option<HookRegistrar<'_>>,
) -> Result<Arc<HookRegistry>> {
    let config = HooksConfig::from_settings(&loaded.settings)?;
    let mut registry =
        hook_registry_with(&config, &loaded.project_dir, &loaded.home, Some(models))?;
    if let Some(register) = more {
        register(&mut registry, view)?;
    }
    Ok(Arc::new(registry))
}

/// The permission engine of a session in `shadow`: the settings' rules (which name the real
/// folder and hold for its shadow copy too), the tools' policies, the extra directories and
/// the rules of the command line (scope `session`).
fn permissions(
    args: &SessionOptions,
    loaded: &LoadedSettings,
    shadow: &Shadow,
    policies: Vec<Box<dyn PermissionPolicy>>,
) -> Result<PermissionEngineBuilder> {
    let mut permissions = PermissionEngine::builder(&shadow.start, &loaded.home)
        .settings(&loaded.settings)
        .shadow_of(&shadow.root, &shadow.root_shadow);
    if shadow.start != shadow.root_shadow {
        // Started in a subfolder: the whole repository's shadow is the workspace.
        permissions = permissions.add_dir(&shadow.root_shadow);
    }
    for p in policies {
        permissions = permissions.policy(p);
    }
    for d in &args.add_dirs {
        permissions = permissions.add_dir(absolute(d.clone())?);
    }
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
    Ok(permissions)
}

/// `tools` cut down to the ones named in `only` (`--tools a,b`), with a warning for each name
/// that is not a tool here; all of them when `None`.
fn only_tools(mut tools: Vec<Arc<dyn Tool>>, only: Option<&[String]>) -> Vec<Arc<dyn Tool>> {
    let Some(only) = only else {
        return tools;
    };
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
    tools
}

/// The agent's options: the model and its turn limit, the session to start or resume, the
/// real-folder view and where transcripts go.
fn agent_options(
    args: &SessionOptions,
    session_id: Option<SessionId>,
    model: String,
    view: &PathView,
    folder: &Path,
) -> Result<AgentOptions> {
    let mut options = AgentOptions::new(model).max_turns(args.max_turns);
    options.session_id = session_id;
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
    Ok(options)
}

/// Starts the MCP servers of `mcp` (each failure a warning), then the agent with their tools;
/// logs the workspace's import (`imported`) in the new session.
async fn start(
    mut builder: AgentBuilder,
    mcp: &agent_mcp::McpConfig,
    store: &Arc<dyn SessionBackend>,
    imported: Option<Event>,
) -> Result<(Agent, agent_mcp::McpServers)> {
    let (options, warnings) = agent_mcp::McpOptions::from_env();
    if !mcp.is_empty() {
        for w in warnings {
            output::warning(&w);
        }
    }
    let servers = agent_mcp::McpServers::start(mcp, options).await;
    for f in servers.failures() {
        output::warning(&f.to_string());
    }
    builder = builder.tools_extend(servers.tools());
    let agent = builder.start().await?;
    if let Some(e) = imported {
        store.append(agent.session_id(), vec![e]).await?;
    }
    Ok((agent, servers))
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
/// The async runtime of one verb.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
