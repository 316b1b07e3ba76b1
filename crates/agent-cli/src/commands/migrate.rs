//! `agent sessions migrate --to postgres|local`: copies sessions between the local store and a
//! PostgreSQL database.
//!
//! Each session is exported from the source as its events JSONL, imported into the target
//! under the same id, and verified: the target's export must be the very same bytes. A session
//! the target already holds with an equal export is "already there" (so a re-run is safe); one
//! it holds with a different export is a conflict, reported and never overwritten. The source is
//! only read. Exit 0 when every session is in the target, 1 when any conflicted or failed, 2 for
//! bad arguments or a store that cannot be opened.

use std::io::IsTerminal;
use std::path::PathBuf;

use agent_store::{ExportFormat, ListQuery, SessionBackend, SessionId, StoreError};
use anyhow::{Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::session_backend::{Choice, SESSIONS_URL_ENV, local_root, postgres_named};
use crate::cli::sessions::{SessionsMigrateArgs, SessionsUrlArg};
use crate::exit::Exit;
use crate::output;

/// What became of one session.
#[derive(Debug, PartialEq, Eq)]
enum Status {
    /// Copied now, and verified.
    Copied,
    /// The target held it already, with the same export.
    AlreadyThere,
    /// The target holds a different session under this id; it was left as it is.
    Conflict,
    /// It could not be copied (the message says why); the target holds no copy of it.
    Failed(String),
}

impl Status {
    /// The status as `--json` names it.
    fn name(&self) -> &'static str {
        match self {
            Self::Copied => "copied",
            Self::AlreadyThere => "alreadyThere",
            Self::Conflict => "conflict",
            Self::Failed(_) => "failed",
        }
    }
}

/// Runs the verb: `store` is `--store DIR` (the local side), `url` `--sessions-url` (the
/// PostgreSQL side, else `$AGENT_SESSIONS_URL` or the settings' `sessions.url`).
pub(super) fn run(
    store: Option<PathBuf>,
    url: &SessionsUrlArg,
    args: SessionsMigrateArgs,
) -> Result<Exit> {
    let local = Choice::Local(local_root(store)?);
    let pg = postgres_named(url, None)?.ok_or_else(|| {
        anyhow!(
            "`agent sessions migrate` needs a PostgreSQL store: pass --sessions-url postgres://USER@HOST:PORT/DATABASE, set ${SESSIONS_URL_ENV}, or set `sessions.url` in the settings"
        )
    })?;
    let (source, target) = match args.to.as_str() {
        "postgres" => (local, Choice::Postgres(Box::new(pg))),
        "local" => (Choice::Postgres(Box::new(pg)), local),
        other => bail!("--to {other}: use postgres or local"),
    };
    let only = args
        .sessions
        .iter()
        .map(|s| SessionId::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let runtime = super::open::runtime()?;
    runtime.block_on(async {
        let source = source.open().await?;
        let target = target.open().await?;
        let (from, to) = (source.location(), target.location());
        let (src, dst) = (source.backend(), target.backend());
        let ids = if only.is_empty() {
            src.list(ListQuery::default())
                .await?
                .into_iter()
                .map(|m| m.id)
                .collect()
        } else {
            for id in &only {
                // An unknown id is bad input (exit 2), found before anything is copied.
                src.metadata(id).await?;
            }
            only
        };
        let bar = progress(ids.len(), args.json);
        let mut results = Vec::with_capacity(ids.len());
        for id in ids {
            bar.set_message(id.to_string());
            let status = copy(src.as_ref(), dst.as_ref(), &id).await;
            bar.inc(1);
            results.push((id, status));
        }
        bar.finish_and_clear();
        report(&from, &to, &results, args.json);
        let clean = results
            .iter()
            .all(|(_, s)| matches!(s, Status::Copied | Status::AlreadyThere));
        Ok(if clean { Exit::Success } else { Exit::Partial })
    })
}

/// A progress bar on a terminal (stderr), nothing elsewhere or with `--json`.
fn progress(len: usize, json: bool) -> ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template("migrating {pos}/{len} {bar:30} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(u64::try_from(len).unwrap_or(u64::MAX)).with_style(style)
}

/// Copies one session (see the module docs).
async fn copy(src: &dyn SessionBackend, dst: &dyn SessionBackend, id: &SessionId) -> Status {
    let text = match src.export(id, ExportFormat::Jsonl).await {
        Ok(t) => t,
        Err(e) => return Status::Failed(format!("cannot export it from the source: {e}")),
    };
    match dst.export(id, ExportFormat::Jsonl).await {
        Ok(there) if there == text => return Status::AlreadyThere,
        Ok(_) => return Status::Conflict,
        Err(StoreError::NotFound { .. }) => {}
        Err(e) => return Status::Failed(format!("cannot read the target's copy: {e}")),
    }
    if let Err(e) = dst.import(text.clone(), Some(id.clone())).await {
        return Status::Failed(format!("cannot import it: {e}"));
    }
    if let Err(e) = dst.close(id).await {
        return Status::Failed(format!("imported, but cannot release it: {e}"));
    }
    match dst.export(id, ExportFormat::Jsonl).await {
        Ok(copied) if copied == text => Status::Copied,
        verified => {
            let why = match verified {
                Ok(_) => "the copy's export differs from the source's".to_owned(),
                Err(e) => format!("cannot read the copy back: {e}"),
            };
            match dst.delete(id).await {
                Ok(()) => Status::Failed(format!("{why}; the copy was deleted")),
                Err(e) => Status::Failed(format!(
                    "{why}; the copy could not be deleted ({e}): delete it from the target before migrating again"
                )),
            }
        }
    }
}

/// Prints the outcome: a line per session and a summary, or with `json` one object.
fn report(from: &str, to: &str, results: &[(SessionId, Status)], json: bool) {
    let count = |name: &str| results.iter().filter(|(_, s)| s.name() == name).count();
    let (copied, there, conflicts, failed) = (
        count("copied"),
        count("alreadyThere"),
        count("conflict"),
        count("failed"),
    );
    if json {
        let sessions: Vec<_> = results
            .iter()
            .map(|(id, s)| match s {
                Status::Failed(why) => json!({"id": id, "status": s.name(), "error": why}),
                _ => json!({"id": id, "status": s.name()}),
            })
            .collect();
        output::stdout_line(
            &json!({
                "from": from, "to": to, "sessions": sessions,
                "copied": copied, "alreadyThere": there, "conflicts": conflicts, "failed": failed,
            })
            .to_string(),
        );
        return;
    }
    for (id, s) in results {
        let line = match s {
            Status::Copied => format!("copied         {id}"),
            Status::AlreadyThere => format!("already there  {id}"),
            Status::Conflict => format!(
                "conflict       {id}: the target holds a different session under this id; it was left as it is"
            ),
            Status::Failed(why) => format!("failed         {id}: {why}"),
        };
        output::stdout_line(&output::sanitize(&line));
    }
    output::stdout_line(&output::sanitize(&format!(
        "{} session(s) from {from} to {to}: {copied} copied, {there} already there, {conflicts} conflict(s), {failed} failed",
        results.len()
    )));
}
