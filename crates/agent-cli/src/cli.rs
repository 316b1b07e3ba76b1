//! The command line, defined once with clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::colour::ColorWhen;

/// A secure, embeddable AI-agent runtime.
#[derive(Debug, Parser)]
#[command(name = "agent", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 success; 2 bad arguments, input or settings (one line on stderr)."
)]
pub struct Cli {
    /// When to colour: auto (on a terminal; NO_COLOR turns it off, CLICOLOR_FORCE on), always,
    /// never. Every verb takes it.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// The verb; none on a terminal starts the interactive session (`agent chat`).
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Permission rules: check what the engine decides for one tool call.
    #[command(subcommand)]
    Permissions(PermissionsCommand),
    /// Trust a project folder, so its settings may grant (allow rules, extra directories, mode).
    Trust(TrustArgs),
    /// Hooks: run the configured hooks of one event, or list what would run.
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// The sandbox: check a path, a command or a URL against the `sandbox` settings; print the
    /// OS sandbox's policy; run a command inside it.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Sessions: list, show, fork, rename, tag, delete, export, import, append, reindex.
    Sessions(SessionsArgs),
    /// The shadow workspace: import a folder, review its change set, commit it, discard it.
    Workspace(WorkspaceArgs),
    /// Run one built-in tool through the full gate (hooks, permissions, sandbox) and print the
    /// result as JSON. Exit 0 when the tool ran and succeeded, 1 when the gate refused it or
    /// the tool reported an error, 2 on bad input.
    #[command(
        after_help = "Example:\n  agent tool Read --input '{\"file_path\":\"src/lib.rs\"}' --workspace ~/src/app\n  agent tool Grep --input '{\"pattern\":\"fn main\",\"output_mode\":\"content\"}' --settings s.json"
    )]
    Tool(ToolArgs),
    /// Run the agent on a prompt: the model works in a shadow copy of the folder, every tool
    /// call goes through hooks, permissions and the sandbox, and the change set is reviewed at
    /// the end. Needs an API key (ANTHROPIC_API_KEY or OPENAI_API_KEY); `agent demo` runs
    /// offline.
    #[command(
        after_help = "Examples:\n  agent run \"fix the failing test in src/calc.py\" --workspace ~/src/app\n  agent run \"explain this repo\" --provider openai --model gpt-4.1 --mode plan\n  agent run \"go on\" --continue\n  agent run \"try another way\" --fork 0190c2d4-... --resume-at 0190c2d5-...\n  agent run \"hi\" --provider openai-compatible --base-url http://localhost:11434/v1 --model llama3.1\n  agent run \"fix the tests\" --output-format stream-json --allow Edit --allow \"Bash(cargo test *)\"\n\nExit codes: 0 the model finished; 1 the run ended in an error (the provider failed; the session\nis logged and can be resumed), reached --max-turns, or the commit was refused; 2 bad\narguments, settings or provider configuration; 130 interrupted (Ctrl-C)."
    )]
    Run(RunArgs),
    #[command(
        after_help = "Examples:\n  agent chat\n  agent chat --continue\n  agent chat --provider openai --model gpt-4.1 --mode acceptEdits\n\nIn the session: type a prompt (end a line with \\ to go on on the next line), /help for the\ncommands (/status, /diff, /commit, /mode, /model, /cost, /exit, ...). Ctrl-C stops what runs;\nCtrl-C twice at an empty prompt, or Ctrl-D, leaves.\n\nExit codes: 0 the session ended; 2 bad arguments, settings or provider configuration."
    )]
    Chat(ChatArgs),
    /// Run a complete agent session offline against a built-in scripted model (clearly a demo:
    /// no network, no API key): it reads, greps, edits, runs Bash, meets a permission question
    /// answered by policy and a denied command, runs a hook, and ends with the change set.
    #[command(
        after_help = "Examples:\n  agent demo\n  agent demo --dir /tmp/agent-demo --json\n\nExit codes: 0 the demo ran; 2 it could not (bad --dir, unwritable $AGENT_HOME)."
    )]
    Demo(DemoArgs),
    /// Run one command from the installed WASI bundles in-process (wasmtime), confined to the
    /// workspace directory and limited in time, memory and output. stdout and stderr pass
    /// through; the exit status is the command's.
    #[command(
        after_help = "Examples:\n  agent exec -- ls -la\n  agent exec --workspace ~/src/app --timeout 2000 -- grep -rn TODO src\n  agent exec --json -- wc -l README.md\n\nExit codes: the command's own (127: no installed bundle provides it; 126: its module failed\nverification; 124: wall time; 137: memory; 153: output limit; 134: trap); 2 bad arguments or no\nbundle installed (`cargo xtask bundles && agent bundles install core-utils --registry target/bundles/registry`)."
    )]
    Exec(WasiExecArgs),
    /// Run a shell script with the portable WASI shell (pipelines, redirects, && || ;, quoting,
    /// variables, {a,b} {1..3}, ${X%..} and the other ${..} operators, $((..)), ((..)), [[ ]],
    /// globs, if/for/while/case, read, set -euxo pipefail, xargs, env CMD, timeout, find -exec;
    /// commands from the installed bundles), confined to the workspace.
    #[command(
        after_help = "Examples:\n  agent shell 'ls | wc -l'\n  agent shell --workspace ~/src/app 'grep -rn TODO src > todo.txt && wc -l todo.txt'\n  agent shell --json 'cat missing.txt || echo $?'\n  agent shell 'for f in *.md; do wc -l $f; done | sort -n'\n  agent shell 'find . -name \"*.rs\" | timeout 10 xargs grep -l TODO'\n  agent shell 'for f in *.txt; do mv \"$f\" \"${f%.txt}.md\"; done'\n\nExit codes: the script's (as bash: the last command's status, 127 command not found); 2 bad\narguments, unsupported syntax (the construct and its position are named, nothing runs) or no\nbundle installed."
    )]
    Shell(ShellArgs),
    /// Signed WASI tool bundles: build, sign and verify manifests; install from a registry;
    /// list, remove and resolve installed commands.
    #[command(subcommand)]
    Bundles(BundlesCommand),
    /// Ed25519 keys for bundle manifests: generate a key pair; list, trust and untrust public
    /// keys (the trust store `$AGENT_HOME/keys/trusted.json`).
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Example:\n  agent completions bash > ~/.local/share/bash-completion/completions/agent"
    )]
    Completions(CompletionsArgs),
}

/// `agent completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_parser = ["bash", "zsh", "fish", "elvish", "powershell"])]
    pub shell: String,
}

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
}

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

/// `agent workspace`: the shadow workspace of a real folder.
#[derive(Debug, Args)]
pub struct WorkspaceArgs {
    /// Where workspace state lives (default: $AGENT_HOME/workspaces, else ~/.agent/workspaces).
    #[arg(long, value_name = "DIR", global = true)]
    pub state_dir: Option<PathBuf>,
    /// The workspace: its real folder or its shadow (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    pub workspace: Option<PathBuf>,
    /// Append what the verb did to this session's log (`workspace.import`, `workspace.diff`
    /// from status and diff, `workspace.commit`), in $AGENT_HOME/sessions.
    #[arg(long, value_name = "ID", global = true)]
    pub session: Option<String>,
    #[command(subcommand)]
    pub command: WorkspaceCommand,
}

#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Copy a real folder into a new shadow (ignored paths, `.agent/` and `.git/` left out) and
    /// record its base snapshot; prints the shadow's path.
    #[command(
        after_help = "Example:\n  agent workspace import ~/src/app\n  agent workspace import . --shadow /tmp/app-shadow --json"
    )]
    Import(WorkspaceImportArgs),
    /// The change set of the shadow: one line per path (A added, M modified, D deleted,
    /// R renamed, T mode changed; `binary` when so).
    #[command(after_help = "Example:\n  agent workspace status --workspace ~/src/app --json")]
    Status(WorkspaceJsonArg),
    /// Unified diffs of the change set, or of the changes at or under PATH (coloured on a
    /// terminal).
    #[command(after_help = "Example:\n  agent workspace diff src/lib.rs")]
    Diff(WorkspaceDiffArgs),
    /// Apply the change set to the real folder, all or nothing. Shows it and asks first
    /// unless --yes; refuses paths that changed in the real folder since import (exit 1)
    /// unless each is named with --force.
    #[command(
        after_help = "Example:\n  agent workspace commit --yes\n  agent workspace commit --yes --force src/lib.rs --force README.md"
    )]
    Commit(WorkspaceCommitArgs),
    /// Throw away the shadow's changes: rebuild it from the real folder.
    #[command(after_help = "Example:\n  agent workspace discard --yes")]
    Discard(WorkspaceYesArg),
    /// Bring real-folder changes made since import into the shadow where the shadow did not
    /// change the same path (those are listed as conflicts).
    #[command(after_help = "Example:\n  agent workspace refresh --json")]
    Refresh(WorkspaceJsonArg),
}

#[derive(Debug, Args)]
pub struct WorkspaceImportArgs {
    /// The real folder to import.
    pub dir: PathBuf,
    /// Where the shadow tree goes (empty or new; default: inside the state directory).
    #[arg(long, value_name = "DIR")]
    pub shadow: Option<PathBuf>,
    /// Removed: `.git` is never imported; the shadow of a Git repository gets a `.git` of its
    /// own (docs/workspace.md). Accepted only to say so.
    #[arg(long, hide = true)]
    pub include_git: bool,
    /// Print a JSON object (shadow, real, files, bytes, skippedLinks).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WorkspaceJsonArg {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WorkspaceDiffArgs {
    /// Only changes at or under this path (relative to the workspace root).
    pub path: Option<String>,
}

#[derive(Debug, Args)]
pub struct WorkspaceCommitArgs {
    /// Do not ask; commit the change set as it is.
    #[arg(long)]
    pub yes: bool,
    /// Apply PATH although it changed in the real folder since import (repeat for more).
    #[arg(long = "force", value_name = "PATH")]
    pub force: Vec<String>,
    /// Print a JSON object (applied, forced).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WorkspaceYesArg {
    /// Do not ask.
    #[arg(long)]
    pub yes: bool,
}

/// `agent sessions`: the durable session store.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// The session store (default: $AGENT_HOME/sessions, else ~/.agent/sessions).
    #[arg(long, value_name = "DIR", global = true)]
    pub store: Option<PathBuf>,
    #[command(subcommand)]
    pub command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Start a new session (for scripts; the agent loop creates its own) and print its id.
    Create(SessionsCreateArgs),
    /// Sessions, most recently updated first: one per line (id, updated, messages, title), or
    /// with --json an array of metadata objects.
    List(SessionsListArgs),
    /// One session's events (all, or a window counted from the newest): a header and one line
    /// per event, or with --json the events as JSON lines.
    Show(SessionsShowArgs),
    /// Copy a session's history into a new session (whole, up to a message, or up to an event)
    /// and print the new id.
    Fork(SessionsForkArgs),
    /// Set a session's title; prints its metadata.
    Rename(SessionsRenameArgs),
    /// Add (or with --remove, remove) a tag; prints the metadata.
    Tag(SessionsTagArgs),
    /// Delete a session and its files.
    Delete(SessionsIdArg),
    /// Print a session as its events JSONL, or as a Claude Code transcript (JSONL).
    Export(SessionsExportArgs),
    /// Import an events JSONL file (`-` for stdin) as a new session; prints its id.
    Import(SessionsImportArgs),
    /// Append one event (for scripts); prints it as logged (with its seq, id and parent).
    Append(SessionsAppendArgs),
    /// Rebuild the index from the logs; prints {"sessions": N}.
    Reindex,
}

#[derive(Debug, Args)]
pub struct SessionsListArgs {
    /// Print a JSON array of metadata objects.
    #[arg(long)]
    pub json: bool,
    /// At most N sessions.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only sessions whose working directory is DIR.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Only sessions with this tag.
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Only sessions whose id, title or first prompt contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
}

#[derive(Debug, Args)]
pub struct SessionsCreateArgs {
    /// The id (default: a new UUID).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// The working directory recorded (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The model recorded.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// A title.
    #[arg(long, value_name = "TITLE")]
    pub title: Option<String>,
    /// A tag (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SessionsIdArg {
    /// The session id.
    pub id: String,
}

#[derive(Debug, Args)]
pub struct SessionsShowArgs {
    /// The session id.
    pub id: String,
    /// At most N events (the newest N after skipping --offset).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Skip the newest M events.
    #[arg(long, value_name = "M", default_value_t = 0)]
    pub offset: usize,
    /// Print the events as JSON lines (exactly as logged).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SessionsForkArgs {
    /// The session to fork.
    pub id: String,
    /// Copy up to and including this event (its id, a UUID).
    #[arg(long, value_name = "UUID", conflicts_with = "upto")]
    pub at: Option<String>,
    /// Copy the first N messages (user, assistant, tool use and tool result events).
    #[arg(long, value_name = "N")]
    pub upto: Option<u64>,
    /// The new session's id (default: a new UUID).
    #[arg(long = "id", value_name = "NEW")]
    pub new_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct SessionsRenameArgs {
    /// The session id.
    pub id: String,
    /// The new title.
    pub title: String,
}

#[derive(Debug, Args)]
pub struct SessionsTagArgs {
    /// The session id.
    pub id: String,
    /// The tag.
    pub tag: String,
    /// Remove the tag instead of adding it.
    #[arg(long)]
    pub remove: bool,
}

#[derive(Debug, Args)]
pub struct SessionsExportArgs {
    /// The session id.
    pub id: String,
    /// `jsonl`: the events as logged; `claude`: a Claude Code transcript.
    #[arg(long, value_parser = ["jsonl", "claude"], default_value = "jsonl")]
    pub format: String,
}

#[derive(Debug, Args)]
pub struct SessionsImportArgs {
    /// The events JSONL file (`-`: stdin).
    pub file: PathBuf,
    /// The new session's id (default: a new UUID).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
}

#[derive(Debug, Args)]
pub struct SessionsAppendArgs {
    /// The session id.
    pub id: String,
    /// The event as a JSON object, e.g. '{"type":"user.message","text":"hi"}'. `v`, `seq`, `id`
    /// and `ts` are filled in when missing; the store assigns `seq` and links `parent`.
    #[arg(long, value_name = "JSON")]
    pub event: String,
}

#[derive(Debug, Subcommand)]
#[allow(
    clippy::enum_variant_names,
    reason = "the verbs are `check-path`, `check-command`, `check-url`, as the issue names them"
)]
pub enum SandboxCommand {
    /// Check a path for reading or writing. Prints {"allowed","reason","rule"}; exit 0 when
    /// allowed, 1 when denied, 2 on bad input.
    CheckPath(CheckPathArgs),
    /// Check a shell command string (every part, at every nesting level).
    CheckCommand(CheckCommandArgs),
    /// Check a URL (resolution only, no request).
    CheckUrl(CheckUrlArgs),
    /// Print the OS sandbox policy for a selection (a Seatbelt `.sb` profile, or a bubblewrap
    /// command line), or with --explain what went into it.
    Profile(Box<ProfileArgs>),
    /// Run a command inside the OS sandbox, with resource limits. Exits with the command's code
    /// (128 + N when killed by signal N, 124 when the time limit passed).
    Exec(Box<ExecArgs>),
}

/// What goes into the OS sandbox's policy (document 001's selection).
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// The profile tree (default: the one built into agent, the repository's profiles/).
    #[arg(long = "profiles-dir", value_name = "DIR")]
    pub profiles_dir: Option<PathBuf>,
    /// The read-write working directory (default: the current directory; `--workdir=` for none).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<String>,
    /// Extra read-write directories, colon-separated (repeatable).
    #[arg(long = "add-dirs", value_name = "A:B")]
    pub add_dirs: Vec<String>,
    /// Extra read-only directories, colon-separated (repeatable).
    #[arg(long = "add-dirs-ro", value_name = "C:D")]
    pub add_dirs_ro: Vec<String>,
    /// Optional integrations, agent or app profiles, `all-agents`, `all-apps` (comma-separated,
    /// repeatable).
    #[arg(long, value_name = "F,G")]
    pub enable: Vec<String>,
    /// A profile appended last, where its rules win (repeatable).
    #[arg(long = "append-profile", value_name = "FILE")]
    pub append_profile: Vec<PathBuf>,
    /// The command whose basename selects agent and app profiles (exec: default the command run).
    #[arg(long, value_name = "NAME")]
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Print what went into the policy instead of the policy.
    #[arg(long)]
    pub explain: bool,
    /// `sb`: a macOS Seatbelt profile; `bwrap`: the bubblewrap options (the command follows `--`).
    #[arg(long, value_parser = ["sb", "bwrap"], default_value = "sb")]
    pub format: String,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub selection: SelectionArgs,
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// The OS sandbox (default: bwrap on Linux, sandbox-exec on macOS).
    #[arg(long, value_parser = ["bwrap", "sandbox-exec", "none"])]
    pub backend: Option<String>,
    /// Pass an environment variable the secret filter would drop (`NAME`), or set one
    /// (`NAME=VALUE`) (repeatable).
    #[arg(long = "env", value_name = "NAME[=VALUE]")]
    pub env: Vec<String>,
    /// Wall-clock limit in seconds (default 600).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// CPU-time limit in seconds (default 300).
    #[arg(long = "cpu-seconds", value_name = "SECONDS")]
    pub cpu_seconds: Option<u64>,
    /// Address-space limit in bytes (default 4 GiB).
    #[arg(long = "memory-bytes", value_name = "BYTES")]
    pub memory_bytes: Option<u64>,
    /// Output kept, stdout and stderr together, in bytes (default 1 MiB); more kills the command.
    #[arg(long = "output-bytes", value_name = "BYTES")]
    pub output_bytes: Option<u64>,
    /// Write the audit record (JSON) to this file.
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, num_args = 1..)]
    pub argv: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CheckPathArgs {
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// The operation.
    #[arg(long, value_parser = ["read", "write"])]
    pub op: String,
    /// The path (relative paths are taken from --cwd).
    pub path: PathBuf,
}

#[derive(Debug, Args)]
pub struct CheckCommandArgs {
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// The command string, quoted as one argument (`'git status && ls'`), before or after the
    /// options; after `--` every word is part of the command (`-- ls -la`).
    #[arg(required = true, num_args = 1..)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CheckUrlArgs {
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Pin HOST to IP instead of asking DNS (repeatable), like curl's --resolve.
    #[arg(long = "resolve", value_name = "HOST=IP")]
    pub resolve: Vec<String>,
    /// The URL.
    pub url: String,
}

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

#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// Decide one tool call and print {"decision","step","rule","reason",...} as JSON.
    ///
    /// User settings come from $AGENT_HOME (default ~/.agent), project and local settings from
    /// the project directory (default: the current directory). With no prompter, "ask" is
    /// printed as is: the caller decides. Exit 0 whatever the decision; 2 on bad input.
    Check(CheckArgs),
}

/// Where settings come from; shared by every verb that reads them.
#[derive(Clone, Debug, Args)]
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

/// Where the bundle cache is (default `$AGENT_HOME/bundles`).
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The bundle cache directory (default: $AGENT_HOME/bundles).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent bundles ...`.
#[derive(Debug, Subcommand)]
pub enum BundlesCommand {
    /// Build a manifest from a spec (name, version, commands) and a directory of modules;
    /// optionally lay it out in a registry directory and sign it.
    #[command(
        after_help = "Examples:\n  agent bundles build --spec guest/bundle.json --modules guest/target/wasm32-wasip1/release --registry target/bundles/registry --key ~/.agent/keys/me.jwk\n  agent bundles build --spec bundle.json --modules out --out manifest.json\n\nExit codes: 0 built; 2 bad spec, missing module or unwritable output."
    )]
    Build(BundleBuildArgs),
    /// Sign a manifest with a private key (the `signature` block is added or replaced).
    #[command(
        after_help = "Example:\n  agent bundles sign --manifest registry/bundles/core-utils/0.1.0/manifest.json --key ~/.agent/keys/me.jwk\n\nExit codes: 0 signed; 2 bad manifest or key."
    )]
    Sign(BundleSignArgs),
    /// Verify a manifest: its signature (with the given keys, else the trusted ones) and,
    /// unless --signature-only, every asset beside it (size and sha256).
    #[command(
        after_help = "Examples:\n  agent bundles verify --manifest manifest.json --key agent-dev=ZzLClo23XmctaEt4zX--ubVfFQnuBEvHMSCwuLBpr4Q\n  agent bundles verify --manifest registry/bundles/core-utils/0.1.0/manifest.json --json\n\nExit codes: 0 valid; 1 invalid (the reason on stderr, or in the JSON); 2 bad input (unreadable file, not JSON, bad --key)."
    )]
    Verify(BundleVerifyArgs),
    /// Install NAME[@VERSION] from a registry (a directory or an http(s) URL), verified before
    /// anything is written to the cache.
    #[command(
        after_help = "Examples:\n  agent bundles install core-utils --registry target/bundles/registry\n  agent bundles install core-utils@0.1.0 --registry https://bundles.example.org\n\nExit codes: 0 installed (or already installed); 1 verification or transfer failed (nothing is installed); 2 bad input."
    )]
    Install(BundleInstallArgs),
    /// List installed bundles and their commands.
    #[command(
        after_help = "Example:\n  agent bundles list --json\n\nExit codes: 0 listed; 2 unreadable cache."
    )]
    List(StoreArgs),
    /// Remove an installed bundle (all versions, or NAME@VERSION).
    #[command(
        after_help = "Example:\n  agent bundles remove core-utils@0.1.0\n\nExit codes: 0 removed; 1 not installed; 2 bad input."
    )]
    Remove(BundleRemoveArgs),
    /// Which installed bundle provides a command, why (pinned, official, preferred, by name),
    /// and what else provides it (verified: the manifest's signature and the module's sha256
    /// are checked). Official bundles win every name clash; a third-party command that an
    /// official bundle also provides runs only when pinned (`agent bundles pin`).
    #[command(
        after_help = "Examples:\n  agent bundles which grep\n  agent bundles which cat --prefer core-utils --json\n\nExit codes: 0 found and verified; 1 not found, refused (--prefer puts a third-party bundle before an official one providing it; a pin naming a bundle that is gone) or verification failed; 2 bad input."
    )]
    Which(BundleWhichArgs),
    /// Pin a command to a bundle: its command runs whatever else provides it, official
    /// bundles included (the only way to run a third-party command an official bundle also
    /// provides). Pins live in STORE/pins.json; `agent bundles list` shows them.
    #[command(
        after_help = "Examples:\n  agent bundles pin cat a-tools\n  agent bundles pin grep core-utils --json\n\nExit codes: 0 pinned; 1 the bundle is not installed or does not provide the command; 2 bad input (a bad name, an unreadable pins file)."
    )]
    Pin(BundlePinArgs),
    /// Remove a command's pin: it resolves as usual again (official bundles first).
    #[command(
        after_help = "Example:\n  agent bundles unpin cat\n\nExit codes: 0 unpinned; 1 the command was not pinned; 2 bad input (an unreadable pins file)."
    )]
    Unpin(BundleUnpinArgs),
    /// Remove leftovers of interrupted installs, broken directories and superseded versions.
    #[command(
        after_help = "Example:\n  agent bundles gc\n\nExit codes: 0 done; 2 the cache could not be cleaned."
    )]
    Gc(StoreArgs),
}

/// `agent bundles build`.
#[derive(Debug, Args)]
pub struct BundleBuildArgs {
    /// The spec: a JSON object with name, version and commands [{name, modulePath, limits?}].
    #[arg(long, value_name = "FILE")]
    pub spec: PathBuf,
    /// The directory holding the modules the commands name.
    #[arg(long, value_name = "DIR")]
    pub modules: PathBuf,
    /// Lay the bundle out in this registry directory (bundles/NAME/VERSION/, index.json).
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// Write the manifest to this file (default with --registry: inside the registry; else
    /// stdout).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Sign the manifest with this private key (a JWK file from `agent keys generate`).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent bundles sign`.
#[derive(Debug, Args)]
pub struct BundleSignArgs {
    /// The manifest to sign (rewritten in place unless --out).
    #[arg(long, value_name = "FILE")]
    pub manifest: PathBuf,
    /// The private key (a JWK file from `agent keys generate`).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// Write the signed manifest here instead.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent bundles verify`.
#[derive(Debug, Args)]
pub struct BundleVerifyArgs {
    /// The manifest.
    #[arg(long, value_name = "FILE")]
    pub manifest: PathBuf,
    /// A public key that may have signed it, as ID=BASE64URL (repeat for more). Without any,
    /// the trusted keys of $AGENT_HOME/keys/trusted.json are used.
    #[arg(long = "key", value_name = "ID=BASE64URL")]
    pub keys: Vec<String>,
    /// Check the signature only, not the assets beside the manifest.
    #[arg(long = "signature-only")]
    pub signature_only: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent bundles install`.
#[derive(Debug, Args)]
pub struct BundleInstallArgs {
    /// NAME or NAME@VERSION (default version: the newest in the registry's index.json).
    pub bundle: String,
    /// The registry: a directory or an http(s) URL.
    #[arg(long, value_name = "DIR|URL")]
    pub registry: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent bundles remove`.
#[derive(Debug, Args)]
pub struct BundleRemoveArgs {
    /// NAME (every version) or NAME@VERSION.
    pub bundle: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent bundles which`.
#[derive(Debug, Args)]
pub struct BundleWhichArgs {
    /// The command name.
    pub command: String,
    /// Search this bundle before the others of its class (repeat for an order; the rest
    /// follow by name). Official bundles still come before third-party ones.
    #[arg(long, value_name = "BUNDLE")]
    pub prefer: Vec<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent bundles pin`.
#[derive(Debug, Args)]
pub struct BundlePinArgs {
    /// The command name.
    pub command: String,
    /// The bundle (its name; the newest installed version is used).
    pub bundle: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent bundles unpin`.
#[derive(Debug, Args)]
pub struct BundleUnpinArgs {
    /// The command name.
    pub command: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent keys ...`.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate an Ed25519 key pair: ID.jwk (private, 0600) and ID.pub.jwk.
    #[command(
        after_help = "Examples:\n  agent keys generate --id release-2026\n  agent keys generate --id dev --out ./keys --trust --official-for ./registry\n\nExit codes: 0 written; 2 bad id, or the key file exists."
    )]
    Generate(KeysGenerateArgs),
    /// List the trusted public keys and the registries they count for.
    #[command(
        after_help = "Example:\n  agent keys list --json\n\nExit codes: 0 listed; 2 unreadable trust store."
    )]
    List(KeysListArgs),
    /// Trust a public key: official for some registries (their manifests must be signed by
    /// it) or configured for third-party registries.
    #[command(
        after_help = "Examples:\n  agent keys trust agent-dev=ZzLClo23XmctaEt4zX--ubVfFQnuBEvHMSCwuLBpr4Q --official-for https://bundles.example.org\n  agent keys trust ./keys/dev.pub.jwk --registry ./third-party-registry\n\nExit codes: 0 trusted; 2 bad key or registry."
    )]
    Trust(KeysTrustArgs),
    /// Stop trusting a key.
    #[command(
        after_help = "Example:\n  agent keys untrust agent-dev\n\nExit codes: 0 removed; 1 no such key; 2 unreadable trust store."
    )]
    Untrust(KeysUntrustArgs),
}

/// `agent keys generate`.
#[derive(Debug, Args)]
pub struct KeysGenerateArgs {
    /// The key id manifests will name (letters, digits, `. _ - +`).
    #[arg(long, value_name = "ID")]
    pub id: String,
    /// The directory for the key files (default: $AGENT_HOME/keys).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also add the public key to the trust store.
    #[arg(long)]
    pub trust: bool,
    /// With --trust: the registries it is official for (repeat for more).
    #[arg(long = "official-for", value_name = "REGISTRY", requires = "trust")]
    pub official_for: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent keys list`.
#[derive(Debug, Args)]
pub struct KeysListArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent keys trust`.
#[derive(Debug, Args)]
pub struct KeysTrustArgs {
    /// The key: ID=BASE64URL, or a public (or private) JWK file.
    pub key: String,
    /// A registry (directory or URL) this key is official for (repeat for more).
    #[arg(long = "official-for", value_name = "REGISTRY")]
    pub official_for: Vec<String>,
    /// A third-party registry whose manifests must be signed by this key (repeat for more).
    #[arg(long = "registry", value_name = "REGISTRY")]
    pub registries: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent keys untrust`.
#[derive(Debug, Args)]
pub struct KeysUntrustArgs {
    /// The key id.
    pub id: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options shared by `agent exec` and `agent shell`.
#[derive(Debug, Args)]
pub struct WasiArgs {
    /// The directory the commands see as `/` (default: the current directory). Nothing outside
    /// it is reachable.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Wall-time limit per command, in milliseconds (default 120000).
    #[arg(long, value_name = "MS")]
    pub timeout: Option<u64>,
    /// Linear-memory limit per command, in bytes (default 536870912).
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<u64>,
    /// Most bytes kept of stdout and of stderr each (default 16777216).
    #[arg(long = "output-limit", value_name = "BYTES")]
    pub output_limit: Option<usize>,
    /// An environment variable for the commands, NAME=VALUE (repeat for more; nothing of the
    /// host's environment is passed).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// Search this bundle first (repeat for an order; the rest follow by name).
    #[arg(long, value_name = "BUNDLE")]
    pub prefer: Vec<String>,
    /// Let the commands fetch URLs of this domain (the `fetch` command, through agent_net);
    /// repeat for more; `*.example.com` allows its subdomains. Private and loopback addresses
    /// stay refused. Default: no network at all.
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    pub allow_domain: Vec<String>,
    /// The bundle cache (default: $AGENT_HOME/bundles).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Print the structured result as JSON instead of passing the output through.
    #[arg(long)]
    pub json: bool,
}

/// `agent exec`.
#[derive(Debug, Args)]
pub struct WasiExecArgs {
    #[command(flatten)]
    pub wasi: WasiArgs,
    /// The command and its arguments (after `--`).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub argv: Vec<String>,
}

/// `agent shell`.
#[derive(Debug, Args)]
pub struct ShellArgs {
    #[command(flatten)]
    pub wasi: WasiArgs,
    /// The script.
    pub script: String,
}

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
