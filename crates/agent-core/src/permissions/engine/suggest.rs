//! Rules that would allow a call, offered with an ask (and named in `dontAsk` denials).

use super::*;

impl PermissionEngine {
    /// Rules that would allow this call, best first.
    pub(super) fn suggest(&self, canonical: &str, subject: &Subject) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let dir_rule = |tool: &str, p: &super::super::workdirs::ResolvedPath| {
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

pub(super) fn suggestion_hint(suggestions: &[String]) -> String {
    match suggestions.first() {
        Some(s) => format!("; to allow it, add an allow rule such as `{s}`"),
        None => String::new(),
    }
}
