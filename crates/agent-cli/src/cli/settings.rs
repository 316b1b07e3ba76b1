//! Where settings come from, as every verb that reads them takes it.

use std::path::PathBuf;

use clap::Args;

/// Where settings come from; shared by every verb that reads them.
#[derive(Clone, Debug, Default, Args)]
pub struct SettingsArgs {
    /// A settings file, above every other source (repeat the flag for more: `--settings a
    /// --settings b`; later files win). Takes exactly one value, so it never swallows a
    /// positional argument.
    #[arg(long = "settings", value_name = "FILE")]
    pub settings: Vec<PathBuf>,
    /// The current directory of the session (default: the process's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Where project and local settings are read, and CLAUDE_PROJECT_DIR for hooks (default:
    /// --cwd).
    #[arg(long = "project-dir", value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
    /// Treat the project as trusted for this run (its allow rules and hooks apply).
    #[arg(long)]
    pub trust: bool,
    /// Which standard files load: a comma-separated list of user, project, local, claude
    /// (default: all four, or $AGENT_SETTING_SOURCES when set; leave `claude` out to ignore
    /// Claude Code's ~/.claude/settings.json, .claude/settings.json and
    /// .claude/settings.local.json, and CLAUDE.md files).
    #[arg(long = "setting-sources", value_name = "LIST")]
    pub setting_sources: Option<String>,
}
