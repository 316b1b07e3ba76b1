//! [`Beneath`]: a handle on a root directory through which every read and write of a workspace
//! tree goes. A relative path is resolved component by component from the root's descriptor,
//! never following a symlink (not even one pointing back inside) and never leaving the root;
//! a path with a reserved component (`.agent`, and `.git` where the caller says so) is refused
//! whatever that component is on disk (directory, symlink or file).
//!
//! On Linux the parent directory is opened with one `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)`; when that fails for any reason (an old kernel, a link, a missing
//! directory) the portable walk runs: one `openat(O_NOFOLLOW | O_DIRECTORY)` per component,
//! which also says precisely what was in the way.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, Stat};
use rustix::io::Errno;

use super::error::WorkspaceError;

/// Names a workspace never imports, commits or pulls, at any depth and whatever they are:
/// `.agent` (this runtime's settings and sessions) and `.git` (a commit never writes into a
/// repository's own directory; the shadow's `.git` is its own, docs/workspace.md).
pub(crate) const RESERVED_NAMES: &[&str] = &[super::filter::RESERVED, ".git"];

/// Whether `rel` has a component a workspace never imports, commits or pulls
/// ([`RESERVED_NAMES`]).
pub(crate) fn reserved(rel: &str) -> bool {
    rel.split('/').any(|c| RESERVED_NAMES.contains(&c))
}

/// A directory handle that resolves paths beneath it without following links.
#[derive(Debug)]
pub(crate) struct Beneath {
    root: OwnedFd,
    path: PathBuf,
    reserved: &'static [&'static str],
}

/// What is at a path, not following a final symlink.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A directory.
    Dir,
    /// Anything else (a socket, a device, a FIFO).
    Other,
}

/// The `lstat` of a path beneath the root.
#[derive(Clone, Debug)]
pub(crate) struct Meta {
    /// File, link, directory or other.
    pub kind: Kind,
    /// Permission bits.
    pub mode: u32,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: u64,
}

impl Meta {
    fn of(st: &Stat) -> Self {
        let fmt = st.st_mode & 0o170_000;
        let kind = match fmt {
            0o100_000 => Kind::File,
            0o120_000 => Kind::Symlink,
            0o040_000 => Kind::Dir,
            _ => Kind::Other,
        };
        let secs = u64::try_from(st.st_mtime).unwrap_or(0);
        #[allow(
            clippy::useless_conversion,
            reason = "st_mtime_nsec is unsigned on some targets, signed on others"
        )]
        let nanos = u64::try_from(st.st_mtime_nsec).unwrap_or(0);
        Self {
            kind,
            mode: st.st_mode & 0o7777,
            mtime: secs.saturating_mul(1_000_000_000).saturating_add(nanos),
        }
    }
}

impl Beneath {
    /// Opens `root` (which must be a directory; the root itself may be reached through links,
    /// it is the caller's canonical path), refusing paths with a component in `reserved`.
    pub(crate) fn open(
        root: &Path,
        reserved: &'static [&'static str],
    ) -> Result<Self, WorkspaceError> {
        let fd = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_at(root, e))?;
        Ok(Self {
            root: fd,
            path: root.to_path_buf(),
            reserved,
        })
    }

    /// The root's path (for messages).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Splits and checks `rel`: non-empty components, no `.`/`..`, no reserved name.
    fn parts<'a>(&self, rel: &'a str) -> Result<Vec<&'a str>, WorkspaceError> {
        let parts: Vec<&str> = rel.split('/').collect();
        if parts
            .iter()
            .any(|c| c.is_empty() || *c == "." || *c == ".." || c.contains('\0'))
        {
            return Err(self.refuse(rel, "is not a plain relative path"));
        }
        if let Some(c) = parts.iter().find(|c| self.reserved.contains(c)) {
            return Err(self.refuse(
                rel,
                &format!("has the reserved component {c}, which a workspace never writes"),
            ));
        }
        Ok(parts)
    }

    fn refuse(&self, rel: &str, why: &str) -> WorkspaceError {
        WorkspaceError::NotBeneath {
            path: self.path.join(rel),
            why: why.to_owned(),
        }
    }

    /// The directory holding `rel`'s last component, and that component. With `create`,
    /// missing directories are made (their relative paths are pushed to `created`, outermost
    /// first); without it a missing directory gives `Ok(None)`.
    fn parent<'a>(
        &self,
        rel: &'a str,
        create: Option<&mut Vec<String>>,
    ) -> Result<Option<(Dir, &'a str)>, WorkspaceError> {
        let parts = self.parts(rel)?;
        let (name, dirs) = match parts.split_last() {
            Some((name, dirs)) => (*name, dirs),
            None => return Err(self.refuse(rel, "is empty")),
        };
        if dirs.is_empty() {
            return Ok(Some((Dir::Root, name)));
        }
        let dir_rel = dirs.join("/");
        #[cfg(target_os = "linux")]
        if let Ok(fd) = rustix::fs::openat2(
            &self.root,
            dir_rel.as_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            rustix::fs::ResolveFlags::BENEATH
                | rustix::fs::ResolveFlags::NO_SYMLINKS
                | rustix::fs::ResolveFlags::NO_MAGICLINKS,
        ) {
            return Ok(Some((Dir::Owned(fd), name)));
        }
        let mut created = create;
        let mut cur: Option<OwnedFd> = None;
        for (i, part) in dirs.iter().enumerate() {
            let at = cur.as_ref().map_or(self.root.as_fd(), |f| f.as_fd());
            let here = dirs[..=i].join("/");
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let next = match rustix::fs::openat(at, *part, flags, Mode::empty()) {
                Ok(fd) => fd,
                // Without `create`, a missing directory or one that is a file means the path
                // does not exist; a link is still refused.
                Err(Errno::NOENT) => match created.as_deref_mut() {
                    None => return Ok(None),
                    Some(list) => {
                        match rustix::fs::mkdirat(at, *part, Mode::from_raw_mode(0o777)) {
                            Ok(()) => list.push(here.clone()),
                            Err(Errno::EXIST) => {}
                            Err(e) => return Err(io_at(&self.path.join(&here), e)),
                        }
                        rustix::fs::openat(at, *part, flags, Mode::empty())
                            .map_err(|e| self.in_the_way(at, part, &here, rel, e))?
                    }
                },
                Err(e) => {
                    let kind = rustix::fs::statat(at, *part, AtFlags::SYMLINK_NOFOLLOW)
                        .map(|st| Meta::of(&st).kind);
                    if created.is_none() && matches!(kind, Ok(Kind::File | Kind::Other)) {
                        return Ok(None);
                    }
                    return Err(self.in_the_way(at, part, &here, rel, e));
                }
            };
            cur = Some(next);
        }
        match cur {
            Some(fd) => Ok(Some((Dir::Owned(fd), name))),
            None => Ok(Some((Dir::Root, name))),
        }
    }

    /// The error for a component `part` (at `here`) that could not be opened as a directory.
    fn in_the_way(
        &self,
        at: BorrowedFd<'_>,
        part: &str,
        here: &str,
        rel: &str,
        e: Errno,
    ) -> WorkspaceError {
        match rustix::fs::statat(at, part, AtFlags::SYMLINK_NOFOLLOW).map(|s| Meta::of(&s).kind) {
            Ok(Kind::Symlink) => self.refuse(
                here,
                &format!(
                    "is a symlink; refusing to resolve {rel} through it (links are never followed)"
                ),
            ),
            Ok(Kind::Dir) => io_at(&self.path.join(here), e),
            Ok(_) => self.refuse(
                here,
                &format!("is not a directory, so {rel} cannot be under it"),
            ),
            Err(e) => io_at(&self.path.join(here), e),
        }
    }

    fn dir_fd<'a>(&'a self, dir: &'a Dir) -> BorrowedFd<'a> {
        match dir {
            Dir::Root => self.root.as_fd(),
            Dir::Owned(fd) => fd.as_fd(),
        }
    }

    /// What is at `rel` (a final symlink is not followed); `None` when it or a parent is
    /// missing.
    pub(crate) fn lstat(&self, rel: &str) -> Result<Option<Meta>, WorkspaceError> {
        let Some((dir, name)) = self.parent(rel, None)? else {
            return Ok(None);
        };
        match rustix::fs::statat(self.dir_fd(&dir), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Meta::of(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(io_at(&self.path.join(rel), e)),
        }
    }

    /// Opens the regular file `rel` for reading (a symlink there is refused, not followed).
    pub(crate) fn open_read(&self, rel: &str) -> Result<File, WorkspaceError> {
        let Some((dir, name)) = self.parent(rel, None)? else {
            return Err(io_at(&self.path.join(rel), Errno::NOENT));
        };
        let fd = rustix::fs::openat(
            self.dir_fd(&dir),
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP => self.refuse(rel, "is a symlink; it is read as a link, never followed"),
            e => io_at(&self.path.join(rel), e),
        })?;
        let file = File::from(fd);
        let meta = file
            .metadata()
            .map_err(super::error::io(self.path.join(rel)))?;
        if !meta.is_file() {
            return Err(self.refuse(rel, "is not a regular file"));
        }
        Ok(file)
    }

    /// The target of the symlink `rel`, as written.
    pub(crate) fn read_link(&self, rel: &str) -> Result<String, WorkspaceError> {
        let Some((dir, name)) = self.parent(rel, None)? else {
            return Err(io_at(&self.path.join(rel), Errno::NOENT));
        };
        let target = rustix::fs::readlinkat(self.dir_fd(&dir), name, Vec::new())
            .map_err(|e| io_at(&self.path.join(rel), e))?;
        Ok(target.to_string_lossy().into_owned())
    }

    /// Creates the directories above `rel` that are missing (a parent that is a link or not
    /// a directory is refused) and returns the ones it made, outermost first.
    pub(crate) fn create_parents(&self, rel: &str) -> Result<Vec<String>, WorkspaceError> {
        let mut created = Vec::new();
        self.parent(rel, Some(&mut created))?;
        Ok(created)
    }

    /// Creates the new file `rel` (missing parents are made; an existing file or link there
    /// is an error, so nothing is written through a link) with `mode`, filled by `fill`.
    pub(crate) fn create_new(
        &self,
        rel: &str,
        mode: u32,
        fill: &mut dyn FnMut(&mut File) -> std::io::Result<()>,
    ) -> Result<File, WorkspaceError> {
        let mut created = Vec::new();
        let Some((dir, name)) = self.parent(rel, Some(&mut created))? else {
            return Err(io_at(&self.path.join(rel), Errno::NOENT));
        };
        let fd = rustix::fs::openat(
            self.dir_fd(&dir),
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| io_at(&self.path.join(rel), e))?;
        let mut file = File::from(fd);
        fill(&mut file).map_err(super::error::io(self.path.join(rel)))?;
        rustix::fs::fchmod(&file, Mode::from_raw_mode(mode & 0o7777))
            .map_err(|e| io_at(&self.path.join(rel), e))?;
        Ok(file)
    }

    /// Replaces `rel` atomically with a regular file of `mode` filled by `fill`: a temporary
    /// file named `tmp` (short, fixed length, chosen by the caller) is created in the same
    /// directory with `O_CREAT | O_EXCL`, filled, then renamed over `rel`. The parent
    /// directories must exist ([`Beneath::create_parents`]). Not synced: a commit makes its
    /// writes durable with one [`Beneath::sync_fs`] before it drops its journal. Returns the
    /// new file's metadata.
    pub(crate) fn write_atomic(
        &self,
        rel: &str,
        tmp: &str,
        mode: u32,
        fill: &mut dyn FnMut(&mut File) -> std::io::Result<()>,
    ) -> Result<Meta, WorkspaceError> {
        let Some((dir, name)) = self.parent(rel, None)? else {
            return Err(io_at(&self.path.join(rel), Errno::NOENT));
        };
        let at = self.dir_fd(&dir);
        let fd = rustix::fs::openat(
            at,
            tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| io_at(&self.path.join(rel), e))?;
        let mut file = File::from(fd);
        let filled = fill(&mut file).and_then(|()| file.flush()).and_then(|()| {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode & 0o7777)).map_err(Into::into)
        });
        if let Err(e) = filled {
            let _ = rustix::fs::unlinkat(at, tmp, AtFlags::empty());
            return Err(super::error::io(self.path.join(rel))(e));
        }
        let meta = file
            .metadata()
            .map_err(super::error::io(self.path.join(rel)))?;
        drop(file);
        if let Err(e) = rustix::fs::renameat(at, tmp, at, name) {
            let _ = rustix::fs::unlinkat(at, tmp, AtFlags::empty());
            return Err(io_at(&self.path.join(rel), e));
        }
        use std::os::unix::fs::MetadataExt as _;
        Ok(Meta {
            kind: Kind::File,
            mode: meta.mode() & 0o7777,
            mtime: super::snapshot::mtime(&meta),
        })
    }

    /// Replaces `rel` atomically with a symlink to `target` (made as `tmp`, then renamed).
    pub(crate) fn symlink_atomic(
        &self,
        rel: &str,
        tmp: &str,
        target: &str,
    ) -> Result<(), WorkspaceError> {
        let Some((dir, name)) = self.parent(rel, None)? else {
            return Err(io_at(&self.path.join(rel), Errno::NOENT));
        };
        let at = self.dir_fd(&dir);
        rustix::fs::symlinkat(target, at, tmp).map_err(|e| io_at(&self.path.join(rel), e))?;
        if let Err(e) = rustix::fs::renameat(at, tmp, at, name) {
            let _ = rustix::fs::unlinkat(at, tmp, AtFlags::empty());
            return Err(io_at(&self.path.join(rel), e));
        }
        Ok(())
    }

    /// Creates the directory `rel` (its parent must exist); an existing directory is fine.
    pub(crate) fn mkdir(&self, rel: &str) -> Result<(), WorkspaceError> {
        let Some((dir, name)) = self.parent(rel, None)? else {
            return Err(io_at(&self.path.join(rel), Errno::NOENT));
        };
        match rustix::fs::mkdirat(self.dir_fd(&dir), name, Mode::from_raw_mode(0o777)) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) if self.lstat(rel)?.is_some_and(|m| m.kind == Kind::Dir) => Ok(()),
            Err(e) => Err(io_at(&self.path.join(rel), e)),
        }
    }

    /// Flushes the filesystem holding the root to disk (`syncfs`): every write made beneath it
    /// so far is durable afterwards.
    pub(crate) fn sync_fs(&self) -> Result<(), WorkspaceError> {
        rustix::fs::syncfs(&self.root).map_err(|e| io_at(&self.path, e))
    }

    /// Removes the file or link `rel`; `false` when it (or a parent) was already absent.
    pub(crate) fn remove(&self, rel: &str) -> Result<bool, WorkspaceError> {
        let Some((dir, name)) = self.parent(rel, None)? else {
            return Ok(false);
        };
        match rustix::fs::unlinkat(self.dir_fd(&dir), name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(io_at(&self.path.join(rel), e)),
        }
    }

    /// Removes the empty directory `rel`; `false` when it is absent or not empty.
    pub(crate) fn remove_dir(&self, rel: &str) -> Result<bool, WorkspaceError> {
        let Some((dir, name)) = self.parent(rel, None)? else {
            return Ok(false);
        };
        match rustix::fs::unlinkat(self.dir_fd(&dir), name, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT | Errno::NOTEMPTY | Errno::EXIST) => Ok(false),
            Err(e) => Err(io_at(&self.path.join(rel), e)),
        }
    }
}

/// A resolved parent directory: the root itself or one opened beneath it.
enum Dir {
    Root,
    Owned(OwnedFd),
}

fn io_at(path: &Path, e: Errno) -> WorkspaceError {
    WorkspaceError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "test code: a panic is a failure report"
    )]

    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf, Beneath) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("dir")).unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::os::unix::fs::symlink("../outside", root.join("out")).unwrap();
        std::os::unix::fs::symlink("dir", root.join("in")).unwrap();
        std::fs::write(root.join("file"), "x").unwrap();
        let b = Beneath::open(&root, RESERVED_NAMES).unwrap();
        (tmp, root, b)
    }

    fn write(b: &Beneath, rel: &str) -> Result<Meta, WorkspaceError> {
        b.create_parents(rel)?;
        b.write_atomic(rel, ".agent-tmp", 0o644, &mut |f| f.write_all(b"new"))
    }

    #[test]
    fn no_write_resolves_through_a_link_even_one_that_stays_inside() {
        let (tmp, root, b) = setup();
        for rel in ["out/x", "in/x", "out/deep/x", "file/x"] {
            let e = write(&b, rel).unwrap_err();
            assert!(matches!(e, WorkspaceError::NotBeneath { .. }), "{rel}: {e}");
        }
        assert!(b.remove("out/x").is_err());
        assert!(b.lstat("in/x").is_err());
        assert!(b.open_read("out").is_err());
        assert_eq!(
            std::fs::read_dir(tmp.path().join("outside"))
                .unwrap()
                .count(),
            0
        );
        assert_eq!(std::fs::read_dir(root.join("dir")).unwrap().count(), 0);
    }

    #[test]
    fn reserved_components_and_escapes_are_refused_whatever_they_are() {
        let (_tmp, root, b) = setup();
        std::os::unix::fs::symlink("dir", root.join(".agent")).unwrap();
        for rel in [
            ".agent",
            ".agent/settings.json",
            "a/.git/config",
            "../x",
            "a//b",
            "./a",
            "",
        ] {
            let e = write(&b, rel).unwrap_err();
            assert!(matches!(e, WorkspaceError::NotBeneath { .. }), "{rel}: {e}");
        }
        assert_eq!(std::fs::read_dir(root.join("dir")).unwrap().count(), 0);
    }

    #[test]
    fn atomic_writes_make_parents_and_replace_files_but_not_directories() {
        let (_tmp, root, b) = setup();
        assert_eq!(b.create_parents("a/b/c.txt").unwrap(), vec!["a", "a/b"]);
        write(&b, "a/b/c.txt").unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("a/b/c.txt")).unwrap(),
            "new"
        );
        write(&b, "file").unwrap();
        assert_eq!(std::fs::read_to_string(root.join("file")).unwrap(), "new");
        assert!(write(&b, "dir").is_err());
        assert!(root.join("dir").is_dir());
        assert!(!root.join("dir/.agent-tmp").exists() && !root.join(".agent-tmp").exists());
        b.symlink_atomic("a/link", ".agent-tmp", "b/c.txt").unwrap();
        assert_eq!(b.read_link("a/link").unwrap(), "b/c.txt");
        assert_eq!(b.lstat("a/link").unwrap().unwrap().kind, Kind::Symlink);
        assert!(b.remove("a/link").unwrap());
        assert!(!b.remove("a/link").unwrap());
        assert_eq!(b.lstat("nope/x").unwrap().map(|m| m.kind), None);
    }
}
