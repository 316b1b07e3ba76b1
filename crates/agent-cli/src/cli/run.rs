//! `agent run`, `agent chat` and `agent demo`: the verbs that run the agent, and the session
//! options run and chat share.

use std::path::PathBuf;

use clap::Args;

use super::sessions::SessionsUrlArg;
use super::settings::SettingsArgs;

/// `agent run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt.
    pub prompt: String,
    #[command(flatten)]
    pub session: SessionOptions,
    /// Apply the change set to the real folder at the end without asking.
    #[arg(long, conflicts_with = "no_commit")]
    pub yes: bool,
    /// Never apply the change set (review it later with `agent workspace diff`).
    #[arg(long = "no-commit")]
    pub no_commit: bool,
    /// Print one JSON object at the end (session, result, change set) instead of the live
    /// transcript.
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// Headless output instead of the live transcript: `text` (the final answer only),
    /// `json` (one result object, as Claude Code's `-p --output-format json`) or `stream-json`
    /// (one JSON message per line as it happens: init, assistant, user tool results, result).
    #[arg(long = "output-format", value_name = "FORMAT", value_parser = ["text", "json", "stream-json"])]
    pub output_format: Option<String>,
    /// With `--output-format stream-json`: also write each streamed text fragment as a
    /// `stream_event` line.
    #[arg(long = "include-partial-messages")]
    pub include_partial_messages: bool,
    /// Accepted for Claude Code compatibility (`claude -p --verbose`); stream-json output is
    /// always complete.
    #[arg(long, hide = true)]
    pub verbose: bool,
}

/// `agent chat` (and `agent` alone on a terminal): the interactive session.
#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub session: SessionOptions,
}

/// What `agent run` and `agent chat` share: the provider, the model, the mode, the folder and
/// which session to resume.
#[derive(Clone, Debug, Args)]
pub struct SessionOptions {
    /// The provider: anthropic, openai or openai-compatible (default: the settings' `provider`,
    /// else anthropic when ANTHROPIC_API_KEY is set, else openai when OPENAI_API_KEY is set).
    #[arg(long, value_name = "NAME", value_parser = ["anthropic", "openai", "openai-compatible"])]
    pub provider: Option<String>,
    /// The model (default: the settings' `model`, else the provider's default model).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The API's base URL (an OpenAI-compatible server such as http://localhost:11434/v1).
    #[arg(long = "base-url", value_name = "URL")]
    pub base_url: Option<String>,
    /// The permission mode (default: the settings' defaultMode, else `default`; a resumed
    /// session keeps its own unless it was plan or bypassPermissions).
    #[arg(long, value_name = "MODE", value_parser = ["default", "manual", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"])]
    pub mode: Option<String>,
    #[command(flatten)]
    pub settings: SettingsArgs,
    #[command(flatten)]
    pub sessions_url: SessionsUrlArg,
    /// Resume this session.
    #[arg(long, value_name = "ID", conflicts_with_all = ["continue_recent", "fork"])]
    pub session: Option<String>,
    /// Resume the most recent session of the workspace.
    #[arg(long = "continue", conflicts_with = "fork")]
    pub continue_recent: bool,
    /// Fork this session and run in the copy.
    #[arg(long, value_name = "ID")]
    pub fork: Option<String>,
    /// With --fork (or --session / --continue): keep the history up to and including this
    /// event id (always forks).
    #[arg(long = "resume-at", value_name = "UUID")]
    pub resume_at: Option<String>,
    /// The most provider calls that may end in tool calls, per prompt (default 50).
    #[arg(long = "max-turns", value_name = "N", default_value_t = 50)]
    pub max_turns: u32,
    /// The real folder to work on (default: --cwd, else the current directory). The agent
    /// works in its shadow copy.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Where workspace state lives (default: $AGENT_HOME/workspaces).
    #[arg(long = "state-dir", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// An extra working directory (repeatable).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dirs: Vec<PathBuf>,
    /// An allow rule for this session, e.g. `Bash(npm test *)` or `Edit` (repeatable; a value
    /// may also list several, separated by commas or spaces outside parentheses). Claude
    /// Code's `--allowedTools` is accepted as an alias.
    #[arg(
        long = "allow",
        visible_alias = "allowedTools",
        alias = "allowed-tools",
        value_name = "RULE"
    )]
    pub allow: Vec<String>,
    /// A deny rule for this session, e.g. `Bash(curl *)` or `WebFetch` (repeatable, lists as
    /// for --allow). Claude Code's `--disallowedTools` is accepted as an alias.
    #[arg(
        long = "deny",
        visible_alias = "disallowedTools",
        alias = "disallowed-tools",
        value_name = "RULE"
    )]
    pub deny: Vec<String>,
    /// Instructions that replace the agent's own (the facts about where it works, the project
    /// memory and the tools stay). An empty value keeps the agent's own instructions.
    #[arg(long = "system-prompt", value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Text added at the end of the system prompt.
    #[arg(long = "append-system-prompt", value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
}

/// `agent demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to create the demo project (must be absent or empty; default: a new folder under
    /// $AGENT_HOME/demo).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print one JSON object at the end (session, result, events, change set) instead of the
    /// live transcript.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sessions_url: SessionsUrlArg,
}
