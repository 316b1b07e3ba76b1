//! `agent` driven headless (`agent -p`, the Claude Agent SDK's transport): flags only, no verb.

use std::path::PathBuf;

use clap::{Args, Parser};

/// `agent` driven headless, as Claude Code's own command line (`claude -p`, and the Claude
/// Agent SDK's `--input-format stream-json`): no verb, flags only. `main` parses with this when
/// the first argument is one of the headless flags ([`SdkCli::claims`]).
#[derive(Debug, Parser)]
#[command(
    name = "agent",
    version,
    about = "agent, driven headless (the Claude Agent SDK, `agent -p`)"
)]
#[command(
    after_help = "Examples:\n  agent -p \"summarise README.md\" --output-format json\n  agent --output-format stream-json --verbose --input-format stream-json   (the Claude Agent SDK's transport)\n\nExit codes: 0 the session ended (with --input-format stream-json: stdin closed), or the\nprompt's run finished; 1 the run ended in an error or at max turns (the result says which);\n2 bad arguments, settings or provider configuration; 130 interrupted."
)]
pub struct SdkCli {
    /// Print mode: run the prompt (the positional argument, or stdin) and exit.
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// The prompt (with -p; read from stdin when absent and stdin is not a terminal).
    pub prompt: Option<String>,
    /// `text` (the final answer), `json` (one result object) or `stream-json` (one message
    /// per line as it happens).
    #[arg(long = "output-format", value_name = "FORMAT", value_parser = ["text", "json", "stream-json"])]
    pub output_format: Option<String>,
    /// `text` (the prompt) or `stream-json` (user messages and control requests on stdin, one
    /// JSON object per line: the SDK's transport; needs `--output-format stream-json`).
    #[arg(long = "input-format", value_name = "FORMAT", value_parser = ["text", "stream-json"])]
    pub input_format: Option<String>,
    /// Accepted (the SDK always passes it); stream-json output is always complete.
    #[arg(long)]
    pub verbose: bool,
    /// Replaces the agent's own instructions (the facts about where it works and the project
    /// memory stay). Empty, as the SDK passes when no system prompt is set: the agent's own.
    #[arg(long = "system-prompt", value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// As --system-prompt, read from a file.
    #[arg(long = "system-prompt-file", value_name = "FILE")]
    pub system_prompt_file: Option<PathBuf>,
    /// Text added at the end of the system prompt.
    #[arg(long = "append-system-prompt", value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// The tools offered: names separated by commas, `""` for none, `default` for all.
    #[arg(long, value_name = "LIST")]
    pub tools: Option<String>,
    /// Allow rules (comma- or space-separated, repeatable).
    #[arg(
        long = "allowedTools",
        alias = "allowed-tools",
        alias = "allow",
        value_name = "RULES"
    )]
    pub allowed_tools: Vec<String>,
    /// Deny rules (comma- or space-separated, repeatable); a rule naming a whole tool removes
    /// it from what the model is offered.
    #[arg(
        long = "disallowedTools",
        alias = "disallowed-tools",
        alias = "deny",
        value_name = "RULES"
    )]
    pub disallowed_tools: Vec<String>,
    /// The most provider calls that may end in tool calls, per prompt (default 50).
    #[arg(long = "max-turns", value_name = "N")]
    pub max_turns: Option<u32>,
    /// Stop a prompt's run once its estimated cost reaches this many US dollars (result
    /// subtype `error_max_budget_usd`).
    #[arg(long = "max-budget-usd", value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// The model (default: the settings' `model`, else the provider's default).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Ask the SDK (`stdio`) before a tool call the rules leave undecided. Without it such
    /// calls are denied, with the rule that would allow them.
    #[arg(long = "permission-prompt-tool", value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,
    /// The permission mode.
    #[arg(long = "permission-mode", value_name = "MODE", value_parser = ["default", "manual", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"])]
    pub permission_mode: Option<String>,
    /// Continue the most recent session of this folder.
    #[arg(long = "continue", short = 'c')]
    pub continue_recent: bool,
    /// Resume this session.
    #[arg(long, short = 'r', value_name = "ID")]
    pub resume: Option<String>,
    /// With --resume or --continue: continue in a fork (a new session id).
    #[arg(long = "fork-session")]
    pub fork_session: bool,
    /// The id of the new session (a UUID).
    #[arg(long = "session-id", value_name = "UUID")]
    pub session_id: Option<String>,
    /// With --resume: keep the history up to and including this message (event) id.
    #[arg(long = "resume-session-at", value_name = "UUID")]
    pub resume_session_at: Option<String>,
    /// Which standard settings files load: a comma-separated list of user, project, local,
    /// claude.
    #[arg(long = "setting-sources", value_name = "LIST")]
    pub setting_sources: Option<String>,
    /// A settings file, or settings as JSON text (repeatable; later wins).
    #[arg(long, value_name = "FILE_OR_JSON")]
    pub settings: Vec<String>,
    /// An extra working directory (repeatable).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dirs: Vec<PathBuf>,
    /// MCP servers: a file or JSON text `{"mcpServers": {...}}` (repeatable). SDK in-process
    /// servers (`"type": "sdk"`) are not supported and are skipped with a warning.
    #[arg(long = "mcp-config", value_name = "FILE_OR_JSON")]
    pub mcp_config: Vec<String>,
    /// Accepted (the TypeScript SDK passes it): `agent` always reads `initialize` before the
    /// session starts.
    #[arg(long = "await-initialize")]
    pub await_initialize: bool,
    /// Use only the --mcp-config servers, not those of the settings or `.mcp.json`.
    #[arg(long = "strict-mcp-config")]
    pub strict_mcp_config: bool,
    /// With stream-json output: also write each streamed text fragment as a `stream_event`.
    #[arg(long = "include-partial-messages")]
    pub include_partial_messages: bool,
    /// Keep the shadow workspace: the change set is not applied to the folder at the end of
    /// each prompt (review it with `agent workspace diff`).
    #[arg(long = "keep-shadow")]
    pub keep_shadow: bool,
    /// The provider (default: the settings' `provider`; see `agent run --help`).
    #[arg(long, value_name = "NAME", value_parser = ["anthropic", "openai", "openai-compatible"])]
    pub provider: Option<String>,
    /// The API's base URL.
    #[arg(long = "base-url", value_name = "URL")]
    pub base_url: Option<String>,
    #[command(flatten)]
    pub sessions_url: super::sessions::SessionsUrlArg,
    /// Accepted and not honoured (reported once on stderr): flags of Claude Code this runtime
    /// has no equivalent for.
    #[command(flatten)]
    pub unhonoured: Unhonoured,
}

/// Flags the Claude Agent SDK may pass that `agent` accepts without honouring them; each one
/// given is reported once on stderr (a rejected flag would end the SDK's session before it
/// starts).
#[derive(Debug, Default, Args)]
pub struct Unhonoured {
    #[arg(long = "fallback-model", hide = true)]
    pub fallback_model: Option<String>,
    #[arg(long, hide = true)]
    pub betas: Option<String>,
    #[arg(long = "task-budget", hide = true)]
    pub task_budget: Option<String>,
    #[arg(long = "resume-drops-turn", hide = true)]
    pub resume_drops_turn: Option<String>,
    #[arg(long = "include-hook-events", hide = true)]
    pub include_hook_events: bool,
    #[arg(long, hide = true)]
    pub thinking: Option<String>,
    #[arg(long = "max-thinking-tokens", hide = true)]
    pub max_thinking_tokens: Option<String>,
    #[arg(long = "thinking-display", hide = true)]
    pub thinking_display: Option<String>,
    #[arg(long, hide = true)]
    pub effort: Option<String>,
    #[arg(long = "json-schema", hide = true)]
    pub json_schema: Option<String>,
    #[arg(long = "plugin-dir", hide = true)]
    pub plugin_dir: Vec<String>,
    #[arg(long = "session-mirror", hide = true)]
    pub session_mirror: bool,
    #[arg(long = "replay-user-messages", hide = true)]
    pub replay_user_messages: bool,
    #[arg(long = "dangerously-skip-permissions", hide = true)]
    pub dangerously_skip_permissions: bool,
    // Passed by the TypeScript SDK (`@anthropic-ai/claude-agent-sdk`).
    #[arg(long = "allow-dangerously-skip-permissions", hide = true)]
    pub allow_dangerously_skip_permissions: bool,
    #[arg(long, hide = true)]
    pub agent: Option<String>,
    #[arg(long, hide = true)]
    pub channels: Vec<String>,
    #[arg(long, hide = true)]
    pub debug: bool,
    #[arg(long = "debug-file", hide = true)]
    pub debug_file: Option<String>,
    #[arg(long = "debug-to-stderr", hide = true)]
    pub debug_to_stderr: bool,
    #[arg(long = "plugin-dir-no-mcp", hide = true)]
    pub plugin_dir_no_mcp: Vec<String>,
    #[arg(long = "initialize-fields", hide = true)]
    pub initialize_fields: Option<String>,
    #[arg(long = "managed-settings", hide = true)]
    pub managed_settings: Option<String>,
    #[arg(long = "managed-settings-in-initialize", hide = true)]
    pub managed_settings_in_initialize: bool,
    #[arg(long = "no-session-persistence", hide = true)]
    pub no_session_persistence: bool,
    #[arg(long = "permission-prompts", hide = true)]
    pub permission_prompts: Option<String>,
    #[arg(long = "project-config-root", hide = true)]
    pub project_config_root: Option<String>,
}

impl Unhonoured {
    /// The flags given, as `--flag` names.
    pub fn given(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut note = |set: bool, name: &'static str| {
            if set {
                out.push(name);
            }
        };
        note(self.fallback_model.is_some(), "--fallback-model");
        note(self.betas.is_some(), "--betas");
        note(self.task_budget.is_some(), "--task-budget");
        note(self.resume_drops_turn.is_some(), "--resume-drops-turn");
        note(self.include_hook_events, "--include-hook-events");
        note(self.thinking.is_some(), "--thinking");
        note(self.max_thinking_tokens.is_some(), "--max-thinking-tokens");
        note(self.thinking_display.is_some(), "--thinking-display");
        note(self.effort.is_some(), "--effort");
        note(self.json_schema.is_some(), "--json-schema");
        note(!self.plugin_dir.is_empty(), "--plugin-dir");
        note(self.session_mirror, "--session-mirror");
        note(self.replay_user_messages, "--replay-user-messages");
        note(
            self.dangerously_skip_permissions,
            "--dangerously-skip-permissions",
        );
        note(
            self.allow_dangerously_skip_permissions,
            "--allow-dangerously-skip-permissions",
        );
        note(self.agent.is_some(), "--agent");
        note(!self.channels.is_empty(), "--channels");
        note(self.debug, "--debug");
        note(self.debug_file.is_some(), "--debug-file");
        note(self.debug_to_stderr, "--debug-to-stderr");
        note(!self.plugin_dir_no_mcp.is_empty(), "--plugin-dir-no-mcp");
        note(self.initialize_fields.is_some(), "--initialize-fields");
        note(self.managed_settings.is_some(), "--managed-settings");
        note(
            self.managed_settings_in_initialize,
            "--managed-settings-in-initialize",
        );
        note(self.no_session_persistence, "--no-session-persistence");
        note(self.permission_prompts.is_some(), "--permission-prompts");
        note(self.project_config_root.is_some(), "--project-config-root");
        out
    }
}

impl SdkCli {
    /// Whether `agent ARGS…` is a headless invocation: its first argument is one of the flags
    /// only the headless mode has (the SDK always starts with `--output-format`; people with
    /// `-p`).
    pub fn claims(args: &[std::ffi::OsString]) -> bool {
        args.get(1).is_some_and(|a| {
            let a = a.to_string_lossy();
            let flag = a.split('=').next().unwrap_or_default();
            matches!(
                flag,
                "-p" | "--print" | "--output-format" | "--input-format"
            )
        })
    }
}
