//! [`ReadTree`]: one directory opened once for reading the many files beneath it, as a search
//! (the Grep tool) does. Judging and resolving every file's path from `/` would cost more than
//! reading it; instead each file is opened relative to the directory's handle with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, so the kernel guarantees the file lies
//! beneath the directory along a path without links, the only path the policy needs to judge
//! (its deny list, checked on that path without I/O). A path with a link on the way, or a
//! kernel without `openat2`, takes [`SandboxedFs::open`]'s full check instead.

use std::path::{Component, Path, PathBuf};

use cap_std::fs::Dir;

use super::fs::{FsError, SandboxedFs};
use super::policy::Op;

/// A readable directory of the sandbox, open for reading files beneath it.
pub struct ReadTree<'a> {
    fs: &'a SandboxedFs,
    real: PathBuf,
    dir: Dir,
}

impl std::fmt::Debug for ReadTree<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadTree")
            .field("real", &self.real)
            .finish_non_exhaustive()
    }
}

impl SandboxedFs {
    /// Opens the directory `path` for reading the files beneath it ([`ReadTree::open`]), after
    /// the policy allowed reading the directory itself.
    ///
    /// # Errors
    /// [`FsError`] when the policy refuses the directory or it cannot be opened.
    pub fn read_tree(&self, path: &Path) -> Result<ReadTree<'_>, FsError> {
        let (root, rel, real) = self.locate(path, Op::Read)?;
        let dir = Self::io(&real, root.dir.open_dir(&rel))?;
        Ok(ReadTree {
            fs: self,
            real,
            dir,
        })
    }
}

impl ReadTree<'_> {
    /// The directory's resolved path.
    pub fn path(&self) -> &Path {
        &self.real
    }

    /// Opens the file at `rel` (relative to the directory, plain names only: no `..`, no root)
    /// for reading. The policy's read deny list judges `directory/rel`; the kernel refuses any
    /// link on the way, in which case the file is judged and opened as [`SandboxedFs::open`]
    /// does (resolving the link).
    ///
    /// # Errors
    /// [`FsError::Denied`] for a denied path or a `rel` that is not plain names;
    /// [`FsError::Io`] when the open fails.
    pub fn open(&self, rel: &Path) -> Result<std::fs::File, FsError> {
        let path = self.real.join(rel);
        if rel.as_os_str().is_empty()
            || !rel.components().all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(FsError::Denied(crate::verdict::Verdict::deny(
                format!(
                    "{} is not a plain path beneath {}",
                    rel.display(),
                    self.real.display()
                ),
                Some("built-in: read tree".into()),
            )));
        }
        if let Some(v) = self.fs.policy().denied(&path, Op::Read) {
            return Err(FsError::Denied(v));
        }
        #[cfg(target_os = "linux")]
        if let Some(file) = self.open_without_links(rel, &path)? {
            return Ok(file);
        }
        self.fs.open(&path).map(cap_std::fs::File::into_std)
    }

    /// `openat2` beneath the directory with no links allowed on the way: `Ok(None)` when the
    /// kernel refused a link (or has no `openat2`), so the caller takes the full check.
    #[cfg(target_os = "linux")]
    fn open_without_links(
        &self,
        rel: &Path,
        path: &Path,
    ) -> Result<Option<std::fs::File>, FsError> {
        use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
        use rustix::io::Errno;
        match openat2(
            &self.dir,
            rel,
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NOFOLLOW,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        ) {
            Ok(fd) => Ok(Some(std::fs::File::from(fd))),
            Err(Errno::LOOP | Errno::XDEV | Errno::NOSYS | Errno::PERM | Errno::AGAIN) => Ok(None),
            Err(e) => Err(FsError::Io {
                path: path.to_path_buf(),
                source: e.into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::SandboxSettings;

    fn fs_over(root: &Path, deny: &[&str]) -> SandboxedFs {
        let settings = SandboxSettings {
            base_dir: Some(root.to_path_buf()),
            read_write_dirs: vec![root.to_path_buf()],
            allowed_read_paths: Some(vec![root.to_path_buf()]),
            denied_read_paths: deny.iter().map(|d| root.join(d)).collect(),
            ..SandboxSettings::default()
        };
        SandboxedFs::new(&settings).expect("sandbox over the temp dir")
    }

    #[test]
    fn files_beneath_the_tree_open_and_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        std::fs::write(root.join("a/b/f.txt"), "hello").expect("write");
        let fs = fs_over(&root, &[]);
        let tree = fs.read_tree(&root.join("a")).expect("tree");
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut tree.open(Path::new("b/f.txt")).expect("open"),
            &mut text,
        )
        .expect("read");
        assert_eq!(text, "hello");
    }

    #[test]
    fn a_denied_file_beneath_the_tree_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::write(root.join(".env"), "SECRET=1").expect("write");
        let fs = fs_over(&root, &[".env"]);
        let tree = fs.read_tree(&root).expect("tree");
        assert!(matches!(
            tree.open(Path::new(".env")),
            Err(FsError::Denied(_))
        ));
    }

    #[test]
    fn a_link_on_the_way_is_judged_by_its_target() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir_all(root.join("secret")).expect("mkdir");
        std::fs::write(root.join("secret/key"), "k").expect("write");
        std::os::unix::fs::symlink(root.join("secret"), root.join("open")).expect("link");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("x"), "x").expect("write");
        std::os::unix::fs::symlink(outside.path(), root.join("out")).expect("link");
        let fs = fs_over(&root, &["secret"]);
        let tree = fs.read_tree(&root).expect("tree");
        // Through a link to a denied directory: judged at the target, refused.
        assert!(matches!(
            tree.open(Path::new("open/key")),
            Err(FsError::Denied(_))
        ));
        // Through a link leading outside every root: refused.
        assert!(tree.open(Path::new("out/x")).is_err());
    }

    #[test]
    fn paths_that_are_not_plain_names_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir_all(root.join("a")).expect("mkdir");
        std::fs::write(root.join("f"), "f").expect("write");
        let fs = fs_over(&root, &[]);
        let tree = fs.read_tree(&root.join("a")).expect("tree");
        for rel in ["../f", "/etc/passwd", ""] {
            assert!(
                matches!(tree.open(Path::new(rel)), Err(FsError::Denied(_))),
                "{rel} must be refused"
            );
        }
    }
}
