//! [`Workspace`]: a real folder, its shadow copy, and the base snapshot between them.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::beneath::{Beneath, Kind, RESERVED_NAMES, reserved};
use super::changes::{
    Change, ChangeKind, ChangeSet, Content, DIFF_LIMIT, Summary, content, looks_binary, prefix,
    summary, unified,
};
use super::error::{WorkspaceError, io};
use super::filter::{link_stays_inside, walk};
use super::git::{self, GitReport};
use super::journal::{self, Recovery};
use super::quote::quote_path;
use super::snapshot::{Entry, EntryKind, Snapshot, same, sha256, sha256_file};
use super::state::{State, dir_for, find_by_shadow};

/// The block size of copies: each file is read once, block by block, hashed and written.
const COPY_BLOCK: usize = 256 << 10;

/// How to import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Where workspace state lives (the CLI's is `$AGENT_HOME/workspaces`,
    /// [`agent_core::home::AgentHome::workspaces`]).
    pub state_root: PathBuf,
    /// Where the shadow tree goes (default `<state dir>/tree`); must be empty or absent and
    /// must not overlap the real folder.
    pub shadow: Option<PathBuf>,
}

/// What an import (or a discard) did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// Files and links copied.
    pub files: u64,
    /// Bytes copied.
    pub bytes: u64,
    /// Symlinks left out because their target is outside the real folder (never followed).
    pub skipped_links: Vec<String>,
    /// The shadow's own `.git`, when the real folder is a Git repository (docs/workspace.md,
    /// Git in the shadow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git: Option<GitReport>,
}

/// What a refresh did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RefreshReport {
    /// Paths brought from the real folder into the shadow.
    pub pulled: Vec<String>,
    /// Paths changed on both sides, left as they are in the shadow.
    pub conflicts: Vec<String>,
    /// Set when the real repository's HEAD moved since the shadow's `.git` was made: refresh
    /// does not move the shadow's refs (docs/workspace.md, Git in the shadow); this says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
}

/// A shadow workspace: the agent works in [`Workspace::shadow`]; the real folder changes only
/// through [`Workspace::commit`](super::Workspace::commit).
#[derive(Clone, Debug)]
pub struct Workspace {
    pub(super) dir: PathBuf,
    pub(super) state: State,
    pub(super) recovered: Option<Recovery>,
}

impl Workspace {
    /// Copies `real` into a new shadow and records the base snapshot.
    ///
    /// # Errors
    /// [`WorkspaceError::Exists`] when `real` already has a workspace, [`WorkspaceError::Invalid`]
    /// for a folder that is missing or overlaps the shadow, [`WorkspaceError::Io`] when a file
    /// cannot be copied (the half-made shadow is removed).
    pub fn import(
        real: &Path,
        opts: &ImportOptions,
    ) -> Result<(Self, ImportReport), WorkspaceError> {
        let real = canonical_dir(real, "the folder to import")?;
        let dir = dir_for(&opts.state_root, &real);
        if let Ok(existing) = State::load(&dir) {
            return Err(WorkspaceError::Exists {
                real,
                shadow: existing.shadow,
            });
        }
        let shadow = match &opts.shadow {
            Some(s) => absolute(s)?,
            None => dir.join("tree"),
        };
        if shadow.starts_with(&real) || real.starts_with(&shadow) {
            return Err(WorkspaceError::Invalid(format!(
                "the shadow {} and the real folder {} overlap; put the shadow elsewhere (--shadow DIR)",
                shadow.display(),
                real.display()
            )));
        }
        if std::fs::read_dir(&shadow).is_ok_and(|mut d| d.next().is_some()) {
            return Err(WorkspaceError::Invalid(format!(
                "the shadow directory {} is not empty; name an empty or new directory",
                shadow.display()
            )));
        }
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        restrict(&dir);
        std::fs::create_dir_all(&shadow).map_err(io(&shadow))?;
        let shadow = std::fs::canonicalize(&shadow).map_err(io(&shadow))?;
        let mut state = State {
            version: 1,
            real,
            shadow,
            base: Snapshot::new(),
        };
        let mut report = match copy_in(&state.real, &state.shadow) {
            Ok((base, report)) => {
                state.base = base;
                report
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&state.shadow);
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        state.save(&dir)?;
        report.git = git::setup(&state.real, &state.shadow, &dir)?;
        Ok((
            Self {
                dir,
                state,
                recovered: None,
            },
            report,
        ))
    }

    /// The workspace of `folder`: a real folder that was imported, or a shadow tree. A commit
    /// of it that was interrupted (the process killed, the machine stopped) is finished or
    /// rolled back first, from its journal ([`Workspace::recovered`] says which).
    ///
    /// # Errors
    /// [`WorkspaceError::NotFound`] when there is none, [`WorkspaceError::State`] when its
    /// state cannot be read, [`WorkspaceError::RollbackIncomplete`] when an interrupted
    /// commit could neither be finished nor wholly undone.
    pub fn open(folder: &Path, state_root: &Path) -> Result<Self, WorkspaceError> {
        let folder = canonical_dir(folder, "the workspace folder")?;
        let dir = dir_for(state_root, &folder);
        let dir = if dir.join(super::state::STATE_FILE).exists() {
            dir
        } else {
            find_by_shadow(state_root, &folder).ok_or(WorkspaceError::NotFound(folder))?
        };
        let recovered = journal::recover(&dir)?;
        Ok(Self {
            state: State::load(&dir)?,
            dir,
            recovered,
        })
    }

    /// What opening this workspace did with an interrupted commit (`None`: there was none).
    pub fn recovered(&self) -> Option<&Recovery> {
        self.recovered.as_ref()
    }

    /// The real folder.
    pub fn real(&self) -> &Path {
        &self.state.real
    }

    /// The shadow tree: the root every tool works in.
    pub fn shadow(&self) -> &Path {
        &self.state.shadow
    }

    /// The directory holding this workspace's state.
    pub fn state_dir(&self) -> &Path {
        &self.dir
    }

    /// The base snapshot.
    pub fn base(&self) -> &Snapshot {
        &self.state.base
    }

    /// The shadow as it is now (hashing only files whose size or mtime changed).
    ///
    /// # Errors
    /// [`WorkspaceError::Io`] when the shadow cannot be read.
    pub fn shadow_snapshot(&self) -> Result<Snapshot, WorkspaceError> {
        snapshot(&self.state.shadow, &self.state.base, false)
    }

    /// The real folder as it is now.
    ///
    /// # Errors
    /// [`WorkspaceError::Io`] when it cannot be read.
    pub fn real_snapshot(&self) -> Result<Snapshot, WorkspaceError> {
        snapshot(&self.state.real, &self.state.base, true)
    }

    /// The change set of the shadow against the base.
    ///
    /// # Errors
    /// [`WorkspaceError::Io`] when the shadow cannot be read.
    pub fn status(&self) -> Result<ChangeSet, WorkspaceError> {
        let now = self.shadow_snapshot()?;
        let shadow = self.state.shadow.clone();
        Ok(ChangeSet::between(&self.state.base, &now, &|rel| {
            prefix(&shadow, rel).is_some_and(|d| looks_binary(&d))
        }))
    }

    /// Unified diffs of the change set, or of the changes at or under `path`. The old side is
    /// the real folder's file when it still matches the base; when it changed since import the
    /// diff is against its current content and says so. A change with a side over
    /// [`super::DIFF_LIMIT`] is shown by sizes and sha256 (streamed), never loaded.
    ///
    /// # Errors
    /// [`WorkspaceError::Io`] when the shadow cannot be read.
    pub fn diff(&self, path: Option<&str>) -> Result<Vec<(Change, String)>, WorkspaceError> {
        let now = self.shadow_snapshot()?;
        let shadow = self.state.shadow.clone();
        let set = ChangeSet::between(&self.state.base, &now, &|rel| {
            prefix(&shadow, rel).is_some_and(|d| looks_binary(&d))
        });
        let mut out = Vec::new();
        for change in set.changes {
            if let Some(p) = path {
                let p = p.trim_end_matches('/');
                let from = match &change.kind {
                    ChangeKind::Renamed { from } => Some(from.as_str()),
                    _ => None,
                };
                let under = |x: &str| x == p || x.starts_with(&format!("{p}/"));
                if !(under(&change.path) || from.is_some_and(under)) {
                    continue;
                }
            }
            let old_rel = match &change.kind {
                ChangeKind::Renamed { from } => from.clone(),
                _ => change.path.clone(),
            };
            let old = match change.kind {
                ChangeKind::Added => Content::Absent,
                _ => content(&self.state.real, &old_rel, DIFF_LIMIT),
            };
            let new = match change.kind {
                ChangeKind::Deleted => Content::Absent,
                _ => content(&self.state.shadow, &change.path, DIFF_LIMIT),
            };
            // The old side's hash now, to say when the real file moved since the base.
            let old_summary = match &old {
                Content::Absent => None,
                Content::Loaded(d) => Some(Summary {
                    size: d.len() as u64,
                    sha256: sha256(d),
                }),
                Content::Large { size } => Some(Summary {
                    size: *size,
                    sha256: sha256_file(&self.state.real.join(&old_rel))?,
                }),
            };
            let mut text = String::new();
            if let (Some(o), Some(base)) = (&old_summary, self.state.base.get(&old_rel))
                && o.sha256 != base.sha256
            {
                text.push_str(&format!(
                    "# note: {} changed in the real folder since import; this diff is against its current content\n",
                    quote_path(&old_rel)
                ));
            }
            match (&old, &new) {
                (Content::Large { .. }, _) | (_, Content::Large { .. }) => {
                    let new_summary = match &new {
                        Content::Absent => None,
                        Content::Loaded(d) => Some(Summary {
                            size: d.len() as u64,
                            sha256: sha256(d),
                        }),
                        Content::Large { size } => Some(Summary {
                            size: *size,
                            sha256: match now.get(&change.path) {
                                Some(e) if e.size == *size => e.sha256.clone(),
                                _ => sha256_file(&self.state.shadow.join(&change.path))?,
                            },
                        }),
                    };
                    text.push_str(&summary(
                        &change,
                        old_summary.as_ref(),
                        new_summary.as_ref(),
                    ));
                }
                _ => text.push_str(&unified(&change, old.bytes(), new.bytes())),
            }
            out.push((change, text));
        }
        Ok(out)
    }

    /// Throws away every change in the shadow: the shadow is rebuilt from the real folder as it
    /// is now, and the base snapshot with it.
    ///
    /// # Errors
    /// [`WorkspaceError::Io`] when the shadow cannot be rebuilt.
    pub fn discard(&mut self) -> Result<ImportReport, WorkspaceError> {
        let shadow = self.state.shadow.clone();
        for entry in std::fs::read_dir(&shadow).map_err(io(&shadow))? {
            let path = entry.map_err(io(&shadow))?.path();
            let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
            if meta.is_dir() {
                std::fs::remove_dir_all(&path).map_err(io(&path))?;
            } else {
                std::fs::remove_file(&path).map_err(io(&path))?;
            }
        }
        let (base, mut report) = copy_in(&self.state.real, &shadow)?;
        report.git = git::setup(&self.state.real, &shadow, &self.dir)?;
        self.state.base = base;
        self.state.save(&self.dir)?;
        Ok(report)
    }

    /// Brings changes made in the real folder since the base into the shadow, path by path,
    /// where the shadow did not change the same path (those are reported as conflicts and left
    /// alone).
    ///
    /// # Errors
    /// [`WorkspaceError::Io`] when a file cannot be read or written.
    pub fn refresh(&mut self) -> Result<RefreshReport, WorkspaceError> {
        let real_now = self.real_snapshot()?;
        let shadow_now = self.shadow_snapshot()?;
        let mut report = RefreshReport::default();
        let set = RESERVED_NAMES;
        let from = Beneath::open(&self.state.real, set)?;
        let to = Beneath::open(&self.state.shadow, set)?;
        let mut paths: Vec<String> = self.state.base.keys().cloned().collect();
        paths.extend(real_now.keys().cloned());
        paths.sort();
        paths.dedup();
        for rel in paths {
            let base = self.state.base.get(&rel);
            let real = real_now.get(&rel);
            if same(base, real) {
                continue;
            }
            let shadow = shadow_now.get(&rel);
            if !same(base, shadow) {
                if same(shadow, real) {
                    self.advance(&rel, real, shadow);
                } else {
                    report.conflicts.push(rel);
                }
                continue;
            }
            let pulled = match real {
                Some(_) => match copy_one(&from, &to, &rel, true) {
                    Ok(Copied::Entry(mut e, _)) => {
                        if let Some(r) = real {
                            e.real_mtime = r.real_mtime;
                        }
                        self.state.base.insert(rel.clone(), e);
                        Ok(())
                    }
                    Ok(Copied::Skipped) => {
                        self.state.base.remove(&rel);
                        Ok(())
                    }
                    Err(e) => Err(e),
                },
                None => to.remove(&rel).map(|_| {
                    self.state.base.remove(&rel);
                }),
            };
            match pulled {
                Ok(()) => {}
                // The shadow put a link or a file where the path's directory was: the
                // shadow changed it, so it is a conflict, and nothing is written through it.
                Err(WorkspaceError::NotBeneath { .. }) => {
                    report.conflicts.push(rel);
                    continue;
                }
                Err(e) => return Err(e),
            }
            report.pulled.push(rel);
        }
        self.state.save(&self.dir)?;
        report.git = git::moved_since(&self.state.real, &self.dir);
        Ok(report)
    }

    /// Sets the base entry of `rel` to `real`'s state (with the shadow's mtime).
    fn advance(&mut self, rel: &str, real: Option<&Entry>, shadow: Option<&Entry>) {
        match (real, shadow) {
            (Some(r), Some(s)) => {
                let mut e = r.clone();
                e.shadow_mtime = s.shadow_mtime;
                self.state.base.insert(rel.to_owned(), e);
            }
            _ => {
                self.state.base.remove(rel);
            }
        }
    }

    /// The `workspace.import` event of this workspace.
    pub fn import_event(&self, report: &ImportReport) -> agent_core::events::WorkspaceImport {
        agent_core::events::WorkspaceImport {
            root: self.state.real.display().to_string(),
            files: Some(report.files),
        }
    }
}

fn canonical_dir(path: &Path, what: &str) -> Result<PathBuf, WorkspaceError> {
    let canonical = std::fs::canonicalize(path).map_err(|e| {
        WorkspaceError::Invalid(format!("{what} {} cannot be opened: {e}", path.display()))
    })?;
    if !canonical.is_dir() {
        return Err(WorkspaceError::Invalid(format!(
            "{what} {} is not a directory",
            path.display()
        )));
    }
    Ok(canonical)
}

fn absolute(path: &Path) -> Result<PathBuf, WorkspaceError> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(io("."))?;
    Ok(cwd.join(path))
}

/// 0700 on a state directory (best effort: it only narrows access).
fn restrict(dir: &Path) {
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
}

/// A snapshot of `root`; `base` entries with the same size and mtime are not hashed again.
fn snapshot(root: &Path, base: &Snapshot, real: bool) -> Result<Snapshot, WorkspaceError> {
    let found = walk(root)?;
    let mut out = Snapshot::new();
    for f in found {
        if reserved(&f.rel) {
            continue;
        }
        let entry = f.entry(base.get(&f.rel), real)?;
        // A link of the real folder that leaves it is not part of the workspace (never
        // imported, never followed).
        if real
            && let super::snapshot::EntryKind::Symlink { target } = &entry.kind
            && !link_stays_inside(&f.rel, target)
        {
            continue;
        }
        out.insert(f.rel, entry);
    }
    Ok(out)
}

enum Copied {
    Entry(Entry, u64),
    Skipped,
}

/// Copies the file or link `rel` from beneath `from` to the same place beneath `to`, never
/// through a link on either side; `replace` replaces an existing path atomically (else the
/// path must be new). Links that leave the tree are skipped.
fn copy_one(
    from: &Beneath,
    to: &Beneath,
    rel: &str,
    replace: bool,
) -> Result<Copied, WorkspaceError> {
    let Some(meta) = from.lstat(rel)? else {
        return Err(io(from.path().join(rel))(
            std::io::ErrorKind::NotFound.into(),
        ));
    };
    to.create_parents(rel)?;
    let tmp = format!(".agent-r{:08x}", std::process::id());
    if meta.kind == Kind::Symlink {
        let target = from.read_link(rel)?;
        if !link_stays_inside(rel, &target) {
            return Ok(Copied::Skipped);
        }
        to.symlink_atomic(rel, &tmp, &target)?;
        let shadow_mtime = to.lstat(rel)?.map_or(0, |m| m.mtime);
        let entry = Entry {
            size: target.len() as u64,
            sha256: sha256(target.as_bytes()),
            kind: EntryKind::Symlink { target },
            mode: 0,
            real_mtime: meta.mtime,
            shadow_mtime,
        };
        return Ok(Copied::Entry(entry, 0));
    }
    let mut src = from.open_read(rel)?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut fill = |out: &mut std::fs::File| -> std::io::Result<()> {
        let mut buf = vec![0u8; COPY_BLOCK];
        loop {
            let n = src.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n])?;
            size += n as u64;
        }
    };
    let shadow_mtime = if replace {
        to.write_atomic(rel, &tmp, meta.mode, &mut fill)?.mtime
    } else {
        let file = to.create_new(rel, meta.mode, &mut fill)?;
        file.metadata()
            .map(|m| super::snapshot::mtime(&m))
            .map_err(io(to.path().join(rel)))?
    };
    Ok(Copied::Entry(
        Entry {
            kind: EntryKind::File,
            size,
            mode: meta.mode,
            sha256: hex::encode(hasher.finalize()),
            real_mtime: meta.mtime,
            shadow_mtime,
        },
        size,
    ))
}

/// Copies every workspace path of `real` into `shadow` (in parallel) and returns the base
/// snapshot.
fn copy_in(real: &Path, shadow: &Path) -> Result<(Snapshot, ImportReport), WorkspaceError> {
    let from = Beneath::open(real, RESERVED_NAMES)?;
    let to = Beneath::open(shadow, RESERVED_NAMES)?;
    let found: Vec<_> = walk(real)?
        .into_iter()
        .filter(|f| !reserved(&f.rel))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<Copied, WorkspaceError>)>> =
        Mutex::new(Vec::with_capacity(found.len()));
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut local = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = found.get(i) else { break };
                    local.push((i, copy_one(&from, &to, &f.rel, false)));
                }
                if let Ok(mut all) = results.lock() {
                    all.extend(local);
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| WorkspaceError::Invalid("a copying thread panicked".into()))?;
    if results.len() != found.len() {
        return Err(WorkspaceError::Invalid(
            "a copying thread stopped early; nothing was imported".into(),
        ));
    }
    let mut base = Snapshot::new();
    let mut report = ImportReport::default();
    let mut sorted = results;
    sorted.sort_by_key(|(i, _)| *i);
    for (i, r) in sorted {
        let rel = found[i].rel.clone();
        match r? {
            Copied::Entry(e, bytes) => {
                report.files += 1;
                report.bytes += bytes;
                base.insert(rel, e);
            }
            Copied::Skipped => report.skipped_links.push(rel),
        }
    }
    Ok((base, report))
}
