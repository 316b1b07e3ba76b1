//! What a command writes, checked against the write grants: the files a sed script writes and
//! `sed -i` rewrites, files named by a program's options (`--output=F`), git's locations
//! (`git -C DIR`) and redirects.

use std::path::Path;

use agent_core::glob::{Pattern, Reach};
use agent_core::programs::sed;
use agent_core::shell::{SimpleCommand, wrappers};

use super::arguments::Reading;
use super::{CommandChecker, arguments, recursion};
use crate::paths::{Op, lexical};
use crate::verdict::Verdict;

impl CommandChecker {
    /// `sed`, read by `agent_core::programs::sed` (GNU sed 4.9's options and its script
    /// compiler): a call it cannot read, or a script that runs commands, is refused; the files
    /// its script writes and `-i` rewrites (and their backups) are checked as writes; returns
    /// the files its script reads.
    pub(super) fn check_sed(
        &self,
        words: &[agent_core::shell::Word],
        appended: bool,
        shown: &SimpleCommand,
    ) -> Result<Vec<agent_core::shell::Word>, Verdict> {
        if !self.restricts() {
            return Ok(Vec::new());
        }
        let call = sed::read(words.get(1..).unwrap_or(&[])).map_err(|why| {
            Verdict::deny(
                format!("`{shown}`: {why}"),
                Some("built-in: sed script".into()),
            )
        })?;
        if let Some(c) = call.runs() {
            return Err(Verdict::deny(
                format!(
                    "`{shown}`: sed's script {}, out of the checker's sight; run that command directly",
                    sed::describe(c)
                ),
                Some("built-in: program-running option".into()),
            ));
        }
        // sed's own streams, never opened as files.
        for f in call
            .writes()
            .filter(|f| !matches!(*f, "/dev/stdout" | "/dev/stderr"))
        {
            if let Some(v) = self.check_write_word(&agent_core::shell::Word::literal(f), shown) {
                return Err(v);
            }
        }
        if let Some(suffix) = &call.in_place {
            if appended {
                return Err(Verdict::deny(
                    format!(
                        "`{shown}` rewrites the files `xargs` adds from its input, which are only known at run time"
                    ),
                    Some("built-in: dynamic write".into()),
                ));
            }
            for f in &call.files {
                if let Some(v) = self.check_in_place(f, suffix, shown) {
                    return Err(v);
                }
            }
        }
        Ok(call
            .reads()
            .filter(|f| *f != "/dev/stdin")
            .map(agent_core::shell::Word::literal)
            .collect())
    }

    /// A file `sed -i` rewrites (a glob: each file it matches now), and its backup.
    pub(super) fn check_in_place(
        &self,
        w: &agent_core::shell::Word,
        suffix: &str,
        shown: &SimpleCommand,
    ) -> Option<Verdict> {
        let targets: Vec<String> = if w.glob && !w.dynamic {
            let p = match self.expand(&w.text, w.home) {
                Ok(p) => p,
                Err(why) => return Some(self.unknown_write(w, &why, shown)),
            };
            let pattern = Pattern::new(&p);
            let normal = Pattern::new(&lexical(&p, Path::new("/")));
            if let Some(d) = self
                .paths
                .denied_paths(Op::Write)
                .find(|d| normal.reach(d) == Some(Reach::AtOrUnder))
            {
                return Some(Verdict::deny(
                    format!(
                        "`{shown}` rewrites the files {} matches, which can be the denied {}",
                        w.raw,
                        d.display()
                    ),
                    Some("deniedPaths (glob)".into()),
                ));
            }
            match pattern.expand(self.globstar, arguments::GLOB_LIMITS) {
                Ok(found) => found
                    .matches
                    .into_iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect(),
                Err(e) => {
                    return Some(Verdict::deny(
                        format!("`{shown}`: the pattern {} cannot be checked: {e}", w.raw),
                        Some("built-in: glob".into()),
                    ));
                }
            }
        } else {
            vec![w.text.clone()]
        };
        for t in targets {
            let file = agent_core::shell::Word {
                text: t.clone(),
                glob: false,
                ..w.clone()
            };
            if let Some(v) = self.check_write_word(&file, shown) {
                return Some(v);
            }
            if !suffix.is_empty() {
                let backup = agent_core::shell::Word {
                    text: sed::backup_name(&t, suffix),
                    glob: false,
                    ..w.clone()
                };
                if let Some(v) = self.check_write_word(&backup, shown) {
                    return Some(v);
                }
            }
        }
        None
    }

    pub(super) fn unknown_write(
        &self,
        w: &agent_core::shell::Word,
        why: &str,
        shown: &SimpleCommand,
    ) -> Verdict {
        Verdict::deny(
            format!("`{shown}` writes {}, {why}", w.raw),
            Some("built-in: dynamic write".into()),
        )
    }

    /// A file a known program writes through an option or positional (`--output=F`,
    /// `git init DIR`): checked against the write grants.
    pub(super) fn check_write_word(
        &self,
        w: &agent_core::shell::Word,
        shown: &SimpleCommand,
    ) -> Option<Verdict> {
        if !w.is_static() {
            return Some(Verdict::deny(
                format!("`{shown}` writes a file only known at run time ({})", w.raw),
                Some("built-in: dynamic write".into()),
            ));
        }
        let p = match self.expand(&w.text, w.home) {
            Ok(p) => p,
            Err(why) => return Some(self.unknown_write(w, &why, shown)),
        };
        let v = self.paths.check(&p, Op::Write);
        (!v.allowed).then(|| {
            Verdict::deny(
                format!("`{shown}` writes {}: {}", p.display(), v.reason),
                v.rule,
            )
        })
    }

    /// `git -C DIR`, `--git-dir=DIR`, `--work-tree=DIR`: git then reads and writes there, so
    /// the directory must be writable.
    pub(super) fn check_git_location(
        &self,
        words: &[agent_core::shell::Word],
        shown: &SimpleCommand,
    ) -> Option<Verdict> {
        if words.first().map(|w| wrappers::basename(&w.text)) != Some("git") {
            return None;
        }
        let mut i = 1;
        while let Some(w) = words.get(i) {
            let t = w.text.as_str();
            if !t.starts_with('-') {
                break;
            }
            i += 1;
            let value = if t == "-C" || ["--git-dir", "--work-tree"].contains(&t) {
                let v = words.get(i).cloned();
                i += 1;
                v
            } else if let Some(v) = t
                .strip_prefix("--git-dir=")
                .or_else(|| t.strip_prefix("--work-tree="))
            {
                Some(agent_core::shell::Word {
                    text: v.to_owned(),
                    ..w.clone()
                })
            } else if let Some(v) = t.strip_prefix("-C").filter(|v| !v.is_empty()) {
                Some(agent_core::shell::Word {
                    text: v.to_owned(),
                    ..w.clone()
                })
            } else {
                if t == "-c" {
                    i += 1;
                }
                None
            };
            if let Some(v) = value
                && let Some(verdict) = self.check_write_word(&v, shown)
            {
                return Some(verdict);
            }
        }
        None
    }

    pub(super) fn check_redirects(
        &self,
        cmd: &SimpleCommand,
        shown: &SimpleCommand,
    ) -> Option<Verdict> {
        for r in &cmd.redirects {
            if let Some(t) = r.written_file() {
                if !t.is_static() {
                    return Some(Verdict::deny(
                        format!(
                            "`{shown}`: writes to a file only known at run time ({})",
                            t.raw
                        ),
                        Some("built-in: dynamic redirect".into()),
                    ));
                }
                let p = match self.expand(&t.text, t.home) {
                    Ok(p) => p,
                    Err(why) => return Some(self.unknown_write(t, &why, shown)),
                };
                if p.as_os_str() != "/dev/null" {
                    let v = self.paths.check(&p, Op::Write);
                    if !v.allowed {
                        return Some(Verdict::deny(
                            format!("`{shown}` writes {}: {}", p.display(), v.reason),
                            v.rule,
                        ));
                    }
                }
            }
            if let Some(t) = r.read_file() {
                let cands = arguments::candidates(t, self.base());
                if let Some((why, rule)) = arguments::refusal(
                    &self.paths,
                    self.cwd_real(),
                    &cands,
                    Op::Read,
                    Reading {
                        recursion: recursion::Recursion::No,
                        globstar: self.globstar,
                    },
                ) {
                    return Some(Verdict::deny(format!("`{shown}` {why}"), rule));
                }
            }
        }
        None
    }
}
