//! What assembly reads from the machine: the home directory, the current directory, symlink
//! resolution, which paths exist, and the environment. Behind a trait so that the same inputs
//! give byte-identical policies on any machine, and tests can pin every answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::ProfileError;

/// The machine facts assembly and rendering depend on.
pub trait Host {
    /// The user's home directory (absolute).
    ///
    /// # Errors
    /// [`ProfileError::Host`] when it cannot be determined.
    fn home_dir(&self) -> Result<PathBuf, ProfileError>;
    /// The current directory (absolute).
    ///
    /// # Errors
    /// [`ProfileError::Host`] when it cannot be read.
    fn current_dir(&self) -> Result<PathBuf, ProfileError>;
    /// `path` (absolute, lexically normal) with every symlink resolved; the path itself when it
    /// does not exist.
    fn resolve(&self, path: &Path) -> PathBuf;
    /// Whether `path` exists (without following a final symlink).
    fn exists(&self, path: &Path) -> bool;
    /// Whether a grant of `path` is a directory grant: false only for a path that exists and
    /// is not a directory (following symlinks). A directory grant is a `subpath`, a file grant
    /// a `literal`; a path that does not exist yet is granted as a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// The Git worktree layout of `workdir` when `workdir` is the root of a Git checkout (see
    /// [`GitWorktrees`]); empty otherwise.
    fn git_worktrees(&self, workdir: &Path) -> GitWorktrees;
    /// The environment variables, sorted by name.
    fn vars(&self) -> Vec<(String, String)>;
}

/// The real machine.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemHost;

impl Host for SystemHost {
    fn home_dir(&self) -> Result<PathBuf, ProfileError> {
        match std::env::var_os("HOME") {
            Some(h) if Path::new(&h).is_absolute() => Ok(PathBuf::from(h)),
            _ => Err(ProfileError::Host(
                "HOME is not set to an absolute path; set it, or inject a Host".into(),
            )),
        }
    }

    fn current_dir(&self) -> Result<PathBuf, ProfileError> {
        std::env::current_dir()
            .map_err(|e| ProfileError::Host(format!("cannot read the current directory: {e}")))
    }

    fn resolve(&self, path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }

    fn exists(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok()
    }

    fn is_dir(&self, path: &Path) -> bool {
        std::fs::metadata(path).map_or(true, |m| m.is_dir())
    }

    fn git_worktrees(&self, workdir: &Path) -> GitWorktrees {
        GitWorktrees::discover(workdir)
    }

    fn vars(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        v.sort();
        v
    }
}

/// A machine described in code: for tests, and for rendering a policy for another machine.
#[derive(Clone, Debug, Default)]
pub struct FixedHost {
    /// The home directory.
    pub home: PathBuf,
    /// The current directory.
    pub cwd: PathBuf,
    /// Symlinks: a path starting with a key is rewritten to start with its value.
    pub links: BTreeMap<PathBuf, PathBuf>,
    /// Paths that exist (anything else does not).
    pub existing: Vec<PathBuf>,
    /// The environment.
    pub vars: BTreeMap<String, String>,
    /// Paths that are files rather than directories (anything else counts as a directory).
    pub files: Vec<PathBuf>,
    /// The Git worktree layout reported for every workdir.
    pub worktrees: GitWorktrees,
}

impl Host for FixedHost {
    fn home_dir(&self) -> Result<PathBuf, ProfileError> {
        Ok(self.home.clone())
    }

    fn current_dir(&self) -> Result<PathBuf, ProfileError> {
        Ok(self.cwd.clone())
    }

    fn resolve(&self, path: &Path) -> PathBuf {
        // The longest matching link wins, as a real resolution would follow the deepest one
        // last; one level is enough for tests.
        self.links
            .iter()
            .filter(|(from, _)| path.starts_with(from))
            .max_by_key(|(from, _)| from.as_os_str().len())
            .and_then(|(from, to)| {
                path.strip_prefix(from).ok().map(|rest| {
                    if rest.as_os_str().is_empty() {
                        to.clone()
                    } else {
                        to.join(rest)
                    }
                })
            })
            .map(|p| {
                if p.as_os_str().is_empty() {
                    PathBuf::from("/")
                } else {
                    p
                }
            })
            .unwrap_or_else(|| path.to_path_buf())
    }

    fn exists(&self, path: &Path) -> bool {
        self.existing.iter().any(|p| p == path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        !self.files.iter().any(|p| p == path)
    }

    fn git_worktrees(&self, _workdir: &Path) -> GitWorktrees {
        self.worktrees.clone()
    }

    fn vars(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// Where Git keeps the metadata of a checkout that is a linked worktree, and the repository's
/// other worktrees: what Agent Safehouse's `worktree-common-dir` and `worktrees` integrations
/// grant (the shared metadata read-write, sibling worktrees read-only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitWorktrees {
    /// The shared Git directory when the workdir is a linked worktree (its `.git` file points
    /// to an admin directory whose `commondir` names it).
    pub common_dir: Option<PathBuf>,
    /// The repository's other worktrees (the main one included when the workdir is a linked
    /// one), the workdir itself excluded.
    pub linked: Vec<PathBuf>,
}

impl GitWorktrees {
    /// Reads the layout from the files Git documents (gitrepository-layout(5),
    /// git-worktree(1)) without running Git: the workdir must be a checkout's root (a `.git`
    /// directory with `HEAD`, `objects/` and `refs/`, or a `gitdir:` file); anything
    /// unreadable or unusual gives an empty answer, which grants nothing.
    pub fn discover(workdir: &Path) -> Self {
        let marker = workdir.join(".git");
        let canonical = |p: &Path| std::fs::canonicalize(p).ok();
        let (common_dir, list_from) = if marker.is_dir() {
            if !(marker.join("HEAD").is_file()
                && marker.join("objects").is_dir()
                && marker.join("refs").is_dir())
            {
                return Self::default();
            }
            (None, canonical(&marker))
        } else {
            let Some(admin) = gitdir_file(&marker).and_then(|g| canonical(&workdir.join(g))) else {
                return Self::default();
            };
            if !admin.join("HEAD").is_file() {
                return Self::default();
            }
            let common = std::fs::read_to_string(admin.join("commondir"))
                .ok()
                .and_then(|t| t.lines().next().map(str::to_owned))
                .filter(|l| !l.is_empty())
                .and_then(|rel| canonical(&admin.join(rel)))
                .filter(|c| c.is_dir() && *c != admin);
            (common.clone(), common)
        };
        let Some(common) = list_from else {
            return Self::default();
        };
        let mut linked = Vec::new();
        let workdir_real = canonical(workdir).unwrap_or_else(|| workdir.to_path_buf());
        if common_dir.is_some() {
            // The main worktree: the directory holding the common `.git`.
            match common.parent() {
                Some(main) if main.join(".git").is_dir() => linked.push(main.to_path_buf()),
                _ => return Self { common_dir, linked },
            }
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(common.join("worktrees"))
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for entry in entries {
            let Some(line) = std::fs::read_to_string(entry.join("gitdir"))
                .ok()
                .and_then(|t| t.lines().next().map(str::to_owned))
                .filter(|l| !l.is_empty())
            else {
                continue;
            };
            let Some(git_file) = canonical(&entry.join(line)) else {
                continue;
            };
            if let Some(tree) = git_file.parent().filter(|t| t.is_dir())
                && !linked.iter().any(|l| l == tree)
            {
                linked.push(tree.to_path_buf());
            }
        }
        linked.retain(|l| *l != workdir_real);
        Self { common_dir, linked }
    }
}

/// The target of a `gitdir: PATH` file.
fn gitdir_file(marker: &Path) -> Option<String> {
    let text = std::fs::read_to_string(marker).ok()?;
    let first = text.lines().next()?;
    first
        .strip_prefix("gitdir: ")
        .filter(|g| !g.is_empty())
        .map(str::to_owned)
}
