//! `agent permissions` and `agent trust`: what the permission engine decides, and which
//! project folders may grant.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::settings::SettingsArgs;

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
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// The permission mode (default: the settings' defaultMode, else `default`).
    #[arg(long, value_name = "MODE", value_parser = ["default", "manual", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"])]
    pub mode: Option<String>,
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
