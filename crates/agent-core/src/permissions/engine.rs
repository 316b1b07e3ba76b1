//! The permission engine: one decision per tool call, with the step and rule that decided.
//!
//! # Evaluation order
//!
//! The first step that decides wins (DESIGN.md, agent-core › Permissions):
//!
//! 1. **PreToolUse hooks** ([`PreToolUseOutcome`]), in every mode: deny → deny; `updatedInput`
//!    replaces the input for every later step; ask (or defer) → must ask (checked after step 2,
//!    so a deny rule still wins); allow → remembered for step 6.
//! 2. **Deny rules** from any settings file → deny. Nothing later can undo a deny.
//! 3. **Ask rules** → ask (`dontAsk`: deny). A bare `Bash` ask rule is skipped while a sandbox
//!    is active with `autoAllowBashIfSandboxed`, except in `plan`.
//! 4. **Safety checks**: commands that cannot be analysed and critical-path `rm` → ask in every
//!    mode; writes to protected paths → ask except in `bypassPermissions` (`dontAsk`: deny).
//! 5. **Policies** ([`PermissionPolicy`]), in order: deny → deny; allow → allow;
//!    allow-with-input → steps 2–4 again on the new input, then allow.
//! 6. **A hook's allow** → allow.
//! 7. **The mode**: `plan` denies edits and commands that are not read-only; `bypassPermissions`
//!    allows; `auto` asks what the classifier flags and allows the rest; every mode allows reads
//!    inside the working directories; `acceptEdits` allows edits and filesystem commands there.
//! 8. **Allow rules**, the built-in read-only command set, and session grants → allow. A Bash
//!    command is allowed only if every sub-command and every redirect target is.
//! 9. **Otherwise ask**: with `autoAllowBashIfSandboxed` and an active sandbox, Bash is allowed;
//!    in `dontAsk` the call is denied with a reason naming a rule that would allow it.
//!    [`PermissionEngine::decide`] then asks the PermissionRequest handler and the prompter; with
//!    no prompter the call is denied.
//!
//! Whenever a step would ask, the policies are consulted first: a policy may turn the ask into a
//! deny (never into an allow), so an embedder's constraints hold even for calls a user approves.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;

use super::classifier;
use super::commands::allow_view;
use super::decision::{Behavior, PermissionDecision, RuleList, RuleRef, Step};
use super::grants::SessionGrants;
use super::policy::{PermissionPolicy, PolicyVerdict};
use super::prompt::{
    HookDecision, PermissionRequest, PermissionRequestHandler, PreToolUseOutcome, PromptAnswer,
    Prompter,
};
use super::request::{BashSubject, Subject, ToolCall, Via};
use super::rules::{Parsed, RuleContent, ToolPattern, canonical_tool, parse_rule};
use super::ruleset::{CompiledList, PathUse, RuleEntry};
use super::safety::{self, Finding};
use super::settings::Settings;
use super::workdirs::WorkingDirs;
use crate::modes::PermissionMode;
use crate::shell::{ParsedScript, ShellError};
use crate::tools::ToolKind;

/// Occurs when an engine cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// Occurs when a rule's globs do not compile against this session's directories.
    #[error("cannot compile permission rules: {0}")]
    Rules(String),
    /// Occurs when the current directory is not absolute.
    #[error("the current directory must be an absolute path, got {0}")]
    RelativeCwd(PathBuf),
}

/// Whether an outer sandbox wraps Bash, and whether that alone approves Bash calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SandboxState {
    /// A sandbox is active for Bash.
    pub active: bool,
    /// `autoAllowBashIfSandboxed`.
    pub auto_allow_bash: bool,
}

/// Builds a [`PermissionEngine`]. Defaults: mode `default`, no rules, no additional directories,
/// no policies, no prompter (so [`PermissionEngine::decide`] denies what would ask), fresh
/// session grants, no sandbox.
pub struct PermissionEngineBuilder {
    cwd: PathBuf,
    home: PathBuf,
    mode: PermissionMode,
    deny: Vec<RuleEntry>,
    ask: Vec<RuleEntry>,
    allow: Vec<RuleEntry>,
    dirs: Vec<PathBuf>,
    policies: Vec<Box<dyn PermissionPolicy>>,
    prompter: Option<Arc<dyn Prompter>>,
    handler: Option<Arc<dyn PermissionRequestHandler>>,
    grants: SessionGrants,
    sandbox: SandboxState,
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
            origin: super::decision::RuleOrigin {
                scope: super::decision::Scope::Session,
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

    /// Compiles the rules.
    ///
    /// # Errors
    /// [`EngineError`] for a relative `cwd` or rules that do not compile.
    pub fn build(self) -> Result<PermissionEngine, EngineError> {
        if !self.cwd.is_absolute() {
            return Err(EngineError::RelativeCwd(self.cwd));
        }
        let wd = WorkingDirs::new(&self.cwd, &self.home, &self.dirs);
        let compile = |entries, list| {
            CompiledList::compile(entries, list, wd.cwd(), wd.home()).map_err(EngineError::Rules)
        };
        Ok(PermissionEngine {
            deny: compile(self.deny, RuleList::Deny)?,
            ask: compile(self.ask, RuleList::Ask)?,
            allow: compile(self.allow, RuleList::Allow)?,
            mode: self.mode,
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

/// A tool call with its shell parse and resolved paths, ready to be checked (see
/// [`PermissionEngine::prepare`]).
#[derive(Debug)]
pub struct PreparedCall {
    call: ToolCall,
    subject: Subject,
}

impl PreparedCall {
    /// The call.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// The shell parse of a Bash call's `command`, made once by [`PermissionEngine::prepare`]
    /// (`None` for other tools, or when the input has no command string). The sandbox's command
    /// checker takes it as is (`CommandChecker::check_parsed`), so a call is parsed once.
    pub fn shell_parse(&self) -> Option<&Result<ParsedScript, ShellError>> {
        match &self.subject {
            Subject::Bash(b) => Some(&b.parsed),
            _ => None,
        }
    }
}

/// Decides tool calls. Build one per session with [`PermissionEngine::builder`]; it is `Sync`
/// and cheap to share.
pub struct PermissionEngine {
    mode: PermissionMode,
    wd: WorkingDirs,
    deny: CompiledList,
    ask: CompiledList,
    allow: CompiledList,
    policies: Vec<Box<dyn PermissionPolicy>>,
    prompter: Option<Arc<dyn Prompter>>,
    handler: Option<Arc<dyn PermissionRequestHandler>>,
    grants: SessionGrants,
    grant_cache: RwLock<Option<(u64, Arc<CompiledList>)>>,
    sandbox: SandboxState,
}

impl std::fmt::Debug for PermissionEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionEngine")
            .field("mode", &self.mode)
            .field("working_dirs", &self.wd.dirs())
            .field("deny", &self.deny.entries.len())
            .field("ask", &self.ask.entries.len())
            .field("allow", &self.allow.entries.len())
            .field("policies", &self.policies.len())
            .finish_non_exhaustive()
    }
}

impl PermissionEngine {
    /// A builder for a session in `cwd` (absolute) with home directory `home`.
    pub fn builder(cwd: impl Into<PathBuf>, home: impl Into<PathBuf>) -> PermissionEngineBuilder {
        PermissionEngineBuilder {
            cwd: cwd.into(),
            home: home.into(),
            mode: PermissionMode::Default,
            deny: Vec::new(),
            ask: Vec::new(),
            allow: Vec::new(),
            dirs: Vec::new(),
            policies: Vec::new(),
            prompter: None,
            handler: None,
            grants: SessionGrants::new(),
            sandbox: SandboxState::default(),
        }
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// Changes the mode (e.g. leaving `plan` once the plan is approved).
    pub fn set_mode(&mut self, mode: PermissionMode) {
        self.mode = mode;
    }

    /// The session grants (grant, revoke, reset).
    pub fn grants(&self) -> &SessionGrants {
        &self.grants
    }

    /// The working directories.
    pub fn working_dirs(&self) -> &[PathBuf] {
        self.wd.dirs()
    }

    /// The current directory.
    pub fn cwd(&self) -> &Path {
        self.wd.cwd()
    }

    /// Steps 1–9 without asking anyone: the result is allow, deny, or ask (for the caller to
    /// resolve). Pure and synchronous; this is what `agent permissions check` prints.
    pub fn check(&self, call: &ToolCall, hook: &PreToolUseOutcome) -> PermissionDecision {
        self.check_with(call, hook, None)
    }

    /// Parses and resolves what a call names (the shell parse of a Bash command, the paths of
    /// a file tool) once, so that several checks of the same call (and the sandbox, later)
    /// share one parse.
    pub fn prepare(&self, call: ToolCall) -> PreparedCall {
        let subject = Subject::of(canonical_tool(&call.tool_name), &call.input, &self.wd);
        PreparedCall { call, subject }
    }

    /// [`Self::check`] for a prepared call. A hook's `updatedInput` is prepared anew.
    pub fn check_prepared(
        &self,
        prepared: &PreparedCall,
        hook: &PreToolUseOutcome,
    ) -> PermissionDecision {
        self.check_with(&prepared.call, hook, Some(&prepared.subject))
    }

    fn check_with(
        &self,
        call: &ToolCall,
        hook: &PreToolUseOutcome,
        subject: Option<&Subject>,
    ) -> PermissionDecision {
        let span =
            tracing::debug_span!("permission_check", tool = %call.tool_name, mode = %self.mode);
        let _guard = span.enter();
        let d = self.evaluate(call, hook, subject);
        tracing::debug!(decision = %d.behavior, step = d.step.as_str(), rule = ?d.rule.as_ref().map(|r| &r.text), "permission decided");
        d
    }

    /// Whether any deny rule of this engine matches `call`, with deny-rule semantics (any
    /// sub-command, through wrappers and assignments). `None` when the call's input cannot be
    /// analysed (a command that does not parse, an input the tool cannot take). Hook `if`
    /// conditions use this with a one-rule engine.
    pub(crate) fn deny_rules_match(&self, call: &ToolCall) -> Option<bool> {
        let canonical = canonical_tool(&call.tool_name);
        let subject = Subject::of(canonical, &call.input, &self.wd);
        match &subject {
            Subject::Invalid(_) => return None,
            Subject::Bash(b) if b.parsed.is_err() => return None,
            _ => {}
        }
        Some(
            self.first_match(&self.deny, canonical, &call.input, &subject, true, false)
                .is_some(),
        )
    }

    /// Steps 1–9, resolving an ask through the PermissionRequest handler and then the prompter.
    /// With no prompter, an ask becomes a deny naming a rule that would allow the call.
    pub async fn decide(&self, call: &ToolCall, hook: &PreToolUseOutcome) -> PermissionDecision {
        let d = self.check(call, hook);
        if d.behavior != Behavior::Ask {
            return d;
        }
        let input = d
            .updated_input
            .clone()
            .unwrap_or_else(|| call.input.clone());
        let request = PermissionRequest {
            tool_name: call.tool_name.clone(),
            input: input.clone(),
            reason: d.reason.clone(),
            suggestions: d.suggestions.clone(),
            tool_use_id: call.tool_use_id.clone(),
            mode: self.mode,
        };
        if let Some(handler) = &self.handler
            && let Some(answer) = handler.on_request(&request).await
        {
            let is_allow = !matches!(answer, PromptAnswer::Deny { .. });
            if !(is_allow && d.hooks_cannot_allow) {
                return self.apply_answer(call, &input, answer, &d, "a PermissionRequest hook");
            }
        }
        match &self.prompter {
            Some(p) => {
                let answer = p.prompt(&request).await;
                self.apply_answer(call, &input, answer, &d, "the user")
            }
            None => {
                let mut out = PermissionDecision::new(
                    Behavior::Deny,
                    Step::Prompt,
                    format!(
                        "{}; nobody can be asked here (no prompter), so the call is denied{}",
                        d.reason,
                        suggestion_hint(&d.suggestions)
                    ),
                )
                .with_rule(d.rule.clone());
                out.suggestions = d.suggestions;
                out
            }
        }
    }

    fn apply_answer(
        &self,
        call: &ToolCall,
        input: &Value,
        answer: PromptAnswer,
        asked: &PermissionDecision,
        who: &str,
    ) -> PermissionDecision {
        let (updated, scope) = match answer {
            PromptAnswer::Deny { message, interrupt } => {
                let mut d = PermissionDecision::new(
                    Behavior::Deny,
                    Step::Prompt,
                    format!("denied by {who}: {message}"),
                );
                d.interrupt = interrupt;
                return d;
            }
            PromptAnswer::AllowOnce { updated_input } => (updated_input, None),
            PromptAnswer::AllowForSession {
                scope,
                updated_input,
            } => (updated_input, Some(scope)),
        };
        if let Some(new_input) = &updated
            && new_input != input
            && let Some(d) = self.recheck(call, new_input)
        {
            return d;
        }
        let mut reason = format!("approved by {who}");
        if let Some(scope) = scope {
            match self.grants.grant(scope.clone()) {
                Ok(_) => reason = format!("{reason} for this session ({})", scope.rule_text()),
                Err(e) => reason = format!("{reason} once ({e})"),
            }
        }
        let mut d = PermissionDecision::new(Behavior::Allow, Step::Prompt, reason)
            .with_rule(asked.rule.clone());
        d.updated_input = updated.or_else(|| asked.updated_input.clone());
        d
    }

    fn evaluate(
        &self,
        call: &ToolCall,
        hook: &PreToolUseOutcome,
        prepared: Option<&Subject>,
    ) -> PermissionDecision {
        let canonical = canonical_tool(&call.tool_name);
        // Step 1: hooks.
        if hook.decision == Some(HookDecision::Deny) {
            return PermissionDecision::new(
                Behavior::Deny,
                Step::Hook,
                hook.reason
                    .clone()
                    .unwrap_or_else(|| "a PreToolUse hook blocked this call".into()),
            );
        }
        let input: &Value = hook.updated_input.as_ref().unwrap_or(&call.input);
        let updated = hook.updated_input.clone();
        let fresh;
        let subject = match (prepared, &hook.updated_input) {
            (Some(s), None) => s,
            _ => {
                fresh = Subject::of(canonical, input, &self.wd);
                &fresh
            }
        };
        let done = |mut d: PermissionDecision| {
            d.updated_input = updated.clone();
            d
        };
        // Step 2: deny rules (and an input the tool cannot take).
        if let Some(d) = self.deny_step(canonical, input, subject) {
            return done(d);
        }
        let effective_call = self.call_with_input(call, input);
        // Step 1 (continued): a hook's ask or defer, now that deny rules have had their say.
        if let Some(d @ (HookDecision::Ask | HookDecision::Defer)) = hook.decision {
            let why = hook.reason.clone().unwrap_or_else(|| match d {
                HookDecision::Defer => "a PreToolUse hook deferred the decision".into(),
                _ => "a PreToolUse hook asks for confirmation".into(),
            });
            return done(self.ask_or_deny(
                &effective_call,
                canonical,
                subject,
                Step::Hook,
                why,
                None,
                false,
            ));
        }
        // Steps 3 and 4: ask rules, safety checks.
        if let Some(d) = self.ask_and_safety_steps(&effective_call, canonical, input, subject) {
            return done(d);
        }
        // Step 5: policies.
        for p in &self.policies {
            match p.evaluate(&effective_call) {
                None => {}
                Some(PolicyVerdict::Deny(reason)) => {
                    return done(PermissionDecision::new(
                        Behavior::Deny,
                        Step::Policy,
                        format!("policy `{}`: {reason}", p.name()),
                    ));
                }
                Some(PolicyVerdict::Allow) => {
                    return done(PermissionDecision::new(
                        Behavior::Allow,
                        Step::Policy,
                        format!("allowed by policy `{}`", p.name()),
                    ));
                }
                Some(PolicyVerdict::AllowWithInput(new_input)) => {
                    if let Some(d) = self.recheck(call, &new_input) {
                        return d;
                    }
                    let mut d = PermissionDecision::new(
                        Behavior::Allow,
                        Step::Policy,
                        format!("allowed by policy `{}` with a rewritten input", p.name()),
                    );
                    d.updated_input = Some(new_input);
                    return d;
                }
            }
        }
        // Step 6: a hook's allow.
        if hook.decision == Some(HookDecision::Allow) {
            return done(PermissionDecision::new(
                Behavior::Allow,
                Step::HookAllow,
                hook.reason
                    .clone()
                    .unwrap_or_else(|| "allowed by a PreToolUse hook".into()),
            ));
        }
        // Step 7: the mode.
        if let Some(d) = self.mode_step(&effective_call, canonical, subject) {
            return done(d);
        }
        // Step 8: allow rules, the read-only set, session grants.
        if let Some(d) = self.allow_step(canonical, input, subject) {
            return done(d);
        }
        // Step 9.
        if canonical == "Bash" && self.sandbox.active && self.sandbox.auto_allow_bash {
            return done(PermissionDecision::new(
                Behavior::Allow,
                Step::Prompt,
                "autoAllowBashIfSandboxed: Bash runs inside the active sandbox, whose own checks still apply",
            ));
        }
        let why = match &subject {
            Subject::Bash(_) => {
                "no allow rule, read-only command or grant covers every part of this command"
                    .to_owned()
            }
            Subject::Read(_) => {
                "reading outside the working directories needs an allow rule".to_owned()
            }
            Subject::Edit(_) => format!("{canonical} changes files and no allow rule covers it"),
            _ => format!("no allow rule covers {canonical}"),
        };
        done(self.ask_or_deny(
            &effective_call,
            canonical,
            subject,
            Step::Prompt,
            why,
            None,
            false,
        ))
    }

    fn call_with_input<'a>(&self, call: &'a ToolCall, input: &Value) -> Cow<'a, ToolCall> {
        if std::ptr::eq(input, &call.input) {
            Cow::Borrowed(call)
        } else {
            let mut c = call.clone();
            c.input = input.clone();
            Cow::Owned(c)
        }
    }

    /// Steps 2–4 for an input a policy or the user substituted: `Some` when they refuse it.
    fn recheck(&self, call: &ToolCall, input: &Value) -> Option<PermissionDecision> {
        let canonical = canonical_tool(&call.tool_name);
        let subject = Subject::of(canonical, input, &self.wd);
        let mut c = call.clone();
        c.input = input.clone();
        self.deny_step(canonical, input, &subject)
            .or_else(|| self.ask_and_safety_steps(&c, canonical, input, &subject))
            .map(|mut d| {
                d.reason = format!("the rewritten input: {}", d.reason);
                d
            })
    }

    /// Step 2: a deny rule matching any part of the call (or an input the tool cannot take).
    fn deny_step(
        &self,
        canonical: &str,
        input: &Value,
        subject: &Subject,
    ) -> Option<PermissionDecision> {
        if let Subject::Invalid(reason) = subject {
            return Some(PermissionDecision::new(
                Behavior::Deny,
                Step::Safety,
                reason.clone(),
            ));
        }
        let i = self.first_match(&self.deny, canonical, input, subject, true, false)?;
        let e = self.deny.entry(i);
        Some(
            PermissionDecision::new(
                Behavior::Deny,
                Step::DenyRule,
                format!("denied by rule `{}` ({})", e.rule.text, e.origin),
            )
            .with_rule(Some(e.to_ref())),
        )
    }

    /// Steps 3 and 4: ask rules, then the safety checks. A bare `Bash` ask rule is skipped while
    /// a sandbox auto-allows Bash, except in `plan`.
    fn ask_and_safety_steps(
        &self,
        call: &ToolCall,
        canonical: &str,
        input: &Value,
        subject: &Subject,
    ) -> Option<PermissionDecision> {
        let skip_bare_bash = canonical == "Bash"
            && self.sandbox.active
            && self.sandbox.auto_allow_bash
            && self.mode != PermissionMode::Plan;
        if let Some(i) =
            self.first_match(&self.ask, canonical, input, subject, false, skip_bare_bash)
        {
            let e = self.ask.entry(i);
            let why = format!(
                "rule `{}` ({}) asks for confirmation",
                e.rule.text, e.origin
            );
            return Some(self.ask_or_deny(
                call,
                canonical,
                subject,
                Step::AskRule,
                why,
                Some(e.to_ref()),
                false,
            ));
        }
        self.safety(call, subject).map(|f| {
            let hard = matches!(f, Finding::CriticalRm(_) | Finding::UserInteraction(_));
            self.ask_or_deny(
                call,
                canonical,
                subject,
                Step::Safety,
                f.reason(),
                None,
                hard,
            )
        })
    }

    /// An ask (or, in `dontAsk`, a deny) — unless a policy denies the call first.
    #[allow(
        clippy::too_many_arguments,
        reason = "internal helper; every argument is part of the verdict"
    )]
    fn ask_or_deny(
        &self,
        call: &ToolCall,
        canonical: &str,
        subject: &Subject,
        step: Step,
        reason: String,
        rule: Option<RuleRef>,
        hooks_cannot_allow: bool,
    ) -> PermissionDecision {
        for p in &self.policies {
            if let Some(PolicyVerdict::Deny(why)) = p.evaluate(call) {
                return PermissionDecision::new(
                    Behavior::Deny,
                    Step::Policy,
                    format!("policy `{}`: {why}", p.name()),
                );
            }
        }
        let suggestions = self.suggest(canonical, subject);
        let mut d = if self.mode == PermissionMode::DontAsk {
            PermissionDecision::new(
                Behavior::Deny,
                step,
                format!(
                    "{reason}; dontAsk mode denies what would ask{}",
                    if step == Step::Prompt {
                        suggestion_hint(&suggestions)
                    } else {
                        String::new()
                    }
                ),
            )
        } else {
            PermissionDecision::new(Behavior::Ask, step, reason)
        };
        d.rule = rule;
        d.suggestions = suggestions;
        d.hooks_cannot_allow = hooks_cannot_allow;
        d
    }

    fn safety(&self, call: &ToolCall, subject: &Subject) -> Option<Finding> {
        let bypass = self.mode == PermissionMode::BypassPermissions;
        if call.requires_user_interaction {
            return Some(Finding::UserInteraction(call.tool_name.clone()));
        }
        match subject {
            Subject::Bash(b) => safety::unanalysable(b)
                .or_else(|| safety::critical_rm(b, &self.wd))
                .or_else(|| {
                    b.runs_program
                        .clone()
                        .filter(|_| !bypass)
                        .map(Finding::RunsProgram)
                })
                .or_else(|| {
                    (!bypass)
                        .then(|| {
                            safety::protected_write(safety::bash_write_paths(&b.writes), &self.wd)
                        })
                        .flatten()
                }),
            Subject::Edit(paths) if !bypass => safety::protected_write(paths, &self.wd),
            _ => None,
        }
    }

    fn mode_step(
        &self,
        call: &ToolCall,
        canonical: &str,
        subject: &Subject,
    ) -> Option<PermissionDecision> {
        let allow =
            |reason: &str| Some(PermissionDecision::new(Behavior::Allow, Step::Mode, reason));
        match self.mode {
            PermissionMode::Plan => match subject {
                Subject::Edit(_) => {
                    return Some(PermissionDecision::new(
                        Behavior::Deny,
                        Step::Mode,
                        "plan mode: edits are not allowed until the plan is approved",
                    ));
                }
                Subject::Bash(b) => {
                    return if self.bash_is_read_only(b) {
                        allow("plan mode: read-only command")
                    } else {
                        Some(PermissionDecision::new(
                            Behavior::Deny,
                            Step::Mode,
                            "plan mode: only read-only commands run until the plan is approved",
                        ))
                    };
                }
                _ if matches!(call.kind, ToolKind::Edit | ToolKind::Execute) => {
                    return Some(PermissionDecision::new(
                        Behavior::Deny,
                        Step::Mode,
                        format!(
                            "plan mode: {canonical} can change things and is not allowed until the plan is approved"
                        ),
                    ));
                }
                _ => {}
            },
            PermissionMode::BypassPermissions => return allow("bypassPermissions mode"),
            PermissionMode::Auto => {
                return Some(match classifier::classify(subject, &self.wd) {
                    Some(why) => {
                        self.ask_or_deny(call, canonical, subject, Step::Mode, why, None, false)
                    }
                    None => PermissionDecision::new(
                        Behavior::Allow,
                        Step::Mode,
                        "auto mode: nothing dangerous found",
                    ),
                });
            }
            _ => {}
        }
        match subject {
            Subject::Read(paths) if paths.iter().all(|p| self.wd.contains(p)) => {
                allow("reads inside the working directories are allowed in every mode")
            }
            Subject::Edit(paths)
                if self.mode == PermissionMode::AcceptEdits
                    && paths.iter().all(|p| self.wd.contains(p)) =>
            {
                allow("acceptEdits mode: edit inside the working directories")
            }
            _ => None,
        }
    }

    /// Every sub-command read-only, every file read through a redirect or an option inside the
    /// working directories, and no file written (plan mode).
    fn bash_is_read_only(&self, b: &BashSubject) -> bool {
        let Ok(script) = &b.parsed else { return false };
        b.writes.is_empty()
            && self.side_reads_inside(b)
            && script
                .commands
                .iter()
                .zip(&b.read_only)
                .all(|(c, ro)| c.words.is_empty() || *ro)
    }

    /// Files read through redirects (`< f`) and options (`--files0-from=f`) must be inside the
    /// working directories, whatever approved the command: a read-only command or an allow
    /// rule for the program does not extend to what the shell or an option feeds it.
    fn side_reads_inside(&self, b: &BashSubject) -> bool {
        b.reads.iter().filter(|r| r.via != Via::Operand).all(|r| {
            r.is_static() && !r.word.home && r.path.as_ref().is_some_and(|p| self.wd.contains(p))
        })
    }

    fn grant_list(&self) -> Arc<CompiledList> {
        let generation = self.grants.generation();
        if let Some((g, list)) = self
            .grant_cache
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            && *g == generation
        {
            return Arc::clone(list);
        }
        let entries = self
            .grants
            .rules()
            .into_iter()
            .filter_map(|(text, origin)| match parse_rule(&text, RuleList::Allow) {
                Ok(Parsed::Rule(rule, _)) => Some(RuleEntry {
                    rule,
                    origin,
                    settings_root: self.wd.cwd().to_path_buf(),
                }),
                _ => None,
            })
            .collect();
        // Grants were validated when added, so compiling cannot fail; an empty list is the
        // fail-closed answer if it ever did.
        let list = Arc::new(
            CompiledList::compile(entries, RuleList::Allow, self.wd.cwd(), self.wd.home())
                .unwrap_or_default(),
        );
        *self
            .grant_cache
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some((generation, Arc::clone(&list)));
        list
    }

    fn allow_step(
        &self,
        canonical: &str,
        input: &Value,
        subject: &Subject,
    ) -> Option<PermissionDecision> {
        let grants = self.grant_list();
        let lists: [(&CompiledList, &'static str); 2] =
            [(&self.allow, "allow rule"), (&grants, "session grant")];
        if let Subject::Bash(b) = subject {
            return self.bash_allowed(b, &lists);
        }
        for (list, what) in lists {
            if list.is_empty() {
                continue;
            }
            if let Some(i) = tool_allowed(list, canonical, input, subject) {
                let e = list.entry(i);
                return Some(
                    PermissionDecision::new(
                        Behavior::Allow,
                        Step::AllowRule,
                        format!("allowed by {what} `{}` ({})", e.rule.text, e.origin),
                    )
                    .with_rule(Some(e.to_ref())),
                );
            }
        }
        None
    }

    fn bash_allowed(
        &self,
        b: &BashSubject,
        lists: &[(&CompiledList, &'static str); 2],
    ) -> Option<PermissionDecision> {
        let script = b.parsed.as_ref().ok()?;
        let mut first_rule: Option<(RuleRef, &str)> = None;
        let mut used_mode = false;
        let note = |e: &RuleEntry, what: &'static str, first: &mut Option<(RuleRef, &str)>| {
            if first.is_none() {
                *first = Some((e.to_ref(), what));
            }
        };
        for (list, what) in lists {
            if let Some(i) = list.bare_rule("Bash") {
                let e = list.entry(i);
                return Some(
                    PermissionDecision::new(
                        Behavior::Allow,
                        Step::AllowRule,
                        format!("allowed by {what} `{}` ({})", e.rule.text, e.origin),
                    )
                    .with_rule(Some(e.to_ref())),
                );
            }
        }
        'commands: for (i, (cmd, view)) in script.commands.iter().zip(&b.allow_views).enumerate() {
            if cmd.words.is_empty() {
                continue;
            }
            // Rules first, so a decision names the rule when one covers the command.
            if let Some(view) = view {
                for (list, what) in lists {
                    if let Some(i) = list.bash(&view.text, view.exact_only) {
                        note(list.entry(i), what, &mut first_rule);
                        continue 'commands;
                    }
                }
            }
            if b.read_only.get(i).copied().unwrap_or(false) {
                continue;
            }
            if self.mode == PermissionMode::AcceptEdits
                && b.fs_in_scope.get(i).copied().unwrap_or(false)
            {
                used_mode = true;
                continue;
            }
            return None;
        }
        'reads: for r in b.reads.iter().filter(|r| r.via != Via::Operand) {
            if r.is_static() && !r.word.home && r.path.as_ref().is_some_and(|p| self.wd.contains(p))
            {
                continue;
            }
            let p = r.path.as_ref().filter(|_| r.is_static())?;
            for (list, what) in lists {
                if let Some(i) = list.path(p, PathUse::Read, None, false, false) {
                    note(list.entry(i), what, &mut first_rule);
                    continue 'reads;
                }
            }
            return None;
        }
        // Files written through redirects and through options of known programs are checked
        // as file writes, even when an allow rule approved the command (a step beyond Claude
        // Code, which checks redirects only).
        'writes: for w in b.writes.iter().filter(|w| w.via != Via::Operand) {
            if !w.is_static() || w.word.home {
                return None;
            }
            let p = w.path.as_ref()?;
            if self.mode == PermissionMode::AcceptEdits && self.wd.contains(p) {
                used_mode = true;
                continue;
            }
            for (list, what) in lists {
                if let Some(i) = list.path(p, PathUse::Write, None, false, false) {
                    note(list.entry(i), what, &mut first_rule);
                    continue 'writes;
                }
            }
            return None;
        }
        Some(match first_rule {
            Some((rule, what)) => {
                let reason = format!(
                    "allowed by {what} `{}` ({}) for every part of the command",
                    rule.text, rule.origin
                );
                PermissionDecision::new(Behavior::Allow, Step::AllowRule, reason)
                    .with_rule(Some(rule))
            }
            None if used_mode => PermissionDecision::new(
                Behavior::Allow,
                Step::Mode,
                "acceptEdits mode: filesystem commands inside the working directories",
            ),
            None => PermissionDecision::new(
                Behavior::Allow,
                Step::AllowRule,
                "built-in read-only command",
            ),
        })
    }

    /// The lowest-index rule of `list` that matches any part of the call.
    fn first_match(
        &self,
        list: &CompiledList,
        canonical: &str,
        input: &Value,
        subject: &Subject,
        is_deny: bool,
        skip_bare_bash: bool,
    ) -> Option<usize> {
        if list.is_empty() {
            return None;
        }
        let host = match subject {
            Subject::Web(h) => h.as_deref(),
            _ => None,
        };
        let mut best = list.tool_level(canonical, input, host).filter(|&i| {
            !(skip_bare_bash && {
                let r = &list.entry(i).rule;
                matches!(r.content, RuleContent::Any) && r.tool == ToolPattern::Name("Bash".into())
            })
        });
        if skip_bare_bash && best.is_none() {
            // A bare `Bash` rule was skipped; content-scoped tool-level rules still apply.
            best = list.tool_level_except_bare(canonical, input, host);
        }
        let mut consider = |i: Option<usize>| {
            if let Some(i) = i {
                best = Some(best.map_or(i, |b| b.min(i)));
            }
        };
        match subject {
            Subject::Bash(b) => {
                match &b.parsed {
                    Ok(_) => {
                        for view in b.deny_views.iter().flatten() {
                            consider(list.bash(view, false));
                        }
                    }
                    Err(_) => {
                        consider(list.bash_raw(b.text.trim()));
                        for line in b.text.lines() {
                            consider(list.bash_raw(line.trim()));
                        }
                    }
                }
                for r in &b.reads {
                    if let Some(p) = &r.path {
                        consider(list.path(p, PathUse::Read, None, true, false));
                    }
                }
                for w in &b.writes {
                    if let Some(p) = &w.path {
                        consider(list.path(p, PathUse::Write, None, true, is_deny));
                    }
                }
            }
            Subject::Read(paths) => {
                for p in paths {
                    consider(list.path(p, PathUse::Read, Some(canonical), true, false));
                }
            }
            Subject::Edit(paths) => {
                for p in paths {
                    consider(list.path(p, PathUse::Write, Some(canonical), true, is_deny));
                }
            }
            Subject::Web(_) | Subject::Invalid(_) | Subject::Other => {}
        }
        best
    }

    /// Rules that would allow this call, best first.
    fn suggest(&self, canonical: &str, subject: &Subject) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let dir_rule = |tool: &str, p: &super::workdirs::ResolvedPath| {
            let dir = p.lexical.parent().unwrap_or(&p.lexical);
            format!("{tool}(/{}/**)", dir.display())
        };
        match subject {
            Subject::Bash(b) => {
                if let Ok(script) = &b.parsed {
                    for (cmd, ro) in script.commands.iter().zip(&b.read_only) {
                        if cmd.words.is_empty() || *ro {
                            continue;
                        }
                        let Some(view) = allow_view(cmd) else {
                            continue;
                        };
                        let words: Vec<&str> = view.text.split(' ').collect();
                        let s = if view.exact_only {
                            format!("Bash({})", view.text)
                        } else {
                            match words.as_slice() {
                                [a, b, ..]
                                    if b.chars().all(|c| {
                                        c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':')
                                    }) && !b.starts_with('-') =>
                                {
                                    format!("Bash({a} {b} *)")
                                }
                                [a, ..] => format!("Bash({a} *)"),
                                [] => continue,
                            }
                        };
                        if !out.contains(&s) {
                            out.push(s);
                        }
                    }
                }
            }
            Subject::Read(paths) => out.extend(paths.first().map(|p| dir_rule("Read", p))),
            Subject::Edit(paths) => out.extend(paths.first().map(|p| dir_rule("Edit", p))),
            Subject::Web(Some(h)) => out.push(format!("WebFetch(domain:{h})")),
            Subject::Web(None) | Subject::Invalid(_) | Subject::Other => {
                out.push(canonical.to_owned())
            }
        }
        out.truncate(3);
        out
    }
}

fn suggestion_hint(suggestions: &[String]) -> String {
    match suggestions.first() {
        Some(s) => format!("; to allow it, add an allow rule such as `{s}`"),
        None => String::new(),
    }
}

/// The first allow rule of `list` covering a non-Bash call.
fn tool_allowed(
    list: &CompiledList,
    canonical: &str,
    input: &Value,
    subject: &Subject,
) -> Option<usize> {
    let host = match subject {
        Subject::Web(h) => h.as_deref(),
        _ => None,
    };
    if let Some(i) = list.tool_level(canonical, input, host) {
        return Some(i);
    }
    let (paths, use_) = match subject {
        Subject::Read(p) => (p, PathUse::Read),
        Subject::Edit(p) => (p, PathUse::Write),
        _ => return None,
    };
    let mut best: Option<usize> = None;
    for p in paths {
        let i = list.path(p, use_, Some(canonical), false, false)?;
        best = Some(best.map_or(i, |b| b.max(i)));
    }
    best
}
