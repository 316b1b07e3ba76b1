//! The runtime's home folder, `$AGENT_HOME` (default `~/.agent`), and the paths under it.
//!
//! The environment is read once, by [`AgentHome::from_env`] (the CLI calls it); library code
//! takes an [`AgentHome`] (or a path from it) as a parameter and never reads `AGENT_HOME` or
//! `HOME` itself, so an embedder decides where state lives.
//!
//! ```
//! use agent_core::home::AgentHome;
//! use std::path::Path;
//!
//! let home = AgentHome::new("/home/me/.agent");
//! assert_eq!(home.settings(), Path::new("/home/me/.agent/settings.json"));
//! assert_eq!(home.sessions(), Path::new("/home/me/.agent/sessions"));
//! assert_eq!(home.trusted_keys(), Path::new("/home/me/.agent/keys/trusted.json"));
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable that sets the home folder.
pub(crate) const AGENT_HOME_ENV: &str = "AGENT_HOME";

/// Occurs when the home folder cannot be found from the environment.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "neither AGENT_HOME nor HOME is set; set AGENT_HOME to the agent's home folder (or HOME, whose .agent folder is the default)"
)]
pub struct NoAgentHome;

/// `$AGENT_HOME`: where the user's settings, trusted folders and keys, sessions, workspaces and
/// bundles live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentHome {
    root: PathBuf,
}

impl AgentHome {
    /// The home folder at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `$AGENT_HOME` when it is set and not empty, else `$HOME/.agent`.
    ///
    /// # Errors
    /// [`NoAgentHome`] when neither is set (or both are empty).
    pub fn from_env() -> Result<Self, NoAgentHome> {
        Self::from_vars(std::env::var_os(AGENT_HOME_ENV), std::env::var_os("HOME"))
    }

    /// [`AgentHome::from_env`] over the values of `AGENT_HOME` and `HOME`.
    fn from_vars(
        agent_home: Option<OsString>,
        home: Option<OsString>,
    ) -> Result<Self, NoAgentHome> {
        if let Some(root) = agent_home.filter(|h| !h.is_empty()) {
            return Ok(Self::new(root));
        }
        match home.filter(|h| !h.is_empty()) {
            Some(home) => Ok(Self::new(PathBuf::from(home).join(".agent"))),
            None => Err(NoAgentHome),
        }
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The user settings file: `settings.json`.
    pub fn settings(&self) -> PathBuf {
        self.root.join("settings.json")
    }

    /// The trusted folders (whose project settings may grant): `trust.json`.
    pub fn trusted_folders(&self) -> PathBuf {
        self.root.join("trust.json")
    }

    /// The key files of bundle signing: `keys`.
    pub fn keys(&self) -> PathBuf {
        self.root.join("keys")
    }

    /// The trusted signing keys of bundles: `keys/trusted.json`.
    pub fn trusted_keys(&self) -> PathBuf {
        self.keys().join("trusted.json")
    }

    /// The bundle cache: `bundles`.
    pub fn bundles(&self) -> PathBuf {
        self.root.join("bundles")
    }

    /// The session store: `sessions`.
    pub fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// The state of imported workspaces: `workspaces`.
    pub fn workspaces(&self) -> PathBuf {
        self.root.join("workspaces")
    }

    /// Where hook output too large to hold is spilled: `hook-output`.
    pub fn hook_output(&self) -> PathBuf {
        self.root.join("hook-output")
    }

    /// Where session transcripts are written: `transcripts`.
    pub fn transcripts(&self) -> PathBuf {
        self.root.join("transcripts")
    }

    /// The line editor's history of `agent chat`: `history`.
    pub fn history(&self) -> PathBuf {
        self.root.join("history")
    }

    /// The state a tool keeps between runs: `tool-state`.
    pub fn tool_state(&self) -> PathBuf {
        self.root.join("tool-state")
    }

    /// The demo folders: `demo`.
    pub fn demo(&self) -> PathBuf {
        self.root.join("demo")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_home_wins_over_home() {
        let h = AgentHome::from_vars(Some("/a".into()), Some("/h".into())).unwrap();
        assert_eq!(h.root(), Path::new("/a"));
    }

    #[test]
    fn default_is_dot_agent_under_home_and_empty_counts_as_unset() {
        let h = AgentHome::from_vars(Some("".into()), Some("/h".into())).unwrap();
        assert_eq!(h.root(), Path::new("/h/.agent"));
        assert_eq!(h.workspaces(), Path::new("/h/.agent/workspaces"));
    }

    #[test]
    fn neither_set_is_an_error_that_says_what_to_set() {
        let e = AgentHome::from_vars(None, Some("".into())).unwrap_err();
        assert!(e.to_string().contains("set AGENT_HOME"));
    }
}
