//! How a Bash command's arguments are read by the permission engine: its positional
//! arguments, and the directory its relative paths start from ([`Paths`]). Shared by the
//! request (what a call reads and writes) and the command checks (read-only set, `acceptEdits`
//! commands, the safety step), so neither depends on the other.

use super::workdirs::{ResolvedPath, WorkingDirs};
use crate::glob::{ExpansionLimits, Pattern};
use crate::shell::Word;

/// How far the permission engine expands one glob a read-only command reads before it asks
/// instead (a command line with more paths is rarely what a read-only command was meant to be
/// given, and a decision stays quick on a large tree: `*/*/*`).
pub(crate) const GLOB_LIMITS: ExpansionLimits = ExpansionLimits {
    matches: 1_000,
    entries: 10_000,
};

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
    /// real form). `cat sec*` reads whatever `sec*` matches when bash runs it (a symlink
    /// `secret → /etc/x` makes it a read of `/etc/x`), so a glob is expanded against the file
    /// system from the directory the command runs in ([`crate::glob`], within
    /// [`GLOB_LIMITS`]), and every path it may name, its own text included (bash passes it on
    /// when nothing matches), must be inside, resolved through symlinks. A glob is not inside
    /// when it is too large to expand, when its meaning cannot be told from the unquoted text
    /// (a quoted `[` next to an unquoted glob, brace expansion, an extended glob), or when it
    /// has a `..` component (it could pass through a symlink it matches).
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
        let text = word.text.as_str();
        let quoted = word.raw.contains(['\'', '"', '\\']);
        if (text.contains('{') && text.contains('}'))
            || text.contains('(')
            || (quoted && text.contains('['))
        {
            return false;
        }
        let absolute = if word.home && (text == "~" || text.starts_with("~/")) {
            self.wd
                .home()
                .join(text.trim_start_matches('~').trim_start_matches('/'))
        } else {
            base.join(text)
        };
        match Pattern::new(&absolute).expand(false, GLOB_LIMITS) {
            Ok(found) => found.matches.iter().chain([&absolute]).all(|p| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn glob(text: &str) -> Word {
        Word {
            glob: true,
            ..Word::literal(text)
        }
    }

    #[test]
    fn a_glob_is_inside_only_when_every_file_it_names_is() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("src/a")).unwrap();
        std::fs::write(root.join("src/a/x.rs"), "").unwrap();
        std::fs::write(root.join("src/y.rs"), "").unwrap();
        std::fs::write(root.join(".env"), "").unwrap();
        let wd = WorkingDirs::new(&root, &root, &[]);
        let paths = Paths {
            wd: &wd,
            base: Some(&root),
        };
        assert!(paths.inside(&glob("src/*/*.rs")));
        assert!(paths.inside(&glob("*")));
        assert!(paths.inside(&glob("~/s*")));
        std::os::unix::fs::symlink("/etc/hostname", root.join("secret")).unwrap();
        for outside in ["sec*", "*", ".*", "[s]ecret"] {
            assert!(!paths.inside(&glob(outside)), "{outside}");
        }
        let home = Word {
            home: true,
            ..glob("~/s*")
        };
        let elsewhere = Paths {
            wd: &wd,
            base: Some(Path::new("/nowhere")),
        };
        assert!(!elsewhere.inside(&home));
        std::fs::remove_file(root.join("secret")).unwrap();
        // Meanings the unquoted text cannot tell.
        let quoted = Word {
            raw: "'[a]'*".into(),
            ..glob("[a]*")
        };
        for ambiguous in [quoted, glob("{a,b}*"), glob("@(src)")] {
            assert!(!paths.inside(&ambiguous), "{ambiguous:?}");
        }
    }

    #[test]
    fn a_glob_too_large_to_check_is_not_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let wd = WorkingDirs::new(&root, &root, &[]);
        let paths = Paths {
            wd: &wd,
            base: Some(&root),
        };
        for i in 0..GLOB_LIMITS.matches {
            std::fs::write(root.join(format!("f{i}")), "").unwrap();
        }
        assert!(paths.inside(&glob("f*")));
        std::fs::write(root.join("f-last"), "").unwrap();
        assert!(!paths.inside(&glob("f*")));
    }
}
