//! The command line, defined once with clap: the root [`Cli`] and its verbs ([`Command`]), each
//! verb's arguments in the module named for it.

pub mod bundles;
pub mod hooks;
pub mod keys;
pub mod permissions;
pub mod run;
pub mod sandbox;
pub mod sdk;
pub mod sessions;
pub mod settings;
pub mod tool;
pub mod wasi;
pub mod workspace;

use clap::{Args, Parser, Subcommand};

use self::bundles::BundlesCommand;
use self::hooks::HooksCommand;
use self::keys::KeysCommand;
use self::permissions::{PermissionsCommand, TrustArgs};
use self::run::{ChatArgs, DemoArgs, RunArgs};
use self::sandbox::SandboxCommand;
use self::sessions::SessionsArgs;
use self::tool::ToolArgs;
use self::wasi::{ShellArgs, WasiExecArgs};
use self::workspace::WorkspaceArgs;
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
