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
            .and_then(|(from, to)| path.strip_prefix(from).ok().map(|rest| to.join(rest)))
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

    fn vars(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}
