//! The command line, defined once with clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// A secure, embeddable AI-agent runtime.
#[derive(Debug, Parser)]
#[command(name = "agent", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 success; 2 bad arguments, input or settings (one line on stderr)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Permission rules: check what the engine decides for one tool call.
    #[command(subcommand)]
    Permissions(PermissionsCommand),
    /// Trust a project folder, so its settings may grant (allow rules, extra directories, mode).
    Trust(TrustArgs),
}

#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// Decide one tool call and print {"decision","step","rule","reason",...} as JSON.
    ///
    /// User settings come from $AGENT_HOME (default ~/.agent), project and local settings from
    /// the project directory (default: the current directory). With no prompter, "ask" is
    /// printed as is: the caller decides. Exit 0 whatever the decision; 2 on bad input.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A settings file, above every other source (repeatable; later files win).
    #[arg(long = "settings", value_name = "FILE")]
    pub settings: Vec<PathBuf>,
    /// The permission mode (default: the settings' defaultMode, else `default`).
    #[arg(long, value_name = "MODE", value_parser = ["default", "manual", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"])]
    pub mode: Option<String>,
    /// The current directory of the session (default: the process's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Where project and local settings are read (default: --cwd).
    #[arg(long = "project-dir", value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
    /// Treat the project as trusted for this check (its allow rules apply).
    #[arg(long)]
    pub trust: bool,
    /// Which standard files load: a comma-separated list of user, project, local, claude.
    #[arg(
        long = "setting-sources",
        value_name = "LIST",
        default_value = "user,project,local"
    )]
    pub setting_sources: String,
    /// An extra working directory (repeatable).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dirs: Vec<PathBuf>,
    /// The tool name, e.g. Bash, Read, Edit, WebFetch, mcp__server__tool.
    #[arg(long, value_name = "NAME")]
    pub tool: String,
    /// The tool input as a JSON object, e.g. '{"command":"git status"}'.
    #[arg(long, value_name = "JSON")]
    pub input: String,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The folder to trust (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Remove the folder from the trust store instead.
    #[arg(long, conflicts_with = "list")]
    pub revoke: bool,
    /// List trusted folders as JSON.
    #[arg(long)]
    pub list: bool,
}
