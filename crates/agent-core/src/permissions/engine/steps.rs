//! Steps 2 to 4 and 7 of the decision: deny rules, ask rules, the safety checks, and the
//! mode; with the ask-or-deny answer that `dontAsk` and policies shape.

use super::*;

impl PermissionEngine {
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
