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
//! 4. **Safety checks**: tools that ask the user (`AskUserQuestion`), commands that cannot be
//!    analysed (text bash evaluates at run time included) and critical-path `rm` → ask in every
//!    mode; writes to protected paths (redirects, operands, option values and the sources of
//!    links alike), program-running options of known programs, and variables or shell options
//!    that are not known harmless (`PATH=.`, `GIT_EXTERNAL_DIFF=rm git diff`) → ask except in
//!    `bypassPermissions` (`dontAsk`: deny).
//! 5. **Policies** ([`PermissionPolicy`]), in order: deny → deny; allow → allow;
//!    allow-with-input → steps 2–4 again on the new input, then allow.
//! 6. **A hook's allow** → allow.
//! 7. **The mode**: `plan` denies edits and commands that are not read-only; `bypassPermissions`
//!    allows; `auto` asks what the classifier flags and allows the rest; every mode allows reads
//!    inside the working directories; `acceptEdits` allows edits and filesystem commands there.
//! 8. **Allow rules**, the built-in read-only command set, and session grants → allow. A Bash
//!    command is allowed only if every sub-command is, every file it writes through a redirect
//!    or an option is covered, and every file it reads through one is inside the working
//!    directories or covered.
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
use super::containment::{Containment, FileSeen};
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
use super::workdirs::WorkingDirs;
use crate::modes::PermissionMode;
use crate::settings::Settings;
use crate::shell::{ParsedScript, ScriptParseError};
use crate::tools::ToolKind;

mod allow;
mod builder;
mod matching;
mod steps;
mod suggest;

pub use builder::PermissionEngineBuilder;
use steps::PolicyOutcome;
use suggest::suggestion_hint;

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
    pub fn shell_parse(&self) -> Option<&Result<ParsedScript, ScriptParseError>> {
        match &self.subject {
            Subject::Bash(b) => Some(&b.parsed),
            _ => None,
        }
    }

    /// The files a Bash call reads and writes, as the engine resolved them for its decision
    /// (empty for other tools). The checker/interpreter differential test holds the WASI
    /// shell's own opens to this list (docs/shell.md, The checker and the interpreter agree).
    pub fn files_seen(&self) -> Vec<FileSeen> {
        match &self.subject {
            Subject::Bash(b) => super::containment::files_seen(b),
            _ => Vec::new(),
        }
    }
}

/// Decides tool calls. Build one per session with [`PermissionEngine::builder`]; it is `Sync`
/// and cheap to share.
pub struct PermissionEngine {
    /// The mode: changed at run time by the host (`/mode` in a session) while the engine is
    /// shared, so it sits behind a lock read once per check.
    mode: RwLock<PermissionMode>,
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
            .field("mode", &self.mode())
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
            shadow_of: None,
        }
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        *self.mode.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the mode (e.g. leaving `plan` once the plan is approved, or `/mode` in an
    /// interactive session); the checks that start after it use it.
    pub fn set_mode(&self, mode: PermissionMode) {
        *self.mode.write().unwrap_or_else(PoisonError::into_inner) = mode;
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
            tracing::debug_span!("permission_check", tool = %call.tool_name, mode = %self.mode());
        let _guard = span.enter();
        let d = self.evaluate(call, hook, subject);
        tracing::debug!(decision = %d.behavior, step = d.step.as_str(), rule = ?d.rule.as_ref().map(|r| &r.text), "permission decided");
        d
    }

    /// The deny rule that removes the tool `tool_name` from what the model is offered: a deny
    /// rule without an argument covering every call of it (`Bash`, `WebFetch`, `mcp__srv`,
    /// `mcp__srv__*`, `mcp__srv__tool`, `*`; an `Edit` rule covers every editing tool), from
    /// any source of this engine (settings files, rules added in code). Deny rules are step 2
    /// and nothing after them undoes a deny (no hook, policy, mode or allow rule), so such a
    /// tool could never run; Claude Code leaves it out of the model's context. A rule with an
    /// argument (`Bash(rm *)`, `WebFetch(domain:x.com)`) leaves the tool offered. `None` when no
    /// rule removes it.
    pub fn denies_whole_tool(&self, tool_name: &str) -> Option<RuleRef> {
        self.deny
            .bare_rule(canonical_tool(tool_name))
            .map(|i| self.deny.entry(i).to_ref())
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
            mode: self.mode(),
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
        d.prepared = asked.prepared.clone();
        d
    }

    /// Steps 1 to 9 of the module doc, in order: the first step that decides wins.
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
        let prepared = match subject {
            Subject::Bash(b) => Some(Arc::clone(&b.prepared)),
            _ => None,
        };
        let done = |mut d: PermissionDecision| {
            d.updated_input = updated.clone();
            d.prepared = prepared.clone();
            d
        };
        // Step 2: deny rules (and an input the tool cannot take).
        if let Some(d) = self.deny_step(canonical, input, subject) {
            return done(d);
        }
        let effective_call = self.call_with_input(call, input);
        // Step 1 (continued): a hook's ask or defer, now that deny rules have had their say.
        if let Some(d) = self.hook_ask_step(&effective_call, canonical, subject, hook) {
            return done(d);
        }
        // Steps 3 and 4: ask rules, safety checks.
        if let Some(d) = self.ask_and_safety_steps(&effective_call, canonical, input, subject) {
            return done(d);
        }
        // Step 5: policies.
        match self.policy_step(call, &effective_call, canonical, subject) {
            Some(PolicyOutcome::Decided(d)) => return done(d),
            Some(PolicyOutcome::Rewritten(d)) => return d,
            None => {}
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
        // Step 9: otherwise ask.
        done(self.otherwise_step(&effective_call, canonical, subject))
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
}
