//! Commit: the reviewed change set applied to the real folder, all or nothing.
//!
//! 1. The real folder is snapshotted again; every path the change set touches that changed
//!    there since the base (edited, deleted, or created) is a conflict, and any conflict not
//!    forced stops the commit before anything is written.
//! 2. Each real file about to be replaced or removed is copied into a backup directory.
//! 3. Each change is applied: a write goes to a temporary file beside the target, then is
//!    renamed over it (so a reader never sees half a file); a removal removes. A path whose
//!    parent in the real folder is a symlink is refused, so nothing is written outside it.
//! 4. On any failure, every change already applied is undone from the backups, in reverse.
//! 5. The base snapshot advances to what was committed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::changes::ChangeKind;
use super::error::{WorkspaceError, io};
use super::shadow::{Workspace, link_stays_inside, same};
use super::snapshot::{Entry, EntryKind, mtime};

/// How to commit.
#[derive(Clone, Debug, Default)]
pub struct CommitOptions {
    /// Paths to apply although they changed in the real folder since import (the shadow's
    /// version wins).
    pub force: Vec<String>,
    /// Fault injection for tests: fail after this many changes were applied.
    #[doc(hidden)]
    pub fail_after: Option<usize>,
}

/// A path that changed in the real folder since the base.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The path.
    pub path: String,
    /// How it changed there: `edited`, `deleted` or `created`.
    pub why: String,
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

enum Op {
    Write(String),
    Remove(String),
}

impl Op {
    fn rel(&self) -> &str {
        match self {
            Op::Write(r) | Op::Remove(r) => r,
        }
    }
}

/// What one applied change replaced, to undo it.
struct Undo {
    rel: String,
    backup: Option<PathBuf>,
}

impl Workspace {
    /// Applies the change set to the real folder (see the module docs).
    ///
    /// # Errors
    /// [`WorkspaceError::Conflicts`] (nothing written) when touched paths changed in the real
    /// folder and were not forced; [`WorkspaceError::Invalid`] for a shadow symlink pointing
    /// outside the tree; [`WorkspaceError::RolledBack`] when applying failed part-way (every
    /// applied change undone).
    pub fn commit(&mut self, opts: &CommitOptions) -> Result<CommitReport, WorkspaceError> {
        let set = self.status()?;
        let real_now = self.real_snapshot()?;
        let shadow_now = self.shadow_snapshot()?;
        let mut conflicts = Vec::new();
        let mut forced = Vec::new();
        for rel in set.touched() {
            let base = self.state.base.get(&rel);
            let real = real_now.get(&rel);
            if same(base, real) {
                continue;
            }
            if opts.force.iter().any(|f| f.trim_end_matches('/') == rel) {
                forced.push(rel);
                continue;
            }
            let why = match (base, real) {
                (Some(_), None) => "deleted",
                (None, Some(_)) => "created",
                _ => "edited",
            };
            conflicts.push(Conflict {
                path: rel,
                why: why.into(),
            });
        }
        if !conflicts.is_empty() {
            return Err(WorkspaceError::Conflicts(conflicts));
        }
        let mut ops = Vec::new();
        for c in &set.changes {
            match &c.kind {
                ChangeKind::Deleted => ops.push(Op::Remove(c.path.clone())),
                ChangeKind::Renamed { from } => {
                    ops.push(Op::Write(c.path.clone()));
                    ops.push(Op::Remove(from.clone()));
                }
                _ => ops.push(Op::Write(c.path.clone())),
            }
        }
        for op in &ops {
            if let Op::Write(rel) = op
                && let Some(Entry {
                    kind: EntryKind::Symlink { target },
                    ..
                }) = shadow_now.get(rel)
                && !link_stays_inside(rel, target)
            {
                return Err(WorkspaceError::Invalid(format!(
                    "{rel} in the shadow is a symlink to {target}, outside the workspace; remove it or replace it with a file, then commit again"
                )));
            }
        }
        let backup_dir = self
            .dir
            .join(format!("commit-{}-{}", std::process::id(), mtime_now()));
        std::fs::create_dir_all(&backup_dir).map_err(io(&backup_dir))?;
        let mut done: Vec<Undo> = Vec::new();
        let mut created_dirs: Vec<PathBuf> = Vec::new();
        let mut failure = None;
        for (i, op) in ops.iter().enumerate() {
            if opts.fail_after == Some(i) {
                failure = Some((
                    op.rel().to_owned(),
                    "simulated failure (fault injection)".to_owned(),
                ));
                break;
            }
            match self.apply(op, &backup_dir, i, &mut created_dirs) {
                Ok(undo) => done.push(undo),
                Err(e) => {
                    failure = Some((op.rel().to_owned(), e.to_string()));
                    break;
                }
            }
        }
        if let Some((path, why)) = failure {
            let undo_errors = self.undo(done, &created_dirs);
            let _ = std::fs::remove_dir_all(&backup_dir);
            let why = if undo_errors.is_empty() {
                why
            } else {
                format!("{why}; undoing also failed for {}", undo_errors.join(", "))
            };
            return Err(WorkspaceError::RolledBack { path, why });
        }
        let _ = std::fs::remove_dir_all(&backup_dir);
        // Advance the base to what was committed.
        let mut applied = Vec::new();
        for op in &ops {
            let rel = op.rel().to_owned();
            match op {
                Op::Write(_) => {
                    if let Some(s) = shadow_now.get(&rel) {
                        let mut e = s.clone();
                        let real_path = self.state.real.join(&rel);
                        e.real_mtime = std::fs::symlink_metadata(&real_path)
                            .map(|m| mtime(&m))
                            .unwrap_or(0);
                        self.state.base.insert(rel.clone(), e);
                    }
                }
                Op::Remove(_) => {
                    self.state.base.remove(&rel);
                }
            }
            applied.push(rel);
        }
        self.state.save(&self.dir)?;
        Ok(CommitReport { applied, forced })
    }

    fn apply(
        &self,
        op: &Op,
        backup_dir: &Path,
        index: usize,
        created_dirs: &mut Vec<PathBuf>,
    ) -> Result<Undo, WorkspaceError> {
        let rel = op.rel();
        let target = self.state.real.join(rel);
        self.check_parents(rel)?;
        let backup = match std::fs::symlink_metadata(&target) {
            Ok(meta) => {
                let b = backup_dir.join(index.to_string());
                if meta.file_type().is_symlink() {
                    let t = std::fs::read_link(&target).map_err(io(&target))?;
                    std::os::unix::fs::symlink(t, &b).map_err(io(&b))?;
                } else if meta.is_file() {
                    std::fs::copy(&target, &b).map_err(io(&b))?;
                } else {
                    return Err(WorkspaceError::Invalid(format!(
                        "{rel} is a directory in the real folder; move it away, then commit again"
                    )));
                }
                Some(b)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(&target)(e)),
        };
        match op {
            Op::Remove(_) => {
                if backup.is_some() {
                    std::fs::remove_file(&target).map_err(io(&target))?;
                }
            }
            Op::Write(_) => {
                if let Some(parent) = target.parent() {
                    let mut missing = Vec::new();
                    let mut p = parent.to_path_buf();
                    while !p.exists() && p.starts_with(&self.state.real) {
                        missing.push(p.clone());
                        if !p.pop() {
                            break;
                        }
                    }
                    std::fs::create_dir_all(parent).map_err(io(parent))?;
                    missing.reverse();
                    created_dirs.extend(missing);
                }
                let source = self.state.shadow.join(rel);
                let tmp = target.with_file_name(format!(
                    ".{}.agent-commit-{}",
                    target
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    std::process::id()
                ));
                let meta = std::fs::symlink_metadata(&source).map_err(io(&source))?;
                if meta.file_type().is_symlink() {
                    let t = std::fs::read_link(&source).map_err(io(&source))?;
                    let _ = std::fs::remove_file(&tmp);
                    std::os::unix::fs::symlink(t, &tmp).map_err(io(&tmp))?;
                } else {
                    std::fs::copy(&source, &tmp).map_err(io(&tmp))?;
                    std::fs::set_permissions(
                        &tmp,
                        std::fs::Permissions::from_mode(meta.permissions().mode() & 0o7777),
                    )
                    .map_err(io(&tmp))?;
                }
                if let Err(e) = std::fs::rename(&tmp, &target) {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(io(&target)(e));
                }
            }
        }
        Ok(Undo {
            rel: rel.to_owned(),
            backup,
        })
    }

    /// Refuses a path with a parent that is not a plain directory in the real folder.
    fn check_parents(&self, rel: &str) -> Result<(), WorkspaceError> {
        let mut p = self.state.real.clone();
        let parts: Vec<&str> = rel.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            p.push(part);
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(WorkspaceError::Invalid(format!(
                        "{} is a symlink in the real folder; refusing to write {rel} through it",
                        p.display()
                    )));
                }
                Ok(m) if !m.is_dir() => {
                    return Err(WorkspaceError::Invalid(format!(
                        "{} is not a directory in the real folder",
                        p.display()
                    )));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Undoes applied changes in reverse; returns the paths that could not be restored.
    fn undo(&self, done: Vec<Undo>, created_dirs: &[PathBuf]) -> Vec<String> {
        let mut errors = Vec::new();
        for u in done.into_iter().rev() {
            let target = self.state.real.join(&u.rel);
            let result = match &u.backup {
                Some(b) => restore(b, &target),
                None => match std::fs::remove_file(&target) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                },
            };
            if result.is_err() {
                errors.push(u.rel);
            }
        }
        for d in created_dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        errors
    }
}

/// Puts a backup back in place (temporary file, then rename).
fn restore(backup: &Path, target: &Path) -> std::io::Result<()> {
    let tmp = target.with_extension("agent-restore");
    let meta = std::fs::symlink_metadata(backup)?;
    if meta.file_type().is_symlink() {
        let t = std::fs::read_link(backup)?;
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(t, &tmp)?;
    } else {
        std::fs::copy(backup, &tmp)?;
    }
    std::fs::rename(&tmp, target)
}

fn mtime_now() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}
