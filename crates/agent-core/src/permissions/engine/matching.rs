//! Which rule of a list matches a call: the lowest index among every form of every part.

use super::*;

impl PermissionEngine {
    /// The lowest-index rule of `list` that matches any part of the call.
    pub(super) fn first_match(
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
}
