//! `agent workspace`: the shadow workspace from the shell (docs/workspace.md).
//!
//! Exit codes: 0 done (or nothing to do); 1 `commit` refused because paths changed in the real
//! folder since import, or in the shadow since the change set was shown (they are listed;
//! nothing was applied); 2 bad input, no workspace, a declined or impossible confirmation, or
//! a failure (a failed commit is rolled back first, and the error says whether wholly).
//!
//! `commit` is one library operation: [`Workspace::review`] pins the change set down (paths,
//! kinds, content hashes), this verb shows it and asks, and [`Workspace::commit_review`]
//! applies exactly that review.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use agent_core::events::{Event, EventPayload};
use agent_store::SessionId;

use agent_workspace::{
    ChangeKind, ChangeSet, CommitOptions, CommitReport, ImportOptions, Recovery, Workspace,
    WorkspaceError, quote_path,
};
use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::cli::sessions::SessionsUrlArg;
use crate::cli::workspace::{
    WorkspaceArgs, WorkspaceCommand, WorkspaceCommitArgs, WorkspaceDiffArgs, WorkspaceImportArgs,
    WorkspaceJsonArg, WorkspaceYesArg,
};
use crate::exit::Exit;
use crate::output;

/// The session a verb logs what it did to (`--session ID`), and the store it is in.
struct SessionLog {
    id: Option<SessionId>,
    url: SessionsUrlArg,
}

impl SessionLog {
    /// Appends `payload` to the session's log when one was named, in the store
    /// `--sessions-url` or the settings choose.
    fn log(&self, payload: EventPayload) -> Result<()> {
        let Some(id) = &self.id else { return Ok(()) };
        let choice = super::session_backend::Choice::of(None, &self.url, None)?;
        super::open::runtime()?.block_on(async {
            let store = choice.open().await?.backend();
            store.append(id, vec![Event::new(0, None, payload)]).await?;
            store.close(id).await?;
            anyhow::Ok(())
        })
    }
}

pub fn run(args: WorkspaceArgs) -> Result<Exit> {
    let session = SessionLog {
        id: args.session.as_deref().map(SessionId::parse).transpose()?,
        url: args.sessions_url,
    };
    let session = &session;
    let state_root = match args.state_dir {
        Some(dir) => super::absolute(dir)?,
        None => super::agent_home()?.workspaces(),
    };
    let open = |workspace: Option<PathBuf>| -> Result<Workspace> {
        let folder = match workspace {
            Some(d) => d,
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let ws = Workspace::open(&folder, &state_root)?;
        if let Some(r) = ws.recovered() {
            output::warning(&recovery_note(r));
        }
        Ok(ws)
    };
    match args.command {
        WorkspaceCommand::Import(a) => import(a, state_root, session),
        WorkspaceCommand::Status(a) => status(&open(args.workspace)?, &a, session),
        WorkspaceCommand::Diff(a) => diff(&open(args.workspace)?, &a, session),
        WorkspaceCommand::Commit(a) => commit(open(args.workspace)?, a, session),
        WorkspaceCommand::Discard(a) => discard(open(args.workspace)?, &a),
        WorkspaceCommand::Refresh(a) => refresh(open(args.workspace)?, &a),
    }
}

/// `agent workspace import`.
fn import(a: WorkspaceImportArgs, state_root: PathBuf, session: &SessionLog) -> Result<Exit> {
    if a.include_git {
        bail!(
            "--include-git was removed: .git is never part of the change set; the shadow of a Git repository gets a .git of its own that shares the real objects (docs/workspace.md, Git in the shadow); import without it"
        );
    }
    let opts = ImportOptions {
        state_root,
        shadow: a.shadow.map(super::absolute).transpose()?,
    };
    let (ws, report) = Workspace::import(&a.dir, &opts)?;
    session.log(EventPayload::WorkspaceImport(ws.import_event(&report)))?;
    if a.json {
        let mut v = serde_json::to_value(&report)?;
        v["shadow"] = json!(ws.shadow());
        v["real"] = json!(ws.real());
        output::stdout_line(&v.to_string());
    } else {
        output::stdout_line(&ws.shadow().display().to_string());
        for link in &report.skipped_links {
            output::warning(&format!(
                "{} is a symlink that leaves the folder; it was not imported",
                quote_path(link)
            ));
        }
        if let Some(why) = report.git.as_ref().and_then(|g| g.skipped.as_deref()) {
            output::warning(why);
        }
    }
    Ok(Exit::Success)
}

/// `agent workspace status`.
fn status(ws: &Workspace, a: &WorkspaceJsonArg, session: &SessionLog) -> Result<Exit> {
    let set = ws.status()?;
    session.log(EventPayload::WorkspaceDiff(set.event()))?;
    if a.json {
        let v = json!({"real": ws.real(), "shadow": ws.shadow(), "changes": set.changes});
        output::stdout_line(&v.to_string());
    } else {
        print_set(&set);
    }
    Ok(Exit::Success)
}

/// `agent workspace diff`.
fn diff(ws: &Workspace, a: &WorkspaceDiffArgs, session: &SessionLog) -> Result<Exit> {
    session.log(EventPayload::WorkspaceDiff(ws.status()?.event()))?;
    // `Workspace::diff` has already made every control character in the text
    // visible, so the only escape sequences printed are the palette's colours.
    let palette = crate::colour::Palette::for_stdout();
    for (_, text) in ws.diff(a.path.as_deref())? {
        output::stdout_text(&palette.diff(&text));
    }
    Ok(Exit::Success)
}

/// `agent workspace commit`: shown and confirmed unless `--yes`, applied all or nothing.
fn commit(mut ws: Workspace, a: WorkspaceCommitArgs, session: &SessionLog) -> Result<Exit> {
    let review = ws.review()?;
    let set = review.changes();
    if set.is_empty() {
        if a.json {
            output::stdout_line(&json!({"applied": [], "forced": []}).to_string());
        } else {
            output::stdout_line("nothing to commit");
        }
        return Ok(Exit::Success);
    }
    if !a.yes {
        print_set(set);
        confirm(&format!(
            "Apply these {} change(s) to {}?",
            set.changes.len(),
            ws.real().display()
        ))?;
    }
    let opts = CommitOptions {
        force: a.force,
        ..CommitOptions::default()
    };
    match ws.commit_review(&review, &opts) {
        Ok(report) => {
            session.log(EventPayload::WorkspaceCommit(report.event()))?;
            if a.json {
                output::stdout_line(&serde_json::to_string(&report)?);
            } else {
                output::stdout_line(&format!(
                    "committed {} path(s) to {}",
                    report.applied.len(),
                    ws.real().display()
                ));
            }
        }
        Err(WorkspaceError::Conflicts(conflicts)) => {
            session.log(EventPayload::WorkspaceCommit(CommitReport::refused_event(
                &conflicts,
            )))?;
            if a.json {
                output::stdout_line(&json!({"conflicts": conflicts}).to_string());
            }
            output::error(&WorkspaceError::Conflicts(conflicts).to_string());
            return Ok(Exit::Denied);
        }
        Err(WorkspaceError::ChangedSinceReview(paths)) => {
            if a.json {
                output::stdout_line(&json!({"changedSinceReview": paths}).to_string());
            }
            output::error(&WorkspaceError::ChangedSinceReview(paths).to_string());
            return Ok(Exit::Denied);
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Exit::Success)
}

/// `agent workspace discard`.
fn discard(mut ws: Workspace, a: &WorkspaceYesArg) -> Result<Exit> {
    if !a.yes {
        let set = ws.status()?;
        print_set(&set);
        confirm(&format!(
            "Drop these {} change(s) and rebuild the shadow from {}?",
            set.changes.len(),
            ws.real().display()
        ))?;
    }
    let report = ws.discard()?;
    output::stdout_line(&format!(
        "shadow rebuilt from {} ({} files)",
        ws.real().display(),
        report.files
    ));
    Ok(Exit::Success)
}

/// `agent workspace refresh`.
fn refresh(mut ws: Workspace, a: &WorkspaceJsonArg) -> Result<Exit> {
    let report = ws.refresh()?;
    if a.json {
        output::stdout_line(&serde_json::to_string(&report)?);
    } else {
        for p in &report.pulled {
            output::stdout_line(&format!("pulled    {}", quote_path(p)));
        }
        for p in &report.conflicts {
            output::stdout_line(&format!(
                "conflict  {} (changed on both sides; the shadow's version stays)",
                quote_path(p)
            ));
        }
        if let Some(note) = &report.git {
            output::warning(note);
        }
    }
    Ok(Exit::Success)
}

/// What opening the workspace did with an interrupted commit, for the user.
fn recovery_note(r: &Recovery) -> String {
    match r {
        Recovery::Finished(paths) => format!(
            "an interrupted commit was finished: {} path(s) now hold the reviewed content",
            paths.len()
        ),
        Recovery::RolledBack(paths) => format!(
            "an interrupted commit was rolled back: {} path(s) are as they were before it",
            paths.len()
        ),
        Recovery::Discarded => {
            "an interrupted commit had not changed the real folder yet; it was dropped".to_owned()
        }
        _ => "an interrupted commit was recovered".to_owned(),
    }
}

/// One line per change: `M  src/lib.rs`, `R  new.rs (from old.rs)`, `A  img.png (binary)`.
/// Names are quoted as Git quotes them (`quote_path`), so a control character or a newline in
/// a name cannot forge or hide a line.
pub(crate) fn print_set(set: &ChangeSet) {
    if set.is_empty() {
        output::stdout_line("no changes");
        return;
    }
    for c in &set.changes {
        let (letter, extra) = match &c.kind {
            ChangeKind::Added => ("A", String::new()),
            ChangeKind::Modified => ("M", String::new()),
            ChangeKind::Deleted => ("D", String::new()),
            ChangeKind::Renamed { from } => ("R", format!(" (from {})", quote_path(from))),
            ChangeKind::ModeChanged => (
                "T",
                format!(
                    " (mode {:o} -> {:o})",
                    c.old_mode.unwrap_or(0),
                    c.new_mode.unwrap_or(0)
                ),
            ),
        };
        let binary = if c.binary { " (binary)" } else { "" };
        output::stdout_line(&format!("{letter}  {}{extra}{binary}", quote_path(&c.path)));
    }
}

/// Asks on the terminal; refuses (exit 2) without one.
pub(crate) fn confirm(question: &str) -> Result<()> {
    if !std::io::stdin().is_terminal() {
        bail!(
            "standard input is not a terminal, so the change set cannot be confirmed; review it with `agent workspace diff`, then run again with --yes"
        );
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("cannot read the answer")?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        bail!("not confirmed; nothing was changed")
    }
}
