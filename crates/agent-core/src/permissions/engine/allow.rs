//! Step 8: allow rules, the built-in read-only set and session grants; for Bash, every part
//! of the command and every file it writes or reads through redirects and options.

use super::*;

impl PermissionEngine {
    pub(super) fn grant_list(&self) -> Arc<CompiledList> {
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

    pub(super) fn allow_step(
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

    pub(super) fn bash_allowed(
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
            // A redirect-only command's files are checked below; a bare assignment is judged
            // with the read-only set.
            if cmd.words.is_empty() && cmd.assignments.is_empty() {
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
            if self.mode() == PermissionMode::AcceptEdits
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
            if self.mode() == PermissionMode::AcceptEdits && self.wd.contains(p) {
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
                let containment =
                    Containment::working_dirs(format!("{what} `{}`", rule.text), script);
                PermissionDecision::new(Behavior::Allow, Step::AllowRule, reason)
                    .with_rule(Some(rule))
                    .contained(containment)
            }
            None if used_mode => PermissionDecision::new(
                Behavior::Allow,
                Step::Mode,
                "acceptEdits mode: filesystem commands inside the working directories",
            )
            .contained(Containment::working_dirs(
                "acceptEdits mode's file commands",
                script,
            )),
            None => PermissionDecision::new(
                Behavior::Allow,
                Step::AllowRule,
                "built-in read-only command",
            )
            .contained(Containment::read_only(
                "a built-in read-only command",
                script,
            )),
        })
    }
}

/// The first allow rule of `list` covering a non-Bash call.
pub(super) fn tool_allowed(
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
