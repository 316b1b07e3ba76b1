//! How a Bash command's arguments are read by the permission engine: its positional
//! arguments, and the directory its relative paths start from ([`Paths`]). Shared by the
//! request (what a call reads and writes) and the command checks (read-only set, `acceptEdits`
//! commands, the safety step), so neither depends on the other.

use super::workdirs::{ResolvedPath, WorkingDirs};
use crate::shell::Word;

/// Positional arguments of a command: words after the name that are not options (all words
/// after `--`).
pub(crate) fn positionals(words: &[Word]) -> Vec<&Word> {
    positionals_with(words, &[])
}

/// Like [`positionals`], where the options in `takes_arg` consume the word after them.
pub(crate) fn positionals_with<'a>(words: &'a [Word], takes_arg: &[&str]) -> Vec<&'a Word> {
    let mut out = Vec::new();
    let mut options_done = false;
    let mut skip_next = false;
    for w in words.iter().skip(1) {
        if skip_next {
            skip_next = false;
            continue;
        }
        if !options_done && w.text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && w.text.len() > 1 && w.text.starts_with('-') && !w.dynamic {
            skip_next = takes_arg.contains(&w.text.as_str());
            continue;
        }
        out.push(w);
    }
    out
}

/// Options of `grep`-like commands that take a separate argument.
pub(crate) const PATTERN_OPTIONS: &[&str] = &[
    "-e",
    "-f",
    "--regexp",
    "--file",
    "--expression",
    "-A",
    "-B",
    "-C",
    "-m",
    "--max-count",
    "-g",
    "--glob",
    "-t",
    "--type",
    "--include",
    "--exclude",
];

/// Where a command's relative paths start.
#[derive(Clone, Copy)]
pub(crate) struct Paths<'a> {
    pub wd: &'a WorkingDirs,
    /// `None` when a `cd` went somewhere only known at run time.
    pub base: Option<&'a std::path::Path>,
}

impl Paths<'_> {
    /// Resolves a static path (`None` for a relative path after an unknown `cd`).
    pub fn resolve(&self, text: &str) -> Option<ResolvedPath> {
        let absolute = text.starts_with('/') || text == "~" || text.starts_with("~/");
        match self.base {
            Some(b) => Some(self.wd.resolve_from(b, text)),
            None if absolute => Some(self.wd.resolve(text)),
            None => None,
        }
    }

    /// A static word naming a path inside the working directories (both its lexical and its
    /// real form). A glob is expanded against the file system ([`super::globbing`]) and every
    /// path it may name must be inside, resolved through symlinks; one too large to expand or
    /// whose pattern the text cannot tell is not. A glob with a `..` component could pass
    /// through a symlink it matches, so it is not either.
    pub fn inside(&self, word: &Word) -> bool {
        if word.dynamic || (word.glob && word.text.split('/').any(|c| c == "..")) {
            return false;
        }
        let Some(path) = self.resolve(&word.text) else {
            return false;
        };
        if !self.wd.contains(&path) {
            return false;
        }
        if !word.glob {
            return true;
        }
        let Some(base) = self.base else {
            return false;
        };
        match super::globbing::expand(word, base, self.wd.home()) {
            Ok(paths) => paths.iter().all(|p| {
                p.to_str()
                    .is_some_and(|text| self.wd.contains(&self.wd.resolve_from(base, text)))
            }),
            Err(_) => false,
        }
    }

    /// Whether the word names a directory now, or may (a glob or a path only known at run
    /// time): for commands that read through the links inside a directory.
    pub fn is_directory(&self, word: &Word) -> bool {
        if !word.is_static() {
            return true;
        }
        self.resolve(&word.text).is_none_or(|p| {
            let path = p.real.as_ref().unwrap_or(&p.lexical);
            std::fs::metadata(path).is_ok_and(|m| m.is_dir())
        })
    }
}
