//! The commit journal: `<state dir>/commit/journal`, written (and synced) before a commit's
//! first change to the real folder, removed after its last. It lists every change (the path,
//! what the real folder held there before, what the commit writes), the directories the commit
//! creates, and the commit's id, which is part of every temporary name it uses in the real
//! folder. The content to write is staged in `commit/staged/<n>`, the real files it replaces
//! are backed up in `commit/backup/<n>` (links need no backup: their target is in the
//! journal).
//!
//! Any later operation that opens the workspace ([`recover`]) finds an unfinished journal and
//! finishes it: phase `apply` (the commit was confirmed and everything it writes is staged and
//! verified) rolls forward; phase `rollBack` (a failure was being undone) rolls back. Both are
//! idempotent, so a crash during recovery is recovered the same way. A `commit/` directory
//! without a journal was still staging: the real folder was not touched, it is removed.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::beneath::{Beneath, RESERVED_NAMES};
use super::error::{Unrestored, WorkspaceError, io};
use super::snapshot::Entry;
use super::snapshot::{EntryKind, Snapshot};
use super::state::State;

/// The directory of a running commit, under the workspace's state directory.
pub(crate) const COMMIT_DIR: &str = "commit";
/// The journal's name inside [`COMMIT_DIR`].
const JOURNAL: &str = "journal";
/// The lock file (under the state directory) held by a commit and by recovery.
const LOCK: &str = "lock";

/// Where a commit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Phase {
    /// Applying: recovery rolls forward.
    Apply,
    /// Undoing after a failure: recovery rolls back.
    RollBack,
}

/// One change of a journal.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Op {
    /// The path in the real folder.
    pub path: String,
    /// Its staging and backup slot (`staged/<slot>`, `backup/<slot>`).
    pub slot: usize,
    /// What the real folder held before (`None`: nothing).
    pub before: Option<Entry>,
    /// What the commit writes (`None`: it removes the path).
    pub new: Option<Entry>,
}

/// A commit's journal.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Journal {
    /// Format version (1).
    pub version: u32,
    /// 8 hex digits, part of every temporary name in the real folder.
    pub id: String,
    /// Apply or roll back.
    pub phase: Phase,
    /// Directories the commit creates in the real folder, outermost first.
    pub dirs: Vec<String>,
    /// The changes, in the order they are applied (removals first, then writes).
    pub ops: Vec<Op>,
}

/// What recovery did with an unfinished commit found when the workspace was opened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome", content = "paths")]
#[non_exhaustive]
pub enum Recovery {
    /// The interrupted commit was finished: these paths now hold the reviewed content.
    Finished(Vec<String>),
    /// The interrupted commit was rolled back: these paths are as they were before it.
    RolledBack(Vec<String>),
    /// The commit was interrupted while staging, before it changed the real folder; its
    /// staging area was removed.
    Discarded,
}

impl Journal {
    /// The temporary name of op `n` in its directory: short and of fixed length, whatever
    /// the target's name, and unique to this commit.
    pub fn tmp_name(&self, n: usize) -> String {
        format!(".agent-{}{n:08x}", self.id)
    }

    /// Writes the journal atomically and durably into `cdir`.
    pub fn save(&self, cdir: &Path) -> Result<(), WorkspaceError> {
        let path = cdir.join(JOURNAL);
        let tmp = cdir.join("journal.tmp");
        let bytes = serde_json::to_vec(self).map_err(|e| WorkspaceError::State {
            path: path.clone(),
            why: e.to_string(),
        })?;
        let mut f = File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(&bytes).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        sync_dir(cdir)
    }

    fn load(cdir: &Path) -> Result<Option<Self>, WorkspaceError> {
        let path = cdir.join(JOURNAL);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path)(e)),
        };
        let j: Self = serde_json::from_slice(&bytes).map_err(|e| WorkspaceError::State {
            path: path.clone(),
            why: e.to_string(),
        })?;
        if j.version != 1 {
            return Err(WorkspaceError::State {
                path,
                why: format!("journal format {} is not known to this build", j.version),
            });
        }
        Ok(Some(j))
    }

    /// `rel`'s sibling named `name`.
    fn sibling(rel: &str, name: &str) -> String {
        match rel.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{name}"),
            None => name.to_owned(),
        }
    }

    /// Removes the temporary files this commit may have left in the real folder.
    pub fn clean_tmps(&self, real: &Beneath) {
        for (n, op) in self.ops.iter().enumerate() {
            let _ = real.remove(&Self::sibling(&op.path, &self.tmp_name(n)));
        }
    }

    /// The index of the first write: removals come before it, and the directories are made
    /// just before it.
    fn first_write(&self) -> usize {
        self.ops
            .iter()
            .position(|o| o.new.is_some())
            .unwrap_or(self.ops.len())
    }

    /// Applies every op in order: the removals, then the directories the commit needs
    /// (outermost first), then the writes. `step` runs after each directory, after each
    /// write's content is written (before its rename) and after each op. Fails (with how many
    /// ops were applied) at the first error, or before op `fail_after` (fault injection).
    pub fn run(
        &self,
        real: &Beneath,
        cdir: &Path,
        fail_after: Option<usize>,
        step: &mut dyn FnMut(),
    ) -> Result<(), RunFailure> {
        let first_write = self.first_write();
        for n in 0..=self.ops.len() {
            if n == first_write {
                for d in &self.dirs {
                    real.mkdir(d).map_err(|e| RunFailure {
                        applied: n,
                        path: d.clone(),
                        why: e.to_string(),
                    })?;
                    step();
                }
            }
            let Some(op) = self.ops.get(n) else { break };
            if fail_after == Some(n) {
                return Err(RunFailure {
                    applied: n,
                    path: op.path.clone(),
                    why: "simulated failure (fault injection)".into(),
                });
            }
            self.apply(n, real, cdir, step).map_err(|e| RunFailure {
                applied: n,
                path: op.path.clone(),
                why: e.to_string(),
            })?;
            step();
        }
        Ok(())
    }

    /// Removes the directories the commit created, innermost first (only while empty).
    pub fn remove_dirs(&self, real: &Beneath) {
        for d in self.dirs.iter().rev() {
            let _ = real.remove_dir(d);
        }
    }

    /// Applies op `n` to the real folder: writes its staged content, or removes it. `step`
    /// runs once the content is written and synced, before it is renamed into place.
    pub fn apply(
        &self,
        n: usize,
        real: &Beneath,
        cdir: &Path,
        step: &mut dyn FnMut(),
    ) -> Result<(), WorkspaceError> {
        let op = &self.ops[n];
        match &op.new {
            None => {
                real.remove(&op.path)?;
            }
            Some(Entry {
                kind: EntryKind::Symlink { target },
                ..
            }) => {
                step();
                real.symlink_atomic(&op.path, &self.tmp_name(n), target)?;
            }
            Some(e) => {
                let staged = cdir.join("staged").join(op.slot.to_string());
                let mut from = File::open(&staged).map_err(io(&staged))?;
                real.write_atomic(&op.path, &self.tmp_name(n), e.mode, &mut |f| {
                    std::io::copy(&mut from, f)?;
                    step();
                    Ok(())
                })?;
            }
        }
        Ok(())
    }

    /// Puts back what op `n` replaced (its backup, its link, or nothing).
    pub fn undo(&self, n: usize, real: &Beneath, cdir: &Path) -> Result<(), WorkspaceError> {
        let op = &self.ops[n];
        match &op.before {
            None => {
                real.remove(&op.path)?;
            }
            Some(Entry {
                kind: EntryKind::Symlink { target },
                ..
            }) => real.symlink_atomic(&op.path, &self.tmp_name(n), target)?,
            Some(e) => {
                let backup = backup_path(cdir, op.slot);
                let mut from = File::open(&backup).map_err(io(&backup))?;
                real.create_parents(&op.path)?;
                real.write_atomic(&op.path, &self.tmp_name(n), e.mode, &mut |f| {
                    std::io::copy(&mut from, f).map(|_| ())
                })?;
            }
        }
        Ok(())
    }

    /// Undoes ops `0..applied` in reverse (the writes, then the created directories while
    /// empty, then the removals); returns what could not be restored. Undoing `fail_undo`
    /// fails (fault injection).
    pub fn roll_back(
        &self,
        applied: usize,
        real: &Beneath,
        cdir: &Path,
        fail_undo: Option<&str>,
    ) -> Vec<Unrestored> {
        let mut failed = Vec::new();
        let first_write = self.first_write();
        let mut dirs_removed = false;
        for n in (0..applied.min(self.ops.len())).rev() {
            if n < first_write && !dirs_removed {
                self.remove_dirs(real);
                dirs_removed = true;
            }
            let undone = if fail_undo == Some(self.ops[n].path.as_str()) {
                Err(WorkspaceError::Invalid(
                    "simulated failure (fault injection)".into(),
                ))
            } else {
                self.undo(n, real, cdir)
            };
            if let Err(e) = undone {
                let op = &self.ops[n];
                let backup = match &op.before {
                    Some(Entry {
                        kind: EntryKind::File,
                        ..
                    }) => Some(backup_path(cdir, op.slot)),
                    _ => None,
                };
                failed.push(Unrestored {
                    path: op.path.clone(),
                    backup,
                    why: e.to_string(),
                });
            }
        }
        if !dirs_removed {
            self.remove_dirs(real);
        }
        self.clean_tmps(real);
        failed
    }

    /// The base snapshot after this commit: each written path as written (with the real
    /// folder's mtime now), each removed path gone.
    pub fn advance(&self, base: &mut Snapshot, real: &Beneath) {
        for op in &self.ops {
            match &op.new {
                Some(e) => {
                    let mut e = e.clone();
                    e.real_mtime = real.lstat(&op.path).ok().flatten().map_or(0, |m| m.mtime);
                    base.insert(op.path.clone(), e);
                }
                None => {
                    base.remove(&op.path);
                }
            }
        }
    }

    /// The paths of this journal.
    pub fn paths(&self) -> Vec<String> {
        let mut p: Vec<String> = self.ops.iter().map(|o| o.path.clone()).collect();
        p.sort();
        p
    }
}

/// Where and why applying a journal stopped.
#[derive(Debug)]
pub(crate) struct RunFailure {
    /// How many ops were applied before it.
    pub applied: usize,
    /// The path (or directory) being applied.
    pub path: String,
    /// What failed.
    pub why: String,
}

/// Where slot `n`'s backup lives.
pub(crate) fn backup_path(cdir: &Path, n: usize) -> PathBuf {
    cdir.join("backup").join(n.to_string())
}

/// Ends a commit: the journal goes first (so a half-removed staging area is never replayed),
/// then the rest.
pub(crate) fn finish(cdir: &Path) -> Result<(), WorkspaceError> {
    match std::fs::remove_file(cdir.join(JOURNAL)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(cdir.join(JOURNAL))(e)),
    }
    sync_dir(cdir)?;
    std::fs::remove_dir_all(cdir).map_err(io(cdir))
}

/// Keeps a failed commit's directory (its backups) as `failed-<id>` beside it, out of
/// recovery's way, and points each unrestored path's backup there; returns where.
pub(crate) fn keep(cdir: &Path, id: &str, failed: &mut [Unrestored]) -> PathBuf {
    let kept = cdir.with_file_name(format!("failed-{id}"));
    let _ = std::fs::rename(cdir.join(JOURNAL), cdir.join("journal.failed"));
    if std::fs::rename(cdir, &kept).is_err() {
        return cdir.to_path_buf();
    }
    for u in failed {
        if let Some(b) = &u.backup
            && let Ok(rest) = b.strip_prefix(cdir)
        {
            u.backup = Some(kept.join(rest));
        }
    }
    kept
}

fn sync_dir(dir: &Path) -> Result<(), WorkspaceError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

/// An exclusive lock on a workspace's state directory, held while a commit runs or is
/// recovered; released when dropped (or when the process dies).
pub(crate) struct Lock(#[allow(dead_code, reason = "held for its drop")] File);

/// Takes the lock of the workspace whose state is in `dir` (waits for a running commit).
pub(crate) fn lock(dir: &Path) -> Result<Lock, WorkspaceError> {
    let path = dir.join(LOCK);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io(&path))?;
    rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive).map_err(|e| {
        WorkspaceError::Io {
            path: path.clone(),
            source: e.into(),
        }
    })?;
    Ok(Lock(f))
}

/// Finishes (or rolls back) a commit of the workspace in `dir` that was interrupted; `None`
/// when there was none. The caller holds the [`lock`].
pub(crate) fn recover_locked(dir: &Path) -> Result<Option<Recovery>, WorkspaceError> {
    let cdir = dir.join(COMMIT_DIR);
    if !cdir.exists() {
        return Ok(None);
    }
    let Some(mut journal) = Journal::load(&cdir)? else {
        std::fs::remove_dir_all(&cdir).map_err(io(&cdir))?;
        return Ok(Some(Recovery::Discarded));
    };
    let mut state = State::load(dir)?;
    let real = Beneath::open(&state.real, RESERVED_NAMES)?;
    journal.clean_tmps(&real);
    if journal.phase == Phase::Apply {
        let forward = journal.run(&real, &cdir, None, &mut || {});
        match forward {
            Ok(()) => {
                real.sync_fs()?;
                journal.advance(&mut state.base, &real);
                state.save(dir)?;
                finish(&cdir)?;
                return Ok(Some(Recovery::Finished(journal.paths())));
            }
            Err(e) => {
                tracing::warn!(
                    "finishing an interrupted commit failed at {}: {}; rolling it back",
                    e.path,
                    e.why
                );
                journal.phase = Phase::RollBack;
                journal.save(&cdir)?;
            }
        }
    }
    let mut failed = journal.roll_back(journal.ops.len(), &real, &cdir, None);
    if failed.is_empty() {
        finish(&cdir)?;
        return Ok(Some(Recovery::RolledBack(journal.paths())));
    }
    let backups = keep(&cdir, &journal.id, &mut failed);
    Err(WorkspaceError::RollbackIncomplete {
        path: "(an interrupted commit)".into(),
        why: "it could not be finished".into(),
        unrestored: failed,
        backups,
    })
}

/// [`recover_locked`] under the lock, when a commit directory exists.
pub(crate) fn recover(dir: &Path) -> Result<Option<Recovery>, WorkspaceError> {
    if !dir.join(COMMIT_DIR).exists() {
        return Ok(None);
    }
    let _lock = lock(dir)?;
    recover_locked(dir)
}
