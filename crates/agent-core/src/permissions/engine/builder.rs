//! Building a [`PermissionEngine`]: rules, modes, directories, policies, prompter, grants and
//! sandbox flags, deny-by-default.

use super::*;

/// Builds a [`PermissionEngine`]. Defaults: mode `default`, no rules, no additional directories,
/// no policies, no prompter (so [`PermissionEngine::decide`] denies what would ask), fresh
/// session grants, no sandbox.
pub struct PermissionEngineBuilder {
    pub(super) cwd: PathBuf,
    pub(super) home: PathBuf,
    pub(super) mode: PermissionMode,
    pub(super) deny: Vec<RuleEntry>,
    pub(super) ask: Vec<RuleEntry>,
    pub(super) allow: Vec<RuleEntry>,
    pub(super) dirs: Vec<PathBuf>,
    pub(super) policies: Vec<Box<dyn PermissionPolicy>>,
    pub(super) prompter: Option<Arc<dyn Prompter>>,
    pub(super) handler: Option<Arc<dyn PermissionRequestHandler>>,
    pub(super) grants: SessionGrants,
    pub(super) sandbox: SandboxState,
    /// The real folder and its shadow, when the session works in a shadow copy.
    pub(super) shadow_of: Option<crate::view::PathView>,
}

impl PermissionEngineBuilder {
    /// Takes the rules, additional directories and sandbox flags of merged settings (the mode
    /// is set separately, see [`Settings::mode`]).
    pub fn settings(mut self, settings: &Settings) -> Self {
        self.deny.extend(settings.deny.iter().cloned());
        self.ask.extend(settings.ask.iter().cloned());
        self.allow.extend(settings.allow.iter().cloned());
        self.dirs
            .extend(settings.additional_directories.iter().cloned());
        self.sandbox.auto_allow_bash = settings.auto_allow_bash_if_sandboxed;
        self.sandbox.active = settings.sandbox_enabled;
        self
    }

    /// Adds rules written in code (scope `session`), e.g. an SDK's `allowedTools`.
    ///
    /// # Errors
    /// The parse error of the first malformed rule.
    pub fn rule(mut self, list: RuleList, text: &str) -> Result<Self, String> {
        let index = match list {
            RuleList::Deny => self.deny.len(),
            RuleList::Ask => self.ask.len(),
            RuleList::Allow => self.allow.len(),
        };
        let rule = match parse_rule(text, list)? {
            Parsed::Rule(rule, _) => rule,
            Parsed::Ignored(why) => return Err(why),
        };
        let entry = RuleEntry {
            rule,
            origin: super::super::decision::RuleOrigin {
                scope: super::super::decision::Scope::Session,
                file: None,
                list,
                index,
            },
            settings_root: self.cwd.clone(),
        };
        match list {
            RuleList::Deny => self.deny.push(entry),
            RuleList::Ask => self.ask.push(entry),
            RuleList::Allow => self.allow.push(entry),
        }
        Ok(self)
    }

    /// Sets the mode.
    pub fn mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self
    }

    /// Adds a working directory.
    pub fn add_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dirs.push(dir.into());
        self
    }

    /// Adds a policy (evaluated in the order added).
    pub fn policy(mut self, policy: Box<dyn PermissionPolicy>) -> Self {
        self.policies.push(policy);
        self
    }

    /// Sets who answers prompts.
    pub fn prompter(mut self, prompter: Arc<dyn Prompter>) -> Self {
        self.prompter = Some(prompter);
        self
    }

    /// Sets the PermissionRequest handler (hooks), asked before the prompter.
    pub fn permission_request_handler(
        mut self,
        handler: Arc<dyn PermissionRequestHandler>,
    ) -> Self {
        self.handler = Some(handler);
        self
    }

    /// Shares session grants (e.g. with a parent agent).
    pub fn grants(mut self, grants: SessionGrants) -> Self {
        self.grants = grants;
        self
    }

    /// Declares the sandbox state.
    pub fn sandbox(mut self, sandbox: SandboxState) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The session works in a shadow copy of `real` at `shadow` (`crate::view`): the rules
    /// and directories that name the real folder name the copy too. A `/path` rule of a
    /// settings file of the real folder (anchored at it) also holds beneath the shadow, and so
    /// does an absolute `//path` rule or an additional directory naming the real folder or a
    /// path beneath it; the originals stay. So a project's `Read(/secrets/**)` deny still
    /// holds for the copy the tools read, and its `Edit(/src/**)` allow for the copy they edit.
    pub fn shadow_of(mut self, real: impl Into<PathBuf>, shadow: impl Into<PathBuf>) -> Self {
        self.shadow_of = Some(crate::view::PathView::new(real, shadow));
        self
    }

    /// Compiles the rules.
    ///
    /// # Errors
    /// [`EngineError`] for a relative `cwd` or rules that do not compile.
    pub fn build(mut self) -> Result<PermissionEngine, EngineError> {
        if !self.cwd.is_absolute() {
            return Err(EngineError::RelativeCwd(self.cwd));
        }
        if let Some(view) = self.shadow_of.take() {
            for list in [&mut self.deny, &mut self.ask, &mut self.allow] {
                let copies: Vec<RuleEntry> =
                    list.iter().filter_map(|e| in_shadow(e, &view)).collect();
                list.extend(copies);
            }
            let moved: Vec<PathBuf> = self
                .dirs
                .iter()
                .filter_map(|d| view.actual_path(d))
                .collect();
            self.dirs.extend(moved);
        }
        let wd = WorkingDirs::new(&self.cwd, &self.home, &self.dirs);
        let compile = |entries, list| {
            CompiledList::compile(entries, list, wd.cwd(), wd.home()).map_err(EngineError::Rules)
        };
        Ok(PermissionEngine {
            deny: compile(self.deny, RuleList::Deny)?,
            ask: compile(self.ask, RuleList::Ask)?,
            allow: compile(self.allow, RuleList::Allow)?,
            mode: RwLock::new(self.mode),
            wd,
            policies: self.policies,
            prompter: self.prompter,
            handler: self.handler,
            grants: self.grants,
            grant_cache: RwLock::new(None),
            sandbox: self.sandbox,
        })
    }
}

/// The copy of `entry` that names the shadow instead of the real folder, when it names the
/// real folder (see [`PermissionEngineBuilder::shadow_of`]).
fn in_shadow(entry: &RuleEntry, view: &crate::view::PathView) -> Option<RuleEntry> {
    use crate::permissions::rules::{Anchor, RuleContent};
    let RuleContent::Path { pattern, .. } = &entry.rule.content else {
        return None;
    };
    match pattern.anchor {
        Anchor::SettingsRoot => {
            let mut copy = entry.clone();
            copy.settings_root = view.actual_path(&entry.settings_root)?;
            Some(copy)
        }
        Anchor::Root => {
            let moved = view.actual_path(Path::new(&format!("/{}", pattern.rest)))?;
            let mut copy = entry.clone();
            if let RuleContent::Path { pattern, .. } = &mut copy.rule.content {
                pattern.rest = moved.to_string_lossy().trim_start_matches('/').to_owned();
            }
            Some(copy)
        }
        _ => None,
    }
}
