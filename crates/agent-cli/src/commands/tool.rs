//! `agent tool NAME --input JSON`: one built-in tool through the full gate.

use std::sync::Arc;

use agent_core::hooks::{HookContext, HooksConfig};
use agent_core::permissions::{PermissionEngine, PermissionMode};
use agent_tools::{BUILTIN_NAMES, ToolState, builtin_tools, executor::ToolExecutor};
use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{absolute, agent_home, hook_registry, load_settings};
use crate::cli::tool::ToolArgs;
use crate::exit::Exit;
use crate::output;

pub fn run(mut args: ToolArgs) -> Result<Exit> {
    if !BUILTIN_NAMES.contains(&args.name.as_str())
        && !matches!(args.name.as_str(), "Bash" | "WebFetch")
    {
        bail!(
            "no built-in tool `{}`; the tools are {}, Bash, WebFetch",
            args.name,
            BUILTIN_NAMES.join(", ")
        );
    }
    let input: Value = serde_json::from_str(&args.input).with_context(|| {
        format!(
            "--input is not valid JSON ({:?}); pass one JSON object such as '{{\"file_path\":\"README.md\"}}'",
            args.input
        )
    })?;
    if !input.is_object() {
        bail!("--input must be a JSON object, got {input}");
    }
    super::workspace_as_cwd(&mut args.settings, args.workspace.take())?;
    let loaded = load_settings(&args.settings)?;
    let cwd = std::fs::canonicalize(&loaded.cwd)
        .with_context(|| format!("cannot open the workspace {}", loaded.cwd.display()))?;
    let requested = args
        .mode
        .as_deref()
        .map(str::parse::<PermissionMode>)
        .transpose()?;
    let mode = loaded.settings.mode(requested)?;
    let mut builder = PermissionEngine::builder(&cwd, &loaded.home)
        .settings(&loaded.settings)
        .mode(mode);
    for d in args.add_dirs {
        builder = builder.add_dir(absolute(d)?);
    }
    let mut bash = None;
    if args.name == "Bash" {
        let tool = Arc::new(bash_tool(&loaded.settings, &loaded.home, None)?);
        builder = builder.policy(Box::new(tool.host_policy()));
        bash = Some(tool);
    }
    let engine = builder.build()?;
    let config = HooksConfig::from_settings(&loaded.settings)?;
    let registry = hook_registry(&config, &loaded.project_dir, &loaded.home)?;
    let (session, state_file) = match &args.session {
        Some(name) => {
            if name.is_empty()
                || name.len() > 64
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                bail!(
                    "--session {name:?} is not a valid name; use 1-64 letters, digits, `-` or `_`"
                );
            }
            (
                name.clone(),
                Some(agent_home()?.tool_state().join(format!("{name}.json"))),
            )
        }
        None => (format!("tool-{}", uuid::Uuid::now_v7()), None),
    };
    let state = match &state_file {
        Some(f) => ToolState::load(f).map_err(anyhow::Error::msg)?,
        None => ToolState::new(),
    };
    let mut tools = builtin_tools(&state);
    if let Some(tool) = &bash {
        tools.push(Arc::clone(tool) as Arc<dyn agent_core::tools::Tool>);
    }
    if args.name == "WebFetch" {
        let sandbox = agent_sandbox::settings::SandboxSettings::from_settings(
            &loaded.settings,
            &loaded.home,
        )?;
        tools.push(Arc::new(agent_tools::WebFetch::new(&sandbox.network)));
    }
    let executor = ToolExecutor::new(
        tools,
        engine,
        Arc::new(registry),
        HookContext::new(session, &cwd),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let tool_use_id = format!("toolu_{}", uuid::Uuid::new_v4().simple());
    let execution = runtime.block_on(executor.execute(&args.name, input, &tool_use_id));
    // This process owns any background command it started: print the call's result at once,
    // then stay until the command has written its result file.
    output::stdout_line(&execution.to_json().to_string());
    if let Some(b) = &bash {
        b.wait_background();
    }
    if let Some(f) = &state_file {
        state.save(f).map_err(anyhow::Error::msg)?;
    }
    Ok(if execution.succeeded() {
        Exit::Success
    } else {
        Exit::Denied
    })
}

/// The Bash tool as the settings configure it: `"bash": {"backend": "auto" | "wasi" | "native"}`
/// (the last settings file that says wins; an untrusted project may only say `"wasi"`).
/// `auto`, the default, routes each script: to the WASI shell when a bundle is installed in
/// `$AGENT_HOME/bundles` and every program the script runs is a bundle command or a builtin,
/// else to the host's bash inside the OS sandbox (bwrap on Linux, sandbox-exec on macOS), which
/// is on unless the settings turn it off. `wasi` runs only what the WASI shell can; `native`
/// always uses the host's bash. Where no OS sandbox can run, a host command asks every time
/// (the returned tool's [`agent_tools::Bash::host_policy`] must be installed in the
/// permission engine), unless the user's own settings say `sandbox.failIfUnavailable: false`.
pub(crate) fn bash_tool(
    settings: &agent_core::settings::Settings,
    home: &std::path::Path,
    view: Option<&agent_core::view::PathView>,
) -> Result<agent_tools::Bash> {
    use agent_sandbox::outer::backend_named;
    use agent_sandbox::settings::SandboxSettings;
    use agent_tools::{
        Bash, BashBackend, Choice, NativeBackend, RoutedBackend, Unsandboxed, WasiBackend,
    };

    let mut choice = Choice::Auto;
    for file in &settings.files {
        let Some(b) = file.value.get("bash").and_then(|b| b.get("backend")) else {
            continue;
        };
        choice = match b.as_str() {
            Some("auto") => Choice::Auto,
            Some("native") => Choice::HostOnly,
            Some("wasi") => Choice::WasiOnly,
            _ => bail!(
                "{}: bash.backend is {b}; use \"auto\", \"wasi\" or \"native\"",
                file.path.display()
            ),
        };
    }
    let mut sandbox = SandboxSettings::from_settings(settings, home)?;
    if let Some(v) = view {
        // The project's path lists name the real folder; they hold for its shadow copy too.
        sandbox = sandbox.shadow_of(v);
    }
    let toolbox = if choice == Choice::HostOnly {
        None
    } else {
        match super::toolbox::open_toolbox(None, &[], agent_wasi::Limits::default()) {
            Ok(t) => Some(t),
            Err(e) if choice == Choice::WasiOnly => {
                return Err(e.context("bash.backend is \"wasi\""));
            }
            Err(_) => None,
        }
    };
    let wasi = toolbox.map(|toolbox| {
        // The `fetch` command reaches the network only for the domains the settings allow
        // (`sandbox.network.allowedDomains`, minus `deniedDomains`), never a private address;
        // with no list, Bash has no network (WebFetch, under its permission rules, does).
        let toolbox = match wasi_network(&sandbox.network) {
            Some(grant) => toolbox.with_network(grant),
            None => toolbox,
        };
        WasiBackend::new(Arc::new(toolbox))
    });
    let outer_name = if settings.os_sandbox_off().is_some() {
        "none"
    } else if cfg!(target_os = "macos") {
        "sandbox-exec"
    } else {
        "bwrap"
    };
    let outer = backend_named(outer_name).map_err(anyhow::Error::msg)?;
    // `failIfUnavailable: false` comes only from the user's own files (the trust table drops it
    // from project files): then an unsandboxed host command runs without asking.
    let unsandboxed = if sandbox.fails_if_unavailable() {
        Unsandboxed::AfterApproval
    } else {
        Unsandboxed::Allowed
    };
    let domains_listed = sandbox
        .network
        .allowed_domains
        .as_ref()
        .is_some_and(|d| !d.is_empty());
    let host = NativeBackend::new(outer, crate::profiles::embedded()?, unsandboxed)
        .with_domains_listed(domains_listed);
    let runner: Arc<dyn BashBackend> = Arc::new(RoutedBackend::new(wasi, host, choice));
    Ok(Bash::new(runner, sandbox))
}

/// The network grant of the `wasi` Bash backend: the settings' `allowedDomains` (with
/// `deniedDomains` winning) through agent-sandbox's SSRF-safe fetch, or `None` (no network) when
/// no domain is listed, as Claude Code's sandbox ("empty means no network").
fn wasi_network(
    network: &agent_sandbox::settings::NetworkSettings,
) -> Option<agent_wasi::NetGrant> {
    let listed = network
        .allowed_domains
        .as_ref()
        .is_some_and(|d| !d.is_empty());
    listed.then(|| agent_wasi::NetGrant::new(agent_sandbox::urls::UrlPolicy::new(network)))
}
