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
//! directories and default mode apply only when the folder is trusted ([`super::TrustStore`]).
//! A file that is not valid JSON, has a key of the wrong type, or holds a malformed rule is
//! refused whole: loading fails with the file, the key or rule index, and what is wrong. A key
//! that neither this runtime nor Claude Code reads is ignored with one warning per file, naming
//! the nearest known key ([`super::known_keys`]).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::{Map, Value};

use super::decision::{RuleList, RuleOrigin, Scope};
use super::rules::{Anchor, Parsed, RuleContent, parse_rule};
use super::ruleset::RuleEntry;
use super::trust::{TrustError, TrustStore};
use crate::modes::PermissionMode;

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
    Trust(#[from] TrustError),
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
    /// [`super::settings_keys::restrict`]).
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
                || super::settings_keys::spec("permissions.defaultMode")
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

/// What one file's `permissions` and `sandbox` blocks say, validated.
#[derive(Debug, Default)]
struct ParsedPermissions {
    allow: Vec<RuleEntry>,
    ask: Vec<RuleEntry>,
    deny: Vec<RuleEntry>,
    additional_directories: Vec<PathBuf>,
    default_mode: Option<PermissionMode>,
    disable_bypass: bool,
    disable_auto: bool,
    sandbox_enabled: Option<bool>,
    auto_allow_bash: Option<bool>,
    warnings: Vec<String>,
}

/// Loads and merges settings files.
#[derive(Clone, Debug)]
pub struct SettingsLoader {
    home: PathBuf,
    agent_home: PathBuf,
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
            agent_home: home.join(".agent"),
            home,
            project_dir: project_dir.into(),
            cwd: cwd.into(),
            cli_files: Vec::new(),
            sources: SettingSources::default(),
            trust_override: None,
        }
    }

    /// Sets `$AGENT_HOME` (where the user settings and the trust store live).
    pub fn agent_home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.agent_home = dir.into();
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
                self.agent_home.join("settings.json"),
                Scope::User,
                false,
                self.agent_home.clone(),
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
            None => {
                TrustStore::load(self.agent_home.join("trust.json"))?.is_trusted(&self.project_dir)
            }
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

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

fn parse_text(
    path: PathBuf,
    text: &str,
    scope: Scope,
    claude: bool,
    root: PathBuf,
    trusted: bool,
    home: &Path,
) -> Result<(SettingsFile, ParsedPermissions), SettingsError> {
    let value: Value = serde_json::from_str(text).map_err(|e| SettingsError::Json {
        path: path.clone(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    parse_file(path, value, scope, claude, root, trusted, home)
}

fn parse_file(
    path: PathBuf,
    value: Value,
    scope: Scope,
    claude: bool,
    root: PathBuf,
    trusted: bool,
    home: &Path,
) -> Result<(SettingsFile, ParsedPermissions), SettingsError> {
    let Value::Object(map) = value else {
        return Err(SettingsError::Invalid {
            path,
            key: "(top level)".into(),
            problem: "must be a JSON object".into(),
        });
    };
    // The trust table decides, before anything reads the file, what this source may set; the
    // whole file is still validated, so a malformed file is refused whether or not its source
    // could have set the faulty key.
    let mut restricted = map.clone();
    let dropped = super::settings_keys::restrict(&mut restricted, scope, trusted);
    if !dropped.is_empty() {
        parse_map(&path, &map, scope, &root, home)?;
    }
    let mut parsed = parse_map(&path, &restricted, scope, &root, home)?;
    // A key nothing reads has no effect whether dropped or not: the unknown-key warning
    // below covers a typo, and a key only Claude Code reads needs no word.
    parsed.warnings.extend(
        dropped
            .iter()
            .filter(|d| super::settings_keys::spec(&d.path).is_some())
            .map(|d| format!("{}: {}", path.display(), d.message)),
    );
    let unknown = super::known_keys::unknown_keys(&map);
    if !unknown.is_empty() {
        let listed: Vec<String> = unknown.iter().map(ToString::to_string).collect();
        parsed.warnings.push(format!(
            "{}: unknown settings key{} ignored: {}",
            path.display(),
            if unknown.len() == 1 { "" } else { "s" },
            listed.join(", ")
        ));
    }
    let file = SettingsFile {
        path,
        scope,
        claude,
        root,
        trusted,
        value: restricted,
        dropped: dropped.into_iter().map(|d| d.path).collect(),
    };
    Ok((file, parsed))
}

/// Validates one settings object and reads its `permissions` and `sandbox` blocks.
fn parse_map(
    path: &Path,
    map: &Map<String, Value>,
    scope: Scope,
    root: &Path,
    home: &Path,
) -> Result<ParsedPermissions, SettingsError> {
    let path = path.to_path_buf();
    let root = root.to_path_buf();
    let invalid = |key: &str, problem: &str| SettingsError::Invalid {
        path: path.clone(),
        key: key.to_owned(),
        problem: problem.to_owned(),
    };
    let mut parsed = ParsedPermissions::default();
    if let Some(perms) = map.get("permissions") {
        let Value::Object(perms) = perms else {
            return Err(invalid("permissions", "must be an object"));
        };
        for (key, list) in [
            ("deny", RuleList::Deny),
            ("ask", RuleList::Ask),
            ("allow", RuleList::Allow),
        ] {
            let Some(v) = perms.get(key) else { continue };
            let items = string_list(v, &format!("permissions.{key}"), &invalid)?;
            for (index, text) in items.into_iter().enumerate() {
                let origin = RuleOrigin {
                    scope,
                    file: Some(path.clone()),
                    list,
                    index,
                };
                match parse_rule(&text, list) {
                    Ok(Parsed::Rule(rule, note)) => {
                        if let Some(note) = note {
                            parsed.warnings.push(format!("{origin}: {note}"));
                        }
                        let entry = RuleEntry {
                            rule,
                            origin,
                            settings_root: root.clone(),
                        };
                        match list {
                            RuleList::Deny => parsed.deny.push(entry),
                            RuleList::Ask => parsed.ask.push(entry),
                            RuleList::Allow => parsed.allow.push(entry),
                        }
                    }
                    Ok(Parsed::Ignored(why)) => parsed.warnings.push(format!("{origin}: {why}")),
                    Err(reason) => {
                        return Err(SettingsError::Rule {
                            path: path.clone(),
                            list,
                            index,
                            rule: text,
                            reason,
                        });
                    }
                }
            }
        }
        if let Some(v) = perms.get("additionalDirectories") {
            for (i, d) in string_list(v, "permissions.additionalDirectories", &invalid)?
                .into_iter()
                .enumerate()
            {
                if d.trim().is_empty() {
                    return Err(invalid(
                        &format!("permissions.additionalDirectories[{i}]"),
                        "is empty",
                    ));
                }
                let p = if let Some(rest) = d.strip_prefix("~/") {
                    home.join(rest)
                } else {
                    absolute(&root, Path::new(&d))
                };
                parsed.additional_directories.push(p);
            }
        }
        if let Some(v) = perms.get("defaultMode") {
            let s = v
                .as_str()
                .ok_or_else(|| invalid("permissions.defaultMode", "must be a string"))?;
            parsed.default_mode = Some(
                s.parse::<PermissionMode>()
                    .map_err(|e| invalid("permissions.defaultMode", &e.to_string()))?,
            );
        }
        for (key, slot) in [
            ("disableBypassPermissionsMode", &mut parsed.disable_bypass),
            ("disableAutoMode", &mut parsed.disable_auto),
        ] {
            if let Some(v) = perms.get(key) {
                *slot = match v {
                    Value::String(s) if s == "disable" => true,
                    Value::Bool(b) => *b,
                    _ => {
                        return Err(invalid(
                            &format!("permissions.{key}"),
                            "must be \"disable\"",
                        ));
                    }
                };
            }
        }
    }
    if let Some(sandbox) = map.get("sandbox") {
        let Value::Object(sandbox) = sandbox else {
            return Err(invalid("sandbox", "must be an object"));
        };
        for (key, slot) in [
            ("enabled", &mut parsed.sandbox_enabled),
            ("autoAllowBashIfSandboxed", &mut parsed.auto_allow_bash),
        ] {
            if let Some(v) = sandbox.get(key) {
                *slot =
                    Some(v.as_bool().ok_or_else(|| {
                        invalid(&format!("sandbox.{key}"), "must be true or false")
                    })?);
            }
        }
    }
    if let Some(h) = map.get("hooks")
        && !h.is_object()
    {
        return Err(invalid(
            "hooks",
            "must be an object mapping event names to matcher groups",
        ));
    }
    if let Some(d) = map.get("disableAllHooks")
        && !d.is_boolean()
    {
        return Err(invalid("disableAllHooks", "must be true or false"));
    }
    if let Some(h) = map.get(crate::hooks::HOOK_ENVIRONMENT_KEY) {
        crate::hooks::parse_hook_environment(h)
            .map_err(|(key, problem)| invalid(&key, &problem))?;
    }
    Ok(parsed)
}

fn string_list(
    v: &Value,
    key: &str,
    invalid: &dyn Fn(&str, &str) -> SettingsError,
) -> Result<Vec<String>, SettingsError> {
    let Value::Array(items) = v else {
        return Err(invalid(key, "must be an array of strings"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid(&format!("{key}[{i}]"), "must be a string"))
        })
        .collect()
}
