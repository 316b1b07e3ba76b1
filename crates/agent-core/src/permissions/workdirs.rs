//! The working directories, and how a path a tool names is resolved before rules see it.
//!
//! A path is made absolute against the current directory and `~` is expanded. Its lexical form
//! removes `.` and `..` textually; its real form is resolved on the filesystem in the kernel's
//! order ([`crate::paths::resolve`]: symlinks before a following `..`). Rules then see both
//! forms: an allow needs both to match, a deny fires on either (claude-code.md §3.3).

use std::path::{Component, Path, PathBuf};

/// A path as the permission engine sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute and lexically normalised.
    pub lexical: PathBuf,
    /// With symlinks resolved, when that differs from `lexical`.
    pub real: Option<PathBuf>,
}

impl ResolvedPath {
    /// Both forms (one when they agree).
    pub fn forms(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.lexical.as_path()).chain(self.real.as_deref())
    }
}

/// The current directory, the home directory and the working directories of a session.
#[derive(Clone, Debug)]
pub struct WorkingDirs {
    cwd: PathBuf,
    home: PathBuf,
    /// Each working directory in lexical form and, when different, canonical form.
    dirs: Vec<PathBuf>,
    /// Each working directory's lexical form with its canonical form (resolved once, when the
    /// session started), deepest first: paths below one are resolved from it.
    anchors: Vec<(PathBuf, PathBuf)>,
}

impl WorkingDirs {
    /// `cwd` (which must be absolute) is the first working directory; `additional` are added.
    pub fn new(cwd: &Path, home: &Path, additional: &[PathBuf]) -> Self {
        let cwd = normalize(cwd);
        let home = normalize(home);
        let mut dirs = Vec::new();
        let mut anchors = Vec::new();
        for d in std::iter::once(&cwd).chain(additional.iter()) {
            let lexical = normalize(&absolute(&cwd, &home, d));
            if let Ok(real) = std::fs::canonicalize(&lexical) {
                anchors.push((lexical.clone(), real.clone()));
                if real != lexical && !dirs.contains(&real) {
                    dirs.push(real);
                }
            }
            if !dirs.contains(&lexical) {
                dirs.push(lexical);
            }
        }
        anchors.sort_by_key(|(l, _)| std::cmp::Reverse(l.components().count()));
        Self {
            cwd,
            home,
            dirs,
            anchors,
        }
    }

    /// The current directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The home directory.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The working directories (lexical and canonical forms).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Resolves a path written by a tool or a command, relative to the session's cwd.
    pub fn resolve(&self, path: &str) -> ResolvedPath {
        self.resolve_from(&self.cwd, path)
    }

    /// Resolves a path relative to `base` (the directory a `cd` moved to). The lexical form
    /// folds `..` textually; the real form walks the path as the kernel does (a symlink is
    /// followed before a `..` after it applies), so `link/../k` is judged as the file it opens.
    pub fn resolve_from(&self, base: &Path, path: &str) -> ResolvedPath {
        let joined = absolute(base, &self.home, Path::new(path));
        let lexical = normalize(&joined);
        // Below a working directory (compared component by component on the unnormalised
        // path, so a `..` is still walked), start from its canonical form.
        let real = self
            .anchors
            .iter()
            .find_map(|(dir, real)| {
                let rest = joined.strip_prefix(dir).ok()?;
                Some(crate::paths::resolve_beneath(real, rest))
            })
            .unwrap_or_else(|| crate::paths::resolve(&joined))
            .ok()
            .filter(|r| *r != lexical);
        ResolvedPath { lexical, real }
    }

    /// Whether every form of the path is inside a working directory (segment-wise: `/p` never
    /// contains `/p-backup`).
    pub fn contains(&self, path: &ResolvedPath) -> bool {
        path.forms()
            .all(|p| self.dirs.iter().any(|d| p.starts_with(d)))
    }

    /// Whether `path` is the filesystem root, a top-level directory, the home directory, or a
    /// working directory or one of its parents (the critical paths of claude-code.md §4.3).
    pub fn is_critical(&self, path: &Path) -> bool {
        let depth = path
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .count();
        depth <= 1
            || path == self.home
            || self.home.starts_with(path)
            || self.dirs.iter().any(|d| d.starts_with(path))
    }
}

/// Makes `path` absolute: `~` and `~/x` against `home`, relative paths against `cwd`.
fn absolute(cwd: &Path, home: &Path, path: &Path) -> PathBuf {
    let s = path.to_string_lossy();
    if s == "~" {
        home.to_path_buf()
    } else if let Some(rest) = s.strip_prefix("~/") {
        // `~//x` is `$HOME/x` (repeated slashes are one), never `/x`.
        home.join(rest.trim_start_matches('/'))
    } else if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

pub use crate::paths::normalize;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_path_with_repeated_slashes_stays_in_home() {
        assert_eq!(
            absolute(
                Path::new("/w"),
                Path::new("/home/me"),
                Path::new("~//.bashrc")
            ),
            PathBuf::from("/home/me/.bashrc")
        );
        assert_eq!(
            absolute(
                Path::new("/w"),
                Path::new("/home/me"),
                Path::new("~///a//b")
            ),
            PathBuf::from("/home/me/a//b")
        );
    }

    #[test]
    fn lexical_normalisation() {
        assert_eq!(
            normalize(Path::new("/a/./b//c/../d/")),
            PathBuf::from("/a/b/d")
        );
        assert_eq!(normalize(Path::new("/../../etc")), PathBuf::from("/etc"));
    }

    #[test]
    fn resolution_and_containment() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let proj = root.join("proj");
        std::fs::create_dir_all(proj.join("src")).unwrap();
        std::fs::create_dir_all(root.join("proj-backup")).unwrap();
        std::os::unix::fs::symlink("/etc", proj.join("link")).unwrap();
        let w = WorkingDirs::new(&proj, Path::new("/home/u"), &[]);
        assert!(w.contains(&w.resolve("src/new.rs")));
        assert!(w.contains(&w.resolve("./src/../x")));
        assert!(!w.contains(&w.resolve("../proj-backup/x")));
        assert!(!w.contains(&w.resolve("../../x")));
        let through_link = w.resolve("link/passwd");
        assert_eq!(through_link.real.as_deref(), Some(Path::new("/etc/passwd")));
        assert!(!w.contains(&through_link));
        assert_eq!(w.resolve("~/x").lexical, PathBuf::from("/home/u/x"));
        // A symlink deeper down, and a dangling one.
        std::fs::create_dir_all(proj.join("src/a")).unwrap();
        std::os::unix::fs::symlink(root.join("proj-backup"), proj.join("src/a/out")).unwrap();
        assert!(!w.contains(&w.resolve("src/a/out/new.txt")));
        std::os::unix::fs::symlink("/nonexistent/target", proj.join("dangling")).unwrap();
        let d = w.resolve("dangling");
        assert!(d.real.is_none() || !w.contains(&d), "{d:?}");
    }

    #[test]
    fn critical_paths() {
        let w = WorkingDirs::new(
            Path::new("/work/p"),
            Path::new("/home/u"),
            &[PathBuf::from("/data/extra")],
        );
        for p in [
            "/",
            "/usr",
            "/home",
            "/home/u",
            "/work",
            "/work/p",
            "/data/extra",
            "/data",
        ] {
            assert!(w.is_critical(Path::new(p)), "{p}");
        }
        for p in ["/work/p/build", "/home/u/x", "/usr/lib", "/data/extra/x"] {
            assert!(!w.is_critical(Path::new(p)), "{p}");
        }
    }
}
