//! The steps of the decision that `PermissionEngine::evaluate` runs in order: a hook's ask,
//! deny rules, ask rules, the safety checks, policies, the mode and the final ask; with the
//! ask-or-deny answer that `dontAsk` and policies shape.

use super::*;

/// What the policies of step 5 decided.
pub(super) enum PolicyOutcome {
    /// A decision the caller stamps with the hook's input and the prepared parse.
    Decided(PermissionDecision),
    /// A decision that stands as it is: a policy's rewritten input, allowed, or refused by
    /// steps 2 to 4 run again on it.
    Rewritten(PermissionDecision),
}

impl PermissionEngine {
    /// Step 1, continued: a hook's ask or defer, checked once the deny rules have had their say.
    pub(super) fn hook_ask_step(
        &self,
        call: &ToolCall,
        canonical: &str,
        subject: &Subject,
        hook: &PreToolUseOutcome,
    ) -> Option<PermissionDecision> {
        let d @ (HookDecision::Ask | HookDecision::Defer) = hook.decision? else {
            return None;
        };
        let why = hook.reason.clone().unwrap_or_else(|| match d {
            HookDecision::Defer => "a PreToolUse hook deferred the decision".into(),
            _ => "a PreToolUse hook asks for confirmation".into(),
        });
        Some(self.ask_or_deny(call, canonical, subject, Step::Hook, why, None, false))
    }

    /// Step 5: the first policy with a verdict decides. `call` is the call as the model made
    /// it (a policy's ask is judged against it); `effective` carries the hook's input.
    pub(super) fn policy_step(
        &self,
        call: &ToolCall,
        effective: &ToolCall,
        canonical: &str,
        subject: &Subject,
    ) -> Option<PolicyOutcome> {
        for p in &self.policies {
            let decided = match p.evaluate(effective) {
                None => continue,
                Some(PolicyVerdict::Deny(reason)) => PermissionDecision::new(
                    Behavior::Deny,
                    Step::Policy,
                    format!("policy `{}`: {reason}", p.name()),
                ),
                Some(PolicyVerdict::Ask(reason)) => self.ask_or_deny(
                    call,
                    canonical,
                    subject,
                    Step::Policy,
                    format!("policy `{}`: {reason}", p.name()),
                    None,
                    true,
                ),
                Some(PolicyVerdict::Allow) => PermissionDecision::new(
                    Behavior::Allow,
                    Step::Policy,
                    format!("allowed by policy `{}`", p.name()),
                ),
                Some(PolicyVerdict::AllowWithInput(new_input)) => {
                    if let Some(d) = self.recheck(call, &new_input) {
                        return Some(PolicyOutcome::Rewritten(d));
                    }
                    let mut d = PermissionDecision::new(
                        Behavior::Allow,
                        Step::Policy,
                        format!("allowed by policy `{}` with a rewritten input", p.name()),
                    );
                    d.updated_input = Some(new_input);
                    return Some(PolicyOutcome::Rewritten(d));
                }
            };
            return Some(PolicyOutcome::Decided(decided));
        }
        None
    }

    /// Step 9: nothing decided, so ask; except Bash under an active sandbox with
    /// `autoAllowBashIfSandboxed`, which is allowed.
    pub(super) fn otherwise_step(
        &self,
        call: &ToolCall,
        canonical: &str,
        subject: &Subject,
    ) -> PermissionDecision {
        if canonical == "Bash" && self.sandbox.active && self.sandbox.auto_allow_bash {
            return PermissionDecision::new(
                Behavior::Allow,
                Step::Prompt,
                "autoAllowBashIfSandboxed: Bash runs inside the active sandbox, whose own checks still apply",
            );
        }
        let why = no_allow_reason(canonical, subject);
        self.ask_or_deny(call, canonical, subject, Step::Prompt, why, None, false)
    }

    /// Step 2: a deny rule matching any part of the call (or an input the tool cannot take).
    pub(super) fn deny_step(
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
    pub(super) fn ask_and_safety_steps(
        &self,
        call: &ToolCall,
        canonical: &str,
        input: &Value,
        subject: &Subject,
    ) -> Option<PermissionDecision> {
        let skip_bare_bash = canonical == "Bash"
            && self.sandbox.active
            && self.sandbox.auto_allow_bash
            && self.mode() != PermissionMode::Plan;
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
    pub(super) fn ask_or_deny(
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
        let mut d = if self.mode() == PermissionMode::DontAsk {
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

    pub(super) fn safety(&self, call: &ToolCall, subject: &Subject) -> Option<Finding> {
        let bypass = self.mode() == PermissionMode::BypassPermissions;
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
                    b.environment
                        .clone()
                        .filter(|_| !bypass)
                        .map(Finding::Environment)
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

    pub(super) fn mode_step(
        &self,
        call: &ToolCall,
        canonical: &str,
        subject: &Subject,
    ) -> Option<PermissionDecision> {
        let allow =
            |reason: &str| Some(PermissionDecision::new(Behavior::Allow, Step::Mode, reason));
        match self.mode() {
            PermissionMode::Plan => match subject {
                Subject::Edit(_) => {
                    return Some(PermissionDecision::new(
                        Behavior::Deny,
                        Step::Mode,
                        "plan mode: edits are not allowed until the plan is approved",
                    ));
                }
                Subject::Bash(b) => {
                    return if self.bash_is_read_only(b)
                        && let Ok(script) = &b.parsed
                    {
                        allow("plan mode: read-only command").map(|d| {
                            d.contained(Containment::read_only(
                                "a read-only command in plan mode",
                                script,
                            ))
                        })
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
                    None => {
                        let d = PermissionDecision::new(
                            Behavior::Allow,
                            Step::Mode,
                            "auto mode: nothing dangerous found",
                        );
                        match subject {
                            Subject::Bash(b) => match &b.parsed {
                                Ok(script) => d.contained(Containment::working_dirs(
                                    "auto mode's classifier",
                                    script,
                                )),
                                Err(_) => d,
                            },
                            _ => d,
                        }
                    }
                });
            }
            _ => {}
        }
        match subject {
            Subject::Read(paths) if paths.iter().all(|p| self.wd.contains(p)) => {
                allow("reads inside the working directories are allowed in every mode")
            }
            Subject::Edit(paths)
                if self.mode() == PermissionMode::AcceptEdits
                    && paths.iter().all(|p| self.wd.contains(p)) =>
            {
                allow("acceptEdits mode: edit inside the working directories")
            }
            _ => None,
        }
    }

    /// Every sub-command read-only, every file read through a redirect or an option inside the
    /// working directories, and no file written (plan mode).
    pub(super) fn bash_is_read_only(&self, b: &BashSubject) -> bool {
        let Ok(script) = &b.parsed else { return false };
        b.writes.is_empty()
            && self.side_reads_inside(b)
            && script
                .commands
                .iter()
                .zip(&b.read_only)
                .all(|(c, ro)| (c.words.is_empty() && c.assignments.is_empty()) || *ro)
    }

    /// Files read through redirects (`< f`) and options (`--files0-from=f`) must be inside the
    /// working directories, whatever approved the command: a read-only command or an allow
    /// rule for the program does not extend to what the shell or an option feeds it.
    pub(super) fn side_reads_inside(&self, b: &BashSubject) -> bool {
        b.reads.iter().filter(|r| r.via != Via::Operand).all(|r| {
            r.is_static() && !r.word.home && r.path.as_ref().is_some_and(|p| self.wd.contains(p))
        })
    }
}

/// Why step 9 asks: what no allow rule covered, naming an exact-string rule that would have
/// approved a Bash sub-command had it been written as one.
fn no_allow_reason(canonical: &str, subject: &Subject) -> String {
    match subject {
        Subject::Bash(b) => {
            let mut why =
                "no allow rule, read-only command or grant covers every part of this command"
                    .to_owned();
            if let Some((text, reason)) = b
                .allow_views
                .iter()
                .flatten()
                .find_map(|v| v.exact_reason.as_deref().map(|r| (v.text.as_str(), r)))
            {
                why.push_str(&format!(
                    "; only an exact-string rule approves `{text}`: {reason}"
                ));
            }
            why
        }
        Subject::Read(_) => {
            "reading outside the working directories needs an allow rule".to_owned()
        }
        Subject::Edit(_) => format!("{canonical} changes files and no allow rule covers it"),
        _ => format!("no allow rule covers {canonical}"),
    }
}
