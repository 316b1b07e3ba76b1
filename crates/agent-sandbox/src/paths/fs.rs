//! `SandboxedFs`: file access through capability handles. Each granted directory is opened
//! once as a `cap_std::fs::Dir`; every operation is first checked by the [`PathPolicy`] and then
//! performed relative to that handle, which resolves beneath it (`openat2(RESOLVE_BENEATH)` on
//! Linux). A symlink or directory swapped in after the check therefore still cannot reach
//! outside: there is no check-then-use race.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions};

use super::normalize::{lexical, resolve};
use super::policy::{Op, PathPolicy};
use crate::settings::SandboxSettings;
use crate::verdict::Verdict;

/// Occurs when a sandboxed file operation is refused or fails.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The policy refused it.
    #[error("sandbox: {}", .0.reason)]
    Denied(Verdict),
    /// The path is allowed but lies under no directory the sandbox holds a handle for (reads
    /// with no read allowlist): grant the directory to use it through `SandboxedFs`.
    #[error(
        "sandbox: {0:?} is not inside a granted directory; add it to the sandbox's directories"
    )]
    NotUnderRoot(PathBuf),
    /// The operation failed (including an escape caught by the capability handle).
    #[error("sandbox: {path:?}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

pub(super) struct Root {
    pub(super) real: PathBuf,
    pub(super) dir: Dir,
    writable: bool,
}

/// File operations confined to the sandbox's directories.
pub struct SandboxedFs {
    policy: PathPolicy,
    roots: Vec<Root>,
}

impl std::fmt::Debug for SandboxedFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxedFs")
            .field(
                "roots",
                &self.roots.iter().map(|r| &r.real).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl SandboxedFs {
    /// Opens a handle on every granted directory (base, read-write, read-only, and the
    /// allowlisted paths that are directories).
    ///
    /// # Errors
    /// [`FsError::Io`] when a granted directory cannot be opened.
    pub fn new(settings: &SandboxSettings) -> Result<Self, FsError> {
        let mut dirs: Vec<(PathBuf, bool)> = Vec::new();
        dirs.extend(settings.base_dir.iter().map(|p| (p.clone(), true)));
        dirs.extend(settings.read_write_dirs.iter().map(|p| (p.clone(), true)));
        dirs.extend(
            settings
                .allowed_write_paths
                .iter()
                .flatten()
                .map(|p| (p.clone(), true)),
        );
        dirs.extend(settings.read_only_dirs.iter().map(|p| (p.clone(), false)));
        dirs.extend(
            settings
                .allowed_read_paths
                .iter()
                .flatten()
                .map(|p| (p.clone(), false)),
        );
        let mut roots = Vec::new();
        for (p, writable) in dirs {
            let lex = lexical(&p, Path::new("/"));
            let real = resolve(&lex).unwrap_or(lex);
            if !real.is_dir() {
                continue;
            }
            let dir = Dir::open_ambient_dir(&real, ambient_authority()).map_err(|source| {
                FsError::Io {
                    path: real.clone(),
                    source,
                }
            })?;
            roots.push(Root {
                real,
                dir,
                writable,
            });
        }
        // The most specific root first, so a read-only directory inside a writable one wins.
        roots.sort_by_key(|r| std::cmp::Reverse(r.real.components().count()));
        let cwd = settings
            .base_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("/"));
        Ok(Self {
            policy: PathPolicy::new(settings, Some(&cwd)),
            roots,
        })
    }

    /// The policy it enforces.
    pub fn policy(&self) -> &PathPolicy {
        &self.policy
    }

    pub(super) fn locate(&self, path: &Path, op: Op) -> Result<(&Root, PathBuf, PathBuf), FsError> {
        let (v, real) = self.policy.check_resolving(path, op);
        let (true, Some(real)) = (v.allowed, real) else {
            return Err(FsError::Denied(v));
        };
        let root = self
            .roots
            .iter()
            .find(|r| real.starts_with(&r.real) && (op == Op::Read || r.writable))
            .ok_or_else(|| FsError::NotUnderRoot(real.clone()))?;
        let rel = real
            .strip_prefix(&root.real)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let rel = if rel.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            rel
        };
        Ok((root, rel, real))
    }

    pub(super) fn io<T>(real: &Path, r: io::Result<T>) -> Result<T, FsError> {
        r.map_err(|source| FsError::Io {
            path: real.to_path_buf(),
            source,
        })
    }

    /// Reads a whole file.
    ///
    /// # Errors
    /// [`FsError`] when refused or when the read fails.
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        let (root, rel, real) = self.locate(path, Op::Read)?;
        Self::io(&real, root.dir.read(&rel))
    }

    /// Opens a file for reading.
    ///
    /// # Errors
    /// [`FsError`] when refused or when the open fails.
    pub fn open(&self, path: &Path) -> Result<File, FsError> {
        let (root, rel, real) = self.locate(path, Op::Read)?;
        Self::io(&real, root.dir.open(&rel))
    }

    /// Writes (creates or truncates) a file.
    ///
    /// # Errors
    /// [`FsError`] when refused or when the write fails.
    pub fn write(&self, path: &Path, contents: &[u8]) -> Result<(), FsError> {
        let (root, rel, real) = self.locate(path, Op::Write)?;
        let mut opts = OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        let mut f = Self::io(&real, root.dir.open_with(&rel, &opts))?;
        Self::io(&real, io::Write::write_all(&mut f, contents))
    }

    /// Lists a directory: entry names, sorted.
    ///
    /// # Errors
    /// [`FsError`] when refused or when the listing fails.
    pub fn list(&self, path: &Path) -> Result<Vec<String>, FsError> {
        let (root, rel, real) = self.locate(path, Op::Read)?;
        let mut names = Vec::new();
        for e in Self::io(&real, root.dir.read_dir(&rel))? {
            let e = Self::io(&real, e)?;
            names.push(e.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    /// Creates a directory and its parents.
    ///
    /// # Errors
    /// [`FsError`] when refused or when it fails.
    pub fn create_dir_all(&self, path: &Path) -> Result<(), FsError> {
        let (root, rel, real) = self.locate(path, Op::Write)?;
        Self::io(&real, root.dir.create_dir_all(&rel))
    }

    /// Removes a file.
    ///
    /// # Errors
    /// [`FsError`] when refused or when it fails.
    pub fn remove_file(&self, path: &Path) -> Result<(), FsError> {
        let (root, rel, real) = self.locate(path, Op::Write)?;
        Self::io(&real, root.dir.remove_file(&rel))
    }
}
