//! Settings files: where they are, how they merge, and when a project's may grant anything.
//!
//! Files, lowest precedence first (Claude Code's `.claude/` twins, `~/.claude/settings.json`,
//! `<project>/.claude/settings.json` and `<project>/.claude/settings.local.json`, load just below
//! each `.agent/` file unless the `claude` source is turned off):
//!
//! | scope | file | `/path` rules anchor at |
//! |---|---|---|
//! | user | `$AGENT_HOME/settings.json` (default `~/.agent`) | `$AGENT_HOME` |
//! | project | `<project>/.agent/settings.json` | the project root |
//! | local | `<project>/.agent/settings.local.json` | the current directory |
//! | cli | each `--settings FILE`, in order | the file's folder |
//!
//! Lists (`allow`, `ask`, `deny`, `additionalDirectories`) concatenate across files, without
//! duplicates; every deny is checked before any allow, so a deny anywhere wins. Scalars
//! (`defaultMode`, `sandbox.enabled`, ...) come from the highest-precedence file that sets them.
//! A project's (and local file's) deny and ask rules apply at once; its allow rules, additional
//! directories and default mode apply only when the folder is trusted ([`TrustedFolders`]).
//! A file that is not valid JSON, has a key of the wrong type, or holds a malformed rule is
//! refused whole: loading fails with the file, the key or rule index, and what is wrong. A key
//! that neither this runtime nor Claude Code reads is ignored with one warning per file, naming
//! the nearest known key ([`known_keys`]).
//!
//! Every layer reads the merged [`Settings`]: the permission engine its rules, hooks their
//! blocks, the sandbox, MCP, the Bash backend and the providers theirs. What an untrusted (or
//! trusted) project's file may set at all is the [`trust_table`]'s to say, applied before any
//! key is read.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::modes::PermissionMode;
use crate::permissions::rules::{Anchor, RuleContent};
use crate::permissions::{RuleEntry, RuleList, Scope};

mod folder_trust;
pub mod known_keys;
mod loader;
mod parse;
mod sessions;
pub mod trust_table;

pub use folder_trust::{FolderTrustError, TrustedFolder, TrustedFolders};
pub use loader::SettingsLoader;
use parse::{ParsedPermissions, parse_file};
pub use sessions::{FromFile, SESSIONS_KEY, SessionsBackend, SessionsSettings};

/// Which settings files load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettingSources {
    /// `$AGENT_HOME/settings.json`
    pub user: bool,
    /// `<project>/.agent/settings.json`
    pub project: bool,
    /// `<project>/.agent/settings.local.json`
    pub local: bool,
    /// The `.claude/` twins of the enabled sources (`~/.claude/settings.json`, ...).
    pub claude: bool,
}

impl Default for SettingSources {
    /// All four: `user`, `project`, `local` and `claude` (the Claude Code settings a user
    /// already has are read, under the same trust rules as ours).
    fn default() -> Self {
        Self {
            user: true,
            project: true,
            local: true,
            claude: true,
        }
    }
}

impl FromStr for SettingSources {
    type Err = String;

    /// A comma-separated list of `user`, `project`, `local`, `claude` (empty: none).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = Self {
            user: false,
            project: false,
            local: false,
            claude: false,
        };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "user" => out.user = true,
                "project" => out.project = true,
                "local" => out.local = true,
                "claude" => out.claude = true,
                other => {
                    return Err(format!(
                        "unknown setting source `{other}`; expected a comma-separated list of user, project, local, claude"
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// Why settings could not be loaded. Each names the file and what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// Occurs when a settings file exists but cannot be read (or a `--settings` file is missing).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Occurs when a file is not valid JSON.
    #[error("{}:{line}:{column}: not valid JSON: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// Occurs when a key has the wrong type or value.
    #[error("{}: `{key}` {problem}; the whole file is ignored until this is fixed", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key, e.g. `permissions.allow[3]`.
        key: String,
        /// What is wrong.
        problem: String,
    },
    /// Occurs when a key's value needs another key that no settings file sets (`sessions.backend:
    /// "postgres"` without `sessions.url`).
    #[error("{}: `{key}` {problem}", path.display())]
    Incomplete {
        /// The file that set the key.
        path: PathBuf,
        /// The key, e.g. `sessions.backend`.
        key: String,
        /// What is missing and how to add it.
        problem: String,
    },
    /// Occurs when a rule does not parse.
    #[error("{}: permissions.{}[{index}] {rule:?}: {reason}; the whole file is ignored until this rule is fixed or removed", path.display(), list.as_str())]
    Rule {
        /// The file.
        path: PathBuf,
        /// The list.
        list: RuleList,
        /// Index in the list.
        index: usize,
        /// The rule text.
        rule: String,
        /// What is wrong.
        reason: String,
    },
    /// Occurs when `bypassPermissions` is requested but a settings file disables it.
    #[error("bypassPermissions is disabled by {} (disableBypassPermissionsMode); choose another mode", path.display())]
    BypassDisabled {
        /// The file that disables it.
        path: PathBuf,
    },
    /// Occurs when `auto` is requested but a settings file disables it.
    #[error("auto mode is disabled by {} (disableAutoMode); choose another mode", path.display())]
    AutoDisabled {
        /// The file that disables it.
        path: PathBuf,
    },
    /// Occurs when the trust store cannot be read.
    #[error(transparent)]
    Trust(#[from] FolderTrustError),
}

/// One settings file that loaded.
#[derive(Clone, Debug)]
pub struct SettingsFile {
    /// Where it is (or a label for settings given in code).
    pub path: PathBuf,
    /// Its scope.
    pub scope: Scope,
    /// Whether it is a Claude Code (`.claude/`) file.
    pub claude: bool,
    /// Where its `/path` rules anchor.
    pub root: PathBuf,
    /// Whether it may grant capabilities (not an untrusted project file).
    pub trusted: bool,
    /// The JSON object, less what the trust table removed (the `hooks` and `sandbox` blocks
    /// are read from here).
    pub value: Map<String, Value>,
    /// The dotted paths of the keys the trust table removed from this file (see
    /// [`trust_table::restrict`]).
    pub dropped: Vec<String>,
}

/// Merged settings.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// The files that loaded, lowest precedence first.
    pub files: Vec<SettingsFile>,
    /// Deny rules, in load order.
    pub deny: Vec<RuleEntry>,
    /// Ask rules.
    pub ask: Vec<RuleEntry>,
    /// Allow rules (only from trusted files).
    pub allow: Vec<RuleEntry>,
    /// Extra working directories, absolute.
    pub additional_directories: Vec<PathBuf>,
    /// The starting mode, and the file that set it.
    pub default_mode: Option<(PermissionMode, PathBuf)>,
    /// The file that disables `bypassPermissions`, if one does.
    pub bypass_disabled_by: Option<PathBuf>,
    /// The file that disables `auto`, if one does.
    pub auto_disabled_by: Option<PathBuf>,
    /// `sandbox.enabled` as the files set it (`false` when none does: see
    /// [`Self::os_sandbox_off`] for what that means for host commands).
    pub sandbox_enabled: bool,
    /// Whether Bash calls are approved because they run sandboxed: the user's own settings
    /// (user file or `--settings`) set `sandbox.enabled: true` and did not set
    /// `sandbox.autoAllowBashIfSandboxed: false`; a project never turns this on.
    pub auto_allow_bash_if_sandboxed: bool,
    /// The file whose `sandbox.enabled` is in force, and its scope (`None`: no file sets it, and
    /// host commands run in the OS sandbox, this runtime's default).
    pub sandbox_enabled_by: Option<(Scope, PathBuf)>,
    /// The last `sandbox.autoAllowBashIfSandboxed` of the user's own files.
    pub user_auto_allow_bash: Option<bool>,
    /// Whether the project folder is trusted.
    pub project_trusted: bool,
    /// Things a user should know: ignored rules, untrusted allow rules, ...
    pub warnings: Vec<String>,
}

impl Settings {
    /// The mode to start in: `requested` (e.g. a CLI flag) or the settings' default, checked
    /// against `disableBypassPermissionsMode` and `disableAutoMode`.
    ///
    /// # Errors
    /// [`SettingsError::BypassDisabled`] / [`SettingsError::AutoDisabled`].
    pub fn mode(&self, requested: Option<PermissionMode>) -> Result<PermissionMode, SettingsError> {
        let mode = requested
            .or(self.default_mode.as_ref().map(|(m, _)| *m))
            .unwrap_or_default();
        match (mode, &self.bypass_disabled_by, &self.auto_disabled_by) {
            (PermissionMode::BypassPermissions, Some(path), _) => {
                Err(SettingsError::BypassDisabled { path: path.clone() })
            }
            (PermissionMode::Auto, _, Some(path)) => {
                Err(SettingsError::AutoDisabled { path: path.clone() })
            }
            _ => Ok(mode),
        }
    }

    /// The file that turned the OS sandbox off for host commands (`sandbox.enabled: false`
    /// in the file that decides), if one did. Only sources that may grant can: an untrusted
    /// project's `false` is dropped when it loads.
    pub fn os_sandbox_off(&self) -> Option<&Path> {
        match &self.sandbox_enabled_by {
            Some((_, path)) if !self.sandbox_enabled => Some(path),
            _ => None,
        }
    }

    /// Where sessions are kept: the `sessions` blocks of the files, merged (see
    /// [`SessionsSettings`]).
    ///
    /// # Errors
    /// As [`SessionsSettings::from_files`]: `"backend": "postgres"` without a `url`.
    pub fn sessions(&self) -> Result<SessionsSettings, SettingsError> {
        SessionsSettings::from_files(&self.files)
    }

    /// Settings from one JSON object given in code (scope `cli`, trusted), e.g. an SDK option.
    /// `root` anchors its `/path` rules and relative directories; `home` expands `~/`.
    ///
    /// # Errors
    /// As for a file: a wrong type or a malformed rule.
    pub fn from_value(
        value: Value,
        label: &str,
        root: &Path,
        home: &Path,
    ) -> Result<Self, SettingsError> {
        let file = parse_file(
            PathBuf::from(label),
            value,
            Scope::Cli,
            false,
            root.to_path_buf(),
            true,
            home,
        )?;
        let mut settings = Self {
            project_trusted: true,
            ..Self::default()
        };
        settings.merge(file.0, file.1)?;
        Ok(settings)
    }

    fn merge(
        &mut self,
        file: SettingsFile,
        parsed: ParsedPermissions,
    ) -> Result<(), SettingsError> {
        let trusted = file.trusted;
        let mut skipped = 0usize;
        for (list, entries) in [
            (RuleList::Deny, parsed.deny),
            (RuleList::Ask, parsed.ask),
            (RuleList::Allow, parsed.allow),
        ] {
            for entry in entries {
                if list == RuleList::Allow && !trusted {
                    skipped += 1;
                    continue;
                }
                let target = match list {
                    RuleList::Deny => &mut self.deny,
                    RuleList::Ask => &mut self.ask,
                    RuleList::Allow => &mut self.allow,
                };
                // `/path` rules mean different paths in different files; others are the same.
                let anchored = matches!(
                    &entry.rule.content,
                    RuleContent::Path { pattern, .. } if pattern.anchor == Anchor::SettingsRoot
                );
                let duplicate = target.iter().any(|e| {
                    e.rule.text == entry.rule.text
                        && (!anchored || e.settings_root == entry.settings_root)
                });
                if !duplicate {
                    target.push(entry);
                }
            }
        }
        // The trust table has already removed what an untrusted file may not set (granting keys,
        // loosening modes); the checks here hold that line a second time.
        if trusted {
            for d in parsed.additional_directories {
                if !self.additional_directories.contains(&d) {
                    self.additional_directories.push(d);
                }
            }
        } else if skipped + parsed.additional_directories.len() > 0 {
            self.warnings.push(format!(
                "{}: allow rules and additional directories ignored because this folder is not trusted; trust it with `agent trust` or pass --trust",
                file.path.display()
            ));
        }
        if let Some(mode) = parsed.default_mode {
            let project = matches!(file.scope, Scope::Project | Scope::Local);
            if mode == PermissionMode::Auto && project {
                self.warnings.push(format!(
                    "{}: defaultMode `auto` is ignored in project and local settings; set it in user settings or with --mode",
                    file.path.display()
                ));
            } else if trusted
                || trust_table::spec("permissions.defaultMode")
                    .is_some_and(|k| k.tightens(&Value::String(mode.as_str().to_owned())))
            {
                self.default_mode = Some((mode, file.path.clone()));
            }
        }
        if parsed.disable_bypass {
            self.bypass_disabled_by = Some(file.path.clone());
        }
        if parsed.disable_auto {
            self.auto_disabled_by = Some(file.path.clone());
        }
        if let Some(b) = parsed.sandbox_enabled {
            self.sandbox_enabled = b;
            self.sandbox_enabled_by = Some((file.scope, file.path.clone()));
        }
        if let Some(b) = parsed.auto_allow_bash {
            // Only the user's own files reach here with this key (the trust table drops it
            // from project files, trusted or not).
            self.user_auto_allow_bash = Some(b);
        }
        // `autoAllowBashIfSandboxed` applies only when the user (user settings or --settings)
        // turned the sandbox on, and the option (default true, as in Claude Code) is not off:
        // a project's `sandbox.enabled: true` restricts and never approves anything.
        self.auto_allow_bash_if_sandboxed = self.sandbox_enabled
            && matches!(
                &self.sandbox_enabled_by,
                Some((Scope::User | Scope::Cli, _))
            )
            && self.user_auto_allow_bash.unwrap_or(true);
        self.warnings.extend(parsed.warnings);
        self.files.push(file);
        Ok(())
    }
}
