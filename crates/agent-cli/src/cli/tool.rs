//! `agent tool`: one built-in tool through the full gate.

use std::path::PathBuf;

use clap::Args;

use super::settings::SettingsArgs;

/// `agent tool`.
#[derive(Debug, Args)]
pub struct ToolArgs {
    /// The tool: Read, Write, Edit, MultiEdit, Glob, Grep, TodoWrite, Task, Bash, WebFetch.
    pub name: String,
    /// The tool input as a JSON object, e.g. '{"file_path":"README.md"}'.
    #[arg(long, value_name = "JSON")]
    pub input: String,
    /// The directory the tool works in (its workspace root; default: --cwd, else the current
    /// directory). Pass a shadow workspace to keep the real folder untouched.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// The permission mode (default: the settings' defaultMode, else `default`).
    #[arg(long, value_name = "MODE", value_parser = ["default", "manual", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"])]
    pub mode: Option<String>,
    /// An extra working directory (repeatable).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dirs: Vec<PathBuf>,
    /// A session name shared by several `agent tool` runs (letters, digits, `-`, `_`): what
    /// the tools remember (files read, for Edit and Write; the todo list) is kept in
    /// $AGENT_HOME/tool-state/NAME.json. Without it each run is a session of its own.
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
}
