//! Path normalisation: lexical (`.`, `..`, repeated and trailing slashes) and against the real
//! filesystem (every symlink on the way followed, dangling ones included, with a loop budget).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use agent_core::permissions::normalize_path;

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

/// Makes `path` absolute against `cwd` and removes `.`, `..` (never above the root), repeated
/// and trailing slashes, without touching the disk.
///
/// ```
/// use agent_sandbox::paths::lexical;
/// use std::path::Path;
/// assert_eq!(lexical(Path::new("/project/src/../../etc//passwd/"), Path::new("/")), Path::new("/etc/passwd"));
/// assert_eq!(lexical(Path::new("../../.."), Path::new("/a")), Path::new("/"));
/// ```
pub fn lexical(path: &Path, cwd: &Path) -> PathBuf {
    // The permission engine's normaliser: both layers must agree on what a path means.
    if path.is_absolute() {
        normalize_path(path)
    } else {
        normalize_path(&cwd.join(path))
    }
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
    let mut out = PathBuf::from("/");
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
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_table() {
        let cases = [
            ("/a/./b/../c", "/", "/a/c"),
            ("//a///b//", "/", "/a/b"),
            ("/..", "/", "/"),
            ("x/../../y", "/w/v", "/w/y"),
            ("/project/src/../../etc/passwd", "/", "/etc/passwd"),
        ];
        for (p, cwd, want) in cases {
            assert_eq!(
                lexical(Path::new(p), Path::new(cwd)),
                Path::new(want),
                "{p}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn resolution_follows_symlinks_dangling_ones_and_detects_loops() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(d.join("real")).unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("abs")).unwrap();
        std::os::unix::fs::symlink("real", d.join("rel")).unwrap();
        std::os::unix::fs::symlink("/etc/nonexistent-target", d.join("dangling")).unwrap();
        std::os::unix::fs::symlink("loop2", d.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", d.join("loop2")).unwrap();
        std::os::unix::fs::symlink("..", d.join("real/up")).unwrap();
        assert_eq!(resolve(&d.join("abs/f")).unwrap(), d.join("real/f"));
        assert_eq!(resolve(&d.join("rel/x/y")).unwrap(), d.join("real/x/y"));
        assert_eq!(
            resolve(&d.join("dangling")).unwrap(),
            Path::new("/etc/nonexistent-target")
        );
        assert!(matches!(
            resolve(&d.join("loop1/x")),
            Err(PathError::Loop(_))
        ));
        assert_eq!(resolve(&d.join("real/up/real")).unwrap(), d.join("real"));
        assert!(matches!(
            resolve(Path::new("rel")),
            Err(PathError::Relative(_))
        ));
    }
}
