//! `agent sessions`: the durable session store.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `--sessions-url`: keep sessions in a PostgreSQL database; taken by every verb that opens
/// the session store.
#[derive(Clone, Debug, Default, Args)]
pub struct SessionsUrlArg {
    /// Keep sessions in this PostgreSQL database, postgres://USER@HOST:PORT/DATABASE (never with
    /// a password: it is read from $PGPASSWORD, or the variable the settings'
    /// `sessions.passwordEnv` names). Default: $AGENT_SESSIONS_URL, else the settings'
    /// `sessions` block, else the local store.
    #[arg(long = "sessions-url", value_name = "URL", global = true)]
    pub url: Option<String>,
}

/// `agent sessions`: the durable session store.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// The local session store (default: $AGENT_HOME/sessions, else ~/.agent/sessions); not
    /// with --sessions-url, except for `migrate`, which copies between the two.
    #[arg(long, value_name = "DIR", global = true)]
    pub store: Option<PathBuf>,
    #[command(flatten)]
    pub sessions_url: SessionsUrlArg,
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
    /// Copy sessions between the local store and PostgreSQL, each verified by export equality;
    /// the source is never changed, and a session already copied is left as it is.
    #[command(
        after_help = "Examples:\n  agent sessions migrate --to postgres --sessions-url postgres://agent@db:5432/agent\n  agent sessions migrate --to local --store ~/backup/sessions --json\n\nExit codes: 0 every session is in the target (copied now or already there); 1 a session\ncould not be copied, or the target holds a different session under its id (a conflict:\nnothing is overwritten); 2 bad arguments, settings or URL, an unknown --session, or a store\nthat cannot be opened."
    )]
    Migrate(SessionsMigrateArgs),
}

#[derive(Debug, Args)]
pub struct SessionsMigrateArgs {
    /// Where the sessions go: `postgres` (from the local store) or `local` (from PostgreSQL).
    #[arg(long, value_name = "BACKEND", value_parser = ["postgres", "local"])]
    pub to: String,
    /// Only this session (repeatable; default: every session of the source).
    #[arg(long = "session", value_name = "ID")]
    pub sessions: Vec<String>,
    /// Print one JSON object: the source, the target, and each session's status.
    #[arg(long)]
    pub json: bool,
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
