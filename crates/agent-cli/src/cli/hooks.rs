//! `agent hooks`: run or list the configured hooks of an event.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::settings::SettingsArgs;

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Run the hooks configured for one event and print the merged outcome as one JSON object:
    /// {"decision","reason","updatedInput","additionalContext","systemMessage","continue",
    /// "stopReason","hooks":[...]}. Exit 0 whatever the hooks decided; 2 on bad input.
    Run(HooksRunArgs),
    /// Show, for each event, which hooks would run, from which file, and why some would not.
    List(HooksListArgs),
}

#[derive(Debug, Args)]
pub struct HookSourcesArgs {
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// A plugin directory whose hooks/hooks.json is loaded too (repeatable).
    #[arg(long = "plugin", value_name = "DIR")]
    pub plugins: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HooksRunArgs {
    #[command(flatten)]
    pub sources: HookSourcesArgs,
    /// The event, e.g. PreToolUse, UserPromptSubmit, Stop (camelCase accepted).
    #[arg(long, value_name = "NAME")]
    pub event: String,
    /// The hook input as a JSON object, e.g. '{"tool_name":"Bash","tool_input":{"command":"ls"}}'.
    /// `session_id`, `cwd` and `hook_event_name` are filled in when missing.
    #[arg(long, value_name = "JSON")]
    pub input: String,
}

#[derive(Debug, Args)]
pub struct HooksListArgs {
    #[command(flatten)]
    pub sources: HookSourcesArgs,
    /// Only this event.
    #[arg(long, value_name = "NAME")]
    pub event: Option<String>,
    /// Print a JSON array instead of text.
    #[arg(long)]
    pub json: bool,
}
