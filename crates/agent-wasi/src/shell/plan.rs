//! The plan: an owned tree of what a script runs, compiled from brush-parser's AST by
//! `parse.rs`. Words stay unexpanded (expansion happens when the command runs, because `cd`,
//! `export` and `$?` change what they mean).

use super::error::ShellError;

/// A compiled script: every part of it is in the supported subset.
///
/// Parsing is all-or-nothing: a script with one unsupported construct anywhere is refused as a
/// whole, so nothing runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub(crate) items: Vec<AndOr>,
}

impl Plan {
    /// Parses `script` into a plan.
    ///
    /// # Errors
    /// [`ShellError::Parse`] when the script does not parse, [`ShellError::Unsupported`] when it
    /// uses syntax outside the supported subset (the error names the first such construct and
    /// its position).
    pub fn parse(script: &str) -> Result<Self, ShellError> {
        super::parse::compile(script)
    }

    /// The number of simple commands in the plan (every stage of every pipeline).
    pub fn command_count(&self) -> usize {
        self.items
            .iter()
            .map(|item| {
                std::iter::once(&item.first)
                    .chain(item.rest.iter().map(|(_, p)| p))
                    .map(|p| p.stages.len())
                    .sum::<usize>()
            })
            .sum()
    }
}

/// Pipelines joined by `&&` / `||`; the items of a [`Plan`] are joined by `;` or newlines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
}

/// `&&` or `||`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Connector {
    And,
    Or,
}

/// Stages joined by `|` (or `|&`), optionally negated with `!`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pipeline {
    pub negated: bool,
    pub stages: Vec<Command>,
}

/// One simple command: assignments, words (name first) and redirects in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Command {
    pub assignments: Vec<Assignment>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// `NAME=value` or `NAME+=value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Assignment {
    pub name: String,
    pub append: bool,
    pub value: Word,
}

/// A word as written, split into the parts expansion treats differently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    /// The word as written (for messages: `bash: $F: ambiguous redirect`).
    pub source: String,
    pub parts: Vec<Part>,
    /// `NAME=value` argument of a literal `export`: expanded like an assignment (no field
    /// splitting, no globbing), as bash does for declaration builtins.
    pub assignment_like: bool,
}

impl Word {
    /// The word's value when it has no expansion and no active glob character.
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text { text, quoted } => {
                    if !quoted && text.contains(['*', '?', '[']) {
                        return None;
                    }
                    out.push_str(text);
                }
                Part::Var { .. } | Part::Status { .. } => return None,
            }
        }
        Some(out)
    }
}

/// A piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// Literal text after quote removal. Unquoted text may hold glob characters; quoted text
    /// (single, double, `$'..'`, backslash-escaped) never globs.
    Text { text: String, quoted: bool },
    /// `$NAME` / `${NAME}`; inside double quotes it is neither split nor globbed.
    Var { name: String, quoted: bool },
    /// `$?`.
    Status { quoted: bool },
}

/// An output stream a redirect can point elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fd {
    Stdout,
    Stderr,
}

/// A redirect, applied left to right (so `>f 2>&1` and `2>&1 >f` differ, as in bash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// `< file`, `0< file`.
    Read { target: Word },
    /// `> file`, `>> file`, `2> file`, `>| file` (the fd is stdout or stderr).
    Write { fd: Fd, target: Word, append: bool },
    /// `2>&1`, `>&2`, `1>&2`: `fd` becomes a copy of `to`.
    Dup { fd: Fd, to: Fd },
    /// `&> file`, `&>> file`.
    Both { target: Word, append: bool },
}
