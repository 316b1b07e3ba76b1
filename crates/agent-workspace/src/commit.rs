//! Commit: a reviewed change set applied to the real folder, all or nothing, never through a
//! link, and exactly as reviewed.
//!
//! 1. The workspace is locked; an interrupted earlier commit is finished first (see
//!    the journal module).
//! 2. Every reviewed path is staged from the shadow into `<state dir>/commit/staged/`
//!    (read beneath the shadow, no link followed) and hashed: a path whose kind, content,
//!    mode or link target is not what the review showed refuses the whole commit
//!    ([`WorkspaceError::ChangedSinceReview`]). Paths changed after the review and not in it
//!    are not touched.
//! 3. Every reviewed path of the real folder is read directly (beneath the real folder: an
//!    `lstat` and a hash, not the ignore-filtered walk) and backed up into
//!    `<state dir>/commit/backup/`. A path that holds neither its base content nor already
//!    the content to write is a conflict (`edited`, `deleted`, or `exists` for a path the
//!    change set adds that exists there, ignored or not); any conflict not forced stops the
//!    commit before anything is written.
//! 4. The journal is written and synced; then missing directories are created, removals
//!    applied, and each write goes to a short fixed-length temporary name in the target's
//!    directory, synced, and renamed over the target. Nothing is resolved through a link or a
//!    reserved name (`.agent`, `.git`).
//! 5. On a failure every applied change is undone from the backups; the error says whether
//!    that succeeded, and if not which paths keep the new version and where their backups are.
//! 6. The base snapshot advances to what was committed, then the journal is removed.

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::beneath::{Beneath, Kind, RESERVED_NAMES};
use super::error::{Conflict, ConflictReason, WorkspaceError, io};
use super::filter::link_stays_inside;
use super::journal::{self, COMMIT_DIR, Journal, Op as JournalOp, Phase, backup_path};
use super::review::Review;
use super::shadow::Workspace;
use super::snapshot::{Entry, EntryKind, same, sha256};
use super::state::State;

/// How to commit.
#[derive(Clone, Debug, Default)]
pub struct CommitOptions {
    /// Paths to apply although they changed in the real folder since import (the shadow's
    /// version wins).
    pub force: Vec<String>,
    /// Fault injection for tests: fail after this many changes were applied.
    #[doc(hidden)]
    pub fail_after: Option<usize>,
    /// Fault injection for tests: SIGKILL the process at this step of the commit (0 = staged
    /// and backed up, before the journal; 1 = just after the journal is written; then each
    /// directory made, each write's content written and each change applied is one step;
    /// then the state saved, then the journal removed).
    #[doc(hidden)]
    pub kill_at: Option<usize>,
    /// Fault injection for tests: undoing this path fails when a failed commit rolls back.
    #[doc(hidden)]
    pub fail_undo: Option<String>,
}

/// What a commit did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitReport {
    /// Paths written or removed in the real folder.
    pub applied: Vec<String>,
    /// Conflicts that were forced.
    pub forced: Vec<String>,
}

impl CommitReport {
    /// The `workspace.commit` event of a commit that happened (forced paths were applied, so
    /// they are not among its `conflicts`).
    pub fn event(&self) -> agent_core::events::WorkspaceCommit {
        agent_core::events::WorkspaceCommit {
            applied: self.applied.clone(),
            conflicts: Vec::new(),
        }
    }

    /// The `workspace.commit` event of a commit refused because of `conflicts` (nothing
    /// applied).
    pub fn refused_event(conflicts: &[Conflict]) -> agent_core::events::WorkspaceCommit {
        agent_core::events::WorkspaceCommit {
            applied: Vec::new(),
            conflicts: conflicts.iter().map(|c| c.path.clone()).collect(),
        }
    }
}

/// The fault-injection counter of one commit.
struct Steps {
    kill_at: Option<usize>,
    n: usize,
}

impl Steps {
    fn step(&mut self) {
        if self.kill_at == Some(self.n) {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::KILL,
            );
        }
        self.n += 1;
    }
}

impl Workspace {
    /// Reviews the shadow and commits that review at once ([`Workspace::review`], then
    /// [`Workspace::commit_review`]); for callers that show nothing in between.
    ///
    /// # Errors
    /// As [`Workspace::commit_review`].
    pub fn commit(&mut self, opts: &CommitOptions) -> Result<CommitReport, WorkspaceError> {
        let review = self.review()?;
        self.commit_review(&review, opts)
    }

    /// Applies exactly `review` to the real folder (see the module docs): the reviewed
    /// content, hash for hash, and nothing changed after it.
    ///
    /// # Errors
    /// [`WorkspaceError::ChangedSinceReview`] (nothing written) when reviewed paths changed in
    /// the shadow since; [`WorkspaceError::Conflicts`] (nothing written) when touched paths
    /// changed in the real folder and were not forced; [`WorkspaceError::NotBeneath`]
    /// (nothing written) when a path would be reached through a link or is reserved;
    /// [`WorkspaceError::RolledBack`] when applying failed part-way and every applied change
    /// was undone; [`WorkspaceError::RollbackIncomplete`] when some could not be undone.
    pub fn commit_review(
        &mut self,
        review: &Review,
        opts: &CommitOptions,
    ) -> Result<CommitReport, WorkspaceError> {
        let _lock = journal::lock(&self.dir)?;
        if journal::recover_locked(&self.dir)?.is_some() {
            self.state = State::load(&self.dir)?;
        }
        if review.is_empty() {
            return Ok(CommitReport::default());
        }
        let stale: Vec<String> = review
            .paths()
            .iter()
            .filter(|p| !same(self.state.base.get(&p.path), p.base.as_ref()))
            .map(|p| p.path.clone())
            .collect();
        if !stale.is_empty() {
            return Err(WorkspaceError::ChangedSinceReview(stale));
        }
        let cdir = self.dir.join(COMMIT_DIR);
        let _ = std::fs::remove_dir_all(&cdir);
        for d in [cdir.join("staged"), cdir.join("backup")] {
            std::fs::create_dir_all(&d).map_err(io(&d))?;
        }
        let planned = self.plan(review, opts, &cdir);
        let (journal, forced) = match planned {
            Ok(p) => p,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&cdir);
                return Err(e);
            }
        };
        let real = Beneath::open(&self.state.real, RESERVED_NAMES)?;
        let mut steps = Steps {
            kill_at: opts.kill_at,
            n: 0,
        };
        // The staged copies and backups are durable before the journal that refers to them.
        sync_fs(&cdir)?;
        steps.step();
        journal.save(&cdir)?;
        steps.step();
        let run = journal.run(&real, &cdir, opts.fail_after, &mut || steps.step());
        if let Err(failure) = run {
            let (applied, path, why) = (failure.applied, failure.path, failure.why);
            let mut journal = journal;
            journal.phase = Phase::RollBack;
            journal.save(&cdir)?;
            let mut failed = journal.roll_back(applied, &real, &cdir, opts.fail_undo.as_deref());
            if failed.is_empty() {
                journal::finish(&cdir)?;
                return Err(WorkspaceError::RolledBack { path, why });
            }
            let backups = journal::keep(&cdir, &journal.id, &mut failed);
            return Err(WorkspaceError::RollbackIncomplete {
                path,
                why,
                unrestored: failed,
                backups,
            });
        }
        real.sync_fs()?;
        journal.advance(&mut self.state.base, &real);
        self.state.save(&self.dir)?;
        steps.step();
        journal::finish(&cdir)?;
        steps.step();
        Ok(CommitReport {
            applied: journal.paths(),
            forced,
        })
    }

    /// Steps 2 and 3 of the module docs: stages and verifies the shadow's side, reads and
    /// backs up the real side, finds conflicts; returns the journal to apply.
    fn plan(
        &self,
        review: &Review,
        opts: &CommitOptions,
        cdir: &Path,
    ) -> Result<(Journal, Vec<String>), WorkspaceError> {
        let shadow = Beneath::open(&self.state.shadow, RESERVED_NAMES)?;
        let real = Beneath::open(&self.state.real, RESERVED_NAMES)?;
        for p in review.paths() {
            if let Some(Entry {
                kind: EntryKind::Symlink { target },
                ..
            }) = &p.new
                && !link_stays_inside(&p.path, target)
            {
                return Err(WorkspaceError::Invalid(format!(
                    "{} in the shadow is a symlink to {target}, outside the workspace; remove it or replace it with a file, then commit again",
                    p.path
                )));
            }
        }
        let mut changed = Vec::new();
        for (slot, p) in review.paths().iter().enumerate() {
            let now = read_entry(
                &shadow,
                &p.path,
                Some(cdir.join("staged").join(slot.to_string())),
            )
            .unwrap_or(Some(Unreadable));
            if !same_content(p.new.as_ref(), now.as_ref()) {
                changed.push(p.path.clone());
            }
        }
        if !changed.is_empty() {
            return Err(WorkspaceError::ChangedSinceReview(changed));
        }
        let mut conflicts = Vec::new();
        let mut forced = Vec::new();
        let mut ops = Vec::new();
        for (slot, p) in review.paths().iter().enumerate() {
            let now = read_entry(&real, &p.path, Some(backup_path(cdir, slot)))?;
            let before = match now {
                Some(Dir | Unreadable) => {
                    return Err(WorkspaceError::Invalid(format!(
                        "{} is a directory or a special file in the real folder; move it away, then commit again",
                        self.state.real.join(&p.path).display()
                    )));
                }
                Some(Read(e)) => Some(e),
                None => None,
            };
            let as_base = same(p.base.as_ref(), before.as_ref());
            let as_new = same(p.new.as_ref(), before.as_ref());
            if !(as_base || as_new) {
                if opts.force.iter().any(|f| f.trim_end_matches('/') == p.path) {
                    forced.push(p.path.clone());
                } else {
                    let why = match (&p.base, &before) {
                        (Some(_), None) => ConflictReason::Deleted,
                        (None, Some(_)) => ConflictReason::Exists,
                        _ => ConflictReason::Edited,
                    };
                    conflicts.push(Conflict {
                        path: p.path.clone(),
                        why,
                    });
                }
            }
            ops.push(JournalOp {
                path: p.path.clone(),
                slot,
                before,
                new: p.new.clone(),
            });
        }
        if !conflicts.is_empty() {
            return Err(WorkspaceError::Conflicts(conflicts));
        }
        // Removals first (so a file can replace a directory's last file), then writes.
        ops.sort_by_key(|o| o.new.is_some());
        let removed: Vec<&str> = ops
            .iter()
            .filter(|o| o.new.is_none())
            .map(|o| o.path.as_str())
            .collect();
        let mut dirs: Vec<String> = Vec::new();
        for op in ops.iter().filter(|o| o.new.is_some()) {
            let parts: Vec<&str> = op.path.split('/').collect();
            for i in 1..parts.len() {
                let dir = parts[..i].join("/");
                if dirs.contains(&dir) {
                    continue;
                }
                match real.lstat(&dir)? {
                    Some(m) if m.kind == Kind::Dir => {}
                    Some(_) if removed.contains(&dir.as_str()) => dirs.push(dir),
                    Some(_) => {
                        return Err(WorkspaceError::NotBeneath {
                            path: self.state.real.join(&dir),
                            why: format!(
                                "is not a directory, so {} cannot be written under it; move it away, then commit again",
                                op.path
                            ),
                        });
                    }
                    None => dirs.push(dir),
                }
            }
        }
        let journal = Journal {
            version: 1,
            id: commit_id(&self.dir),
            phase: Phase::Apply,
            dirs,
            ops,
        };
        Ok((journal, forced))
    }
}

/// What reading one path found.
enum Found {
    /// A file or link, as an entry (mtimes 0).
    Read(Entry),
    /// A directory (in the shadow: the file that was there is gone, a directory took its
    /// place).
    Dir,
    /// A special file, or a path that cannot be read.
    Unreadable,
}
use Found::{Dir, Read, Unreadable};

/// Reads `rel` beneath `root` without following links: a file is copied to `copy` while it
/// is hashed, a link's target is read; `None` when absent.
fn read_entry(
    root: &Beneath,
    rel: &str,
    copy: Option<PathBuf>,
) -> Result<Option<Found>, WorkspaceError> {
    let Some(meta) = root.lstat(rel)? else {
        return Ok(None);
    };
    match meta.kind {
        Kind::Symlink => {
            let target = root.read_link(rel)?;
            Ok(Some(Read(Entry {
                size: target.len() as u64,
                sha256: sha256(target.as_bytes()),
                kind: EntryKind::Symlink { target },
                mode: 0,
                real_mtime: 0,
                shadow_mtime: 0,
            })))
        }
        Kind::File => {
            use std::io::{Read as _, Write as _};
            let mut file = root.open_read(rel)?;
            let path = root.path().join(rel);
            let mode = {
                use std::os::unix::fs::MetadataExt as _;
                file.metadata().map_err(io(&path))?.mode() & 0o7777
            };
            let mut out = match &copy {
                Some(c) => Some(std::fs::File::create(c).map_err(io(c))?),
                None => None,
            };
            let mut hasher = Sha256::new();
            let mut buf = vec![0u8; 1 << 16];
            let mut size = 0u64;
            loop {
                let n = file.read(&mut buf).map_err(io(&path))?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                size += n as u64;
                if let (Some(o), Some(c)) = (out.as_mut(), &copy) {
                    o.write_all(&buf[..n]).map_err(io(c))?;
                }
            }
            Ok(Some(Read(Entry {
                kind: EntryKind::File,
                size,
                mode,
                sha256: hex::encode(hasher.finalize()),
                real_mtime: 0,
                shadow_mtime: 0,
            })))
        }
        Kind::Dir => Ok(Some(Dir)),
        Kind::Other => Ok(Some(Unreadable)),
    }
}

/// Whether what was read is exactly `want` (kind, content, mode), or both absent.
fn same_content(want: Option<&Entry>, got: Option<&Found>) -> bool {
    match (want, got) {
        (None, None | Some(Dir)) => true,
        (Some(w), Some(Read(g))) => same(Some(w), Some(g)),
        _ => false,
    }
}

/// `syncfs` of the filesystem holding `dir`.
fn sync_fs(dir: &Path) -> Result<(), WorkspaceError> {
    let d = std::fs::File::open(dir).map_err(io(dir))?;
    rustix::fs::syncfs(&d).map_err(|e| io(dir)(e.into()))
}

/// A commit id: 8 hex digits from the time, the process and the state directory.
fn commit_id(dir: &Path) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos}-{}-{}", std::process::id(), dir.display());
    sha256(seed.as_bytes())[..8].to_owned()
}
