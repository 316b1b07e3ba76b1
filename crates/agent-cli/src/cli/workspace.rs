//! `agent workspace`: the shadow workspace of a real folder.

use std::path::PathBuf;

use clap::{Args, Subcommand};

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
    /// from status and diff, `workspace.commit`), in the session store (default
    /// $AGENT_HOME/sessions; see --sessions-url).
    #[arg(long, value_name = "ID", global = true)]
    pub session: Option<String>,
    #[command(flatten)]
    pub sessions_url: super::sessions::SessionsUrlArg,
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
