//! Path normalisation: lexical (`.`, `..`, repeated and trailing slashes) and against the real
//! filesystem (every symlink on the way followed, dangling ones included, with a loop budget).

use std::path::{Path, PathBuf};

use agent_core::paths::normalize as normalize_path;
pub use agent_core::paths::{MAX_SYMLINKS, PathError, resolve};

/// Makes `path` absolute against `cwd` without normalising it: the form to give [`resolve`],
/// which applies each `..` after the symlinks before it, as the kernel does.
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
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
