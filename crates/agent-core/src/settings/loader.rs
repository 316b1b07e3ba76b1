//! [`SettingsLoader`]: which files load, in which order, and whether the project is trusted.

use std::path::PathBuf;

use super::parse::{absolute, parse_text};
use super::{SettingSources, Settings, SettingsError, TrustedFolders};
use crate::home::AgentHome;
use crate::permissions::Scope;

/// Loads and merges settings files.
#[derive(Clone, Debug)]
pub struct SettingsLoader {
    home: PathBuf,
    agent_home: AgentHome,
    project_dir: PathBuf,
    cwd: PathBuf,
    cli_files: Vec<PathBuf>,
    sources: SettingSources,
    trust_override: Option<bool>,
}

impl SettingsLoader {
    /// A loader for a session in `cwd` whose project is `project_dir`, with the home directory
    /// `home` and `$AGENT_HOME` = `home/.agent`. Defaults: sources user, project, local and
    /// claude;
    /// trust read from `$AGENT_HOME/trust.json`; no `--settings` files.
    pub fn new(
        home: impl Into<PathBuf>,
        project_dir: impl Into<PathBuf>,
        cwd: impl Into<PathBuf>,
    ) -> Self {
        let home = home.into();
        Self {
            agent_home: AgentHome::new(home.join(".agent")),
            home,
            project_dir: project_dir.into(),
            cwd: cwd.into(),
            cli_files: Vec::new(),
            sources: SettingSources::default(),
            trust_override: None,
        }
    }

    /// Sets `$AGENT_HOME` (where the user settings and the trusted folders live).
    pub fn agent_home(mut self, home: &AgentHome) -> Self {
        self.agent_home = home.clone();
        self
    }

    /// Adds a `--settings FILE` (highest precedence; later files win over earlier ones).
    pub fn settings_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.cli_files.push(file.into());
        self
    }

    /// Chooses which standard files load.
    pub fn sources(mut self, sources: SettingSources) -> Self {
        self.sources = sources;
        self
    }

    /// Treats the project as trusted (`true`) or untrusted (`false`) instead of asking the
    /// trust store.
    pub fn trusted(mut self, trusted: bool) -> Self {
        self.trust_override = Some(trusted);
        self
    }

    /// The files that would be read, with their scopes, lowest precedence first.
    pub fn candidates(&self) -> Vec<(PathBuf, Scope, bool, PathBuf)> {
        let mut out = Vec::new();
        let s = self.sources;
        let claude_home = self.home.join(".claude");
        if s.user {
            if s.claude {
                out.push((
                    claude_home.join("settings.json"),
                    Scope::User,
                    true,
                    claude_home.clone(),
                ));
            }
            out.push((
                self.agent_home.settings(),
                Scope::User,
                false,
                self.agent_home.root().to_path_buf(),
            ));
        }
        if s.project {
            if s.claude {
                out.push((
                    self.project_dir.join(".claude/settings.json"),
                    Scope::Project,
                    true,
                    self.project_dir.clone(),
                ));
            }
            out.push((
                self.project_dir.join(".agent/settings.json"),
                Scope::Project,
                false,
                self.project_dir.clone(),
            ));
        }
        if s.local {
            if s.claude {
                out.push((
                    self.project_dir.join(".claude/settings.local.json"),
                    Scope::Local,
                    true,
                    self.cwd.clone(),
                ));
            }
            out.push((
                self.project_dir.join(".agent/settings.local.json"),
                Scope::Local,
                false,
                self.cwd.clone(),
            ));
        }
        out
    }

    /// Reads, validates and merges every file.
    ///
    /// # Errors
    /// The first file that cannot be read, is not valid JSON, has a key of the wrong type, or
    /// holds a malformed rule; or a trust store that cannot be read.
    pub fn load(&self) -> Result<Settings, SettingsError> {
        let project_trusted = match self.trust_override {
            Some(t) => t,
            None => TrustedFolders::load(self.agent_home.trusted_folders())?
                .is_trusted(&self.project_dir),
        };
        let mut files = Vec::new();
        for (path, scope, claude, root) in self.candidates() {
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(SettingsError::Io { path, source }),
            };
            let trusted = !matches!(scope, Scope::Project | Scope::Local) || project_trusted;
            files.push(parse_text(
                path, &text, scope, claude, root, trusted, &self.home,
            )?);
        }
        for path in &self.cli_files {
            let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Io {
                path: path.clone(),
                source,
            })?;
            let root = path.parent().map_or_else(
                || self.cwd.clone(),
                |p| {
                    if p.as_os_str().is_empty() {
                        self.cwd.clone()
                    } else {
                        absolute(&self.cwd, p)
                    }
                },
            );
            files.push(parse_text(
                absolute(&self.cwd, path),
                &text,
                Scope::Cli,
                false,
                root,
                true,
                &self.home,
            )?);
        }
        let mut settings = Settings {
            project_trusted,
            ..Settings::default()
        };
        for (file, parsed) in files {
            settings.merge(file, parsed)?;
        }
        Ok(settings)
    }
}
