//! `agent sandbox`: check a path, a command or a URL; print or run the OS sandbox's policy.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::settings::SettingsArgs;

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
