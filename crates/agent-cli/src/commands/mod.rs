//! One module per verb.

pub mod approve;
pub mod bundles;
pub mod chat;
mod cost;
pub mod demo;
pub mod drive;
pub mod exec;
pub mod headless;
pub mod hooks;
pub mod keys;
pub mod live;
mod migrate;
pub mod open;
pub mod permissions;
pub mod provider;
pub mod run;
pub mod sandbox;
mod session_backend;
pub mod sessions;
pub mod slash;
pub mod system_prompt;
pub mod tool;
pub mod toolbox;
pub mod transcript;
pub mod trust;
pub mod workspace;

use std::path::PathBuf;
use std::sync::OnceLock;

use agent_core::home::{AgentHome, NoAgentHome};
use agent_core::settings::{SettingSources, Settings, SettingsLoader};
use anyhow::{Context, Result};

use crate::cli::CompletionsArgs;
use crate::cli::settings::SettingsArgs;
use crate::exit::Exit;
use crate::output;

/// Settings loaded from the standard sources and `--settings` files, with the directories
/// they were resolved against.
pub struct LoadedSettings {
    pub settings: Settings,
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub project_dir: PathBuf,
    /// The sources the settings were read from (`--setting-sources`).
    pub sources: SettingSources,
}

/// Loads settings as every verb does: user settings from `$AGENT_HOME`, project and local
/// settings from `--project-dir` (default `--cwd`, default the process's directory), then each
/// `--settings` file; warnings go to stderr.
pub fn load_settings(args: &SettingsArgs) -> Result<LoadedSettings> {
    let home = home_dir()?;
    let cwd = match &args.cwd {
        Some(c) => absolute(c.clone())?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let project_dir = match &args.project_dir {
        Some(p) => absolute(p.clone())?,
        None => cwd.clone(),
    };
    let sources = setting_sources(args.setting_sources.as_deref())?;
    let mut loader = SettingsLoader::new(&home, &project_dir, &cwd)
        .agent_home(agent_home()?)
        .sources(sources);
    if args.trust {
        loader = loader.trusted(true);
    }
    for file in &args.settings {
        loader = loader.settings_file(absolute(file.clone())?);
    }
    let settings = loader.load()?;
    for w in &settings.warnings {
        output::warning(w);
    }
    Ok(LoadedSettings {
        settings,
        home,
        cwd,
        project_dir,
        sources,
    })
}

/// The environment variable that sets the default of `--setting-sources`.
pub const SETTING_SOURCES_ENV: &str = "AGENT_SETTING_SOURCES";

/// The sources settings load from: `flag` (`--setting-sources`), else
/// `$AGENT_SETTING_SOURCES`, else all four (user, project, local, claude).
fn setting_sources(flag: Option<&str>) -> Result<SettingSources> {
    let (text, from) = match flag {
        Some(f) => (f.to_owned(), "--setting-sources"),
        None => match std::env::var(SETTING_SOURCES_ENV) {
            Ok(v) => (v, SETTING_SOURCES_ENV),
            Err(_) => return Ok(SettingSources::default()),
        },
    };
    text.parse()
        .map_err(|e: String| anyhow::anyhow!("{from}: {e}"))
}

/// `--workspace DIR` as the session's directory: DIR must be a directory; it becomes `--cwd`.
pub fn workspace_as_cwd(settings: &mut SettingsArgs, workspace: Option<PathBuf>) -> Result<()> {
    if let Some(w) = workspace {
        let w = absolute(w)?;
        if !w.is_dir() {
            anyhow::bail!("--workspace {} is not a directory", w.display());
        }
        settings.cwd = Some(w);
    }
    Ok(())
}

/// The hook registry of `config`, as every verb that runs hooks builds it: project directory
/// and home for the hooks' environment, output spilled under `$AGENT_HOME/hook-output`;
/// warnings go to stderr.
pub fn hook_registry(
    config: &agent_core::hooks::HooksConfig,
    project_dir: &std::path::Path,
    home: &std::path::Path,
) -> Result<agent_core::hooks::HookRegistry> {
    hook_registry_with(config, project_dir, home, None)
}

/// [`hook_registry`], with `prompt` and `agent` hooks run by `models` (the agent loop's
/// provider).
pub fn hook_registry_with(
    config: &agent_core::hooks::HooksConfig,
    project_dir: &std::path::Path,
    home: &std::path::Path,
    models: Option<std::sync::Arc<dyn agent_core::hooks::HookExtension>>,
) -> Result<agent_core::hooks::HookRegistry> {
    let mut registry = agent_core::hooks::HookRegistry::new();
    if let Some(m) = models {
        registry.set_extension("prompt", std::sync::Arc::clone(&m));
        registry.set_extension("agent", m);
    }
    registry.set_project_dir(project_dir);
    registry.set_home(home);
    registry.set_output_caps(agent_core::hooks::HookOutputCaps {
        dir: agent_home()?.hook_output(),
        ..agent_core::hooks::HookOutputCaps::default()
    });
    registry.load(config)?;
    for w in registry.warnings() {
        output::warning(w);
    }
    Ok(registry)
}

/// The home directory (`$HOME`).
pub fn home_dir() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("$HOME is not set; set it to your home directory")
}

/// `$AGENT_HOME`, or `~/.agent`: read from the environment once per process, then passed to
/// the libraries, which never read it themselves.
pub fn agent_home() -> Result<&'static AgentHome> {
    static HOME: OnceLock<Result<AgentHome, NoAgentHome>> = OnceLock::new();
    HOME.get_or_init(AgentHome::from_env)
        .as_ref()
        .map_err(|e| anyhow::Error::new(e.clone()))
}

/// Makes `p` absolute against the process's current directory, without touching the disk
/// (`.` components are dropped; `..` is kept, since a symlink may make it mean anything).
pub fn absolute(p: PathBuf) -> Result<PathBuf> {
    let p = if p.is_absolute() {
        p
    } else {
        std::env::current_dir()
            .context("cannot read the current directory")?
            .join(p)
    };
    Ok(p.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect())
}

/// `agent completions SHELL`: the completion script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<Exit> {
    use clap::CommandFactory as _;
    use clap_complete::Shell;
    let shell: Shell = args
        .shell
        .parse()
        .map_err(|e| anyhow::anyhow!("unknown shell {:?}: {e}", args.shell))?;
    let mut command = crate::cli::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "agent", &mut out);
    output::stdout_text(&String::from_utf8_lossy(&out));
    Ok(Exit::Success)
}
