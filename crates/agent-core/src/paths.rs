//! How a path names a file: lexical normalisation (`.`, `..`, repeated separators) and
//! resolution against the real filesystem **in the kernel's order**: components are walked
//! left to right and a symlink is replaced by its target *before* a following `..` applies,
//! so `link/../k` names the `k` beside the link's target, as `open(2)` would.
//!
//! The permission engine and the sandbox both use these functions, so the two layers never
//! disagree about which file a path names.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed in one resolution before it is called a loop (Linux's `MAXSYMLINKS`).
pub const MAX_SYMLINKS: usize = 40;

/// Occurs when a path cannot be resolved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// A relative path was given without a directory to anchor it.
    #[error("{0:?} is relative; give an absolute path")]
    Relative(PathBuf),
    /// More than [`MAX_SYMLINKS`] symlinks: a loop.
    #[error("{0:?}: too many levels of symbolic links (a symlink loop)")]
    Loop(PathBuf),
    /// A component could not be inspected.
    #[error("{path:?}: {message}")]
    Io {
        /// The path being inspected.
        path: PathBuf,
        /// The error.
        message: String,
    },
    /// The path contains a NUL byte.
    #[error("{0:?} contains a NUL byte")]
    Nul(PathBuf),
}

/// Removes `.`, `..` and repeated separators without touching the filesystem. `..` at the root
/// stays at the root. This is what a path *says*; [`resolve`] is what it *names*.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Resolves `path` (absolute) against the real filesystem: each existing component is
/// `lstat`ed and symlinks are followed (relative targets against their directory), including a
/// dangling final symlink, so the result names what an `open` would reach. Components that do
/// not exist are kept lexically.
///
/// # Errors
/// [`PathError`] for a relative path, a NUL byte, a symlink loop, or an I/O error other than
/// "not found" (e.g. permission denied, or a file used as a directory).
pub fn resolve(path: &Path) -> Result<PathBuf, PathError> {
    if !path.is_absolute() {
        return Err(PathError::Relative(path.to_path_buf()));
    }
    resolve_beneath(Path::new("/"), path)
}

/// [`resolve`] of `base.join(rest)` where `base` is already resolved (absolute, no symlinks,
/// no `..`): only `rest`'s components are walked, so a path below a directory resolved once
/// (a working directory) costs one `lstat` per component below it. `rest` may be relative or
/// absolute (then `base` is ignored) and may contain `..`, which can climb above `base`.
///
/// # Errors
/// As [`resolve`].
pub fn resolve_beneath(base: &Path, rest: &Path) -> Result<PathBuf, PathError> {
    resolve_beneath_existing(base, rest).map(|(p, _)| p)
}

/// [`resolve_beneath`], also telling whether the resolved path exists (every component was
/// found), so a caller need not `stat` it again.
///
/// # Errors
/// As [`resolve`].
pub fn resolve_beneath_existing(base: &Path, rest: &Path) -> Result<(PathBuf, bool), PathError> {
    let path = rest;
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(PathError::Nul(path.to_path_buf()));
    }
    // Components still to walk, in reverse order (next one last).
    let mut todo: Vec<OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    let mut out = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    let mut links = 0usize;
    let mut missing = false;
    while let Some(name) = todo.pop() {
        if name == ".." {
            out.pop();
            continue;
        }
        out.push(&name);
        if missing {
            continue;
        }
        match std::fs::symlink_metadata(&out) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(PathError::Loop(path.to_path_buf()));
                }
                let target = std::fs::read_link(&out).map_err(|e| PathError::Io {
                    path: out.clone(),
                    message: e.to_string(),
                })?;
                out.pop();
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for c in target.components().rev() {
                    match c {
                        Component::Normal(n) => todo.push(n.to_os_string()),
                        Component::ParentDir => todo.push(OsString::from("..")),
                        _ => {}
                    }
                }
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing = true,
            Err(e) => {
                return Err(PathError::Io {
                    path: out,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok((out, !missing))
}
