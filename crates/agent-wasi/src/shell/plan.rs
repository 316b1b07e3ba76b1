//! The plan: an owned tree of what a script runs, compiled by `parse.rs` from agent-core's
//! lowered shell tree (`agent_core::shell::tree`). Words stay unexpanded (expansion happens when
//! the command runs, because `cd`, `export` and `$?` change what they mean).
//!
//! This module is the compiled script's vocabulary and depends on no other part of the shell:
//! `parse.rs` (with `word.rs` and `cond.rs`) produces it, `exec/`, `expand.rs`, `param.rs` and
//! `cond.rs` give it meaning.

/// A compiled script: every part of it is in the supported subset.
///
/// Parsing is all-or-nothing: a script with one unsupported construct anywhere is refused as a
/// whole, so nothing runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub(crate) items: Vec<AndOr>,
}

impl Plan {
    /// The number of simple commands written in the plan (every stage of every pipeline,
    /// inside compound commands too; a loop's body counts once).
    pub fn command_count(&self) -> usize {
        count_list(&self.items)
    }
}

fn count_list(items: &[AndOr]) -> usize {
    items
        .iter()
        .map(|item| {
            std::iter::once(&item.first)
                .chain(item.rest.iter().map(|(_, p)| p))
                .map(|p| p.stages.iter().map(Node::command_count).sum::<usize>())
                .sum::<usize>()
        })
        .sum()
}

/// One stage of a pipeline: a simple command, or a compound command with its redirects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    Simple(Command),
    Compound(Box<Compound>, Vec<Redirect>),
}

impl Node {
    fn command_count(&self) -> usize {
        match self {
            Self::Simple(_) => 1,
            Self::Compound(compound, _) => match compound.as_ref() {
                Compound::Group(body) => count_list(body),
                Compound::If {
                    branches,
                    otherwise,
                } => {
                    branches
                        .iter()
                        .map(|(c, b)| count_list(c) + count_list(b))
                        .sum::<usize>()
                        + otherwise.as_deref().map_or(0, count_list)
                }
                Compound::For { body, .. } => count_list(body),
                Compound::Loop {
                    condition, body, ..
                } => count_list(condition) + count_list(body),
                Compound::Case { arms, .. } => arms.iter().map(|a| count_list(&a.body)).sum(),
                Compound::Test(_) | Compound::Arith(_) => 1,
                Compound::ArithFor { body, .. } => count_list(body),
            },
        }
    }
}

/// A compound command (`docs/shell.md`, Compound commands).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Compound {
    /// `{ LIST; }`: runs in the shell itself.
    Group(Vec<AndOr>),
    /// `if C; then B; elif C; then B; else B; fi`.
    If {
        branches: Vec<(Vec<AndOr>, Vec<AndOr>)>,
        otherwise: Option<Vec<AndOr>>,
    },
    /// `for NAME in WORDS; do BODY; done` (`for NAME; do`: no words, as there are no
    /// positional parameters).
    For {
        name: String,
        words: Vec<Word>,
        body: Vec<AndOr>,
    },
    /// `while C; do B; done`, or `until` (`until` true).
    Loop {
        until: bool,
        condition: Vec<AndOr>,
        body: Vec<AndOr>,
    },
    /// `case WORD in PATTERN|PATTERN) LIST ;; ... esac`.
    Case { subject: Word, arms: Vec<CaseArm> },
    /// `[[ EXPRESSION ]]` (evaluated by cond.rs).
    Test(Cond),
    /// `(( EXPRESSION ))`: the text (checked by `arith::check_command`).
    Arith(String),
    /// `for (( INIT; CONDITION; UPDATE )); do BODY; done` (each part may be empty).
    ArithFor {
        init: Option<String>,
        condition: Option<String>,
        update: Option<String>,
        body: Vec<AndOr>,
    },
}

/// One `PATTERN|PATTERN) LIST ;;` of a `case`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CaseArm {
    pub patterns: Vec<Word>,
    pub body: Vec<AndOr>,
    pub then: CaseNext,
}

/// What follows an arm that ran: `;;` stops, `;&` runs the next arm's list, `;;&` goes on
/// testing the next patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CaseNext {
    Stop,
    FallThrough,
    TestNext,
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
    pub stages: Vec<Node>,
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
    /// One of several words a brace expansion made from one written word (`{ls,cat}`).
    pub braced: bool,
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
                Part::Var { .. }
                | Part::Status { .. }
                | Part::Arith { .. }
                | Part::Param { .. } => {
                    return None;
                }
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
    /// `$((EXPRESSION))`: the text between the parentheses (checked by `arith::check`).
    Arith { text: String, quoted: bool },
    /// `${NAME<op>..}` (applied by expand.rs and param.rs).
    Param {
        name: String,
        op: ParamOp,
        quoted: bool,
    },
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

/// Which test `${NAME:-W}` and its relatives make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamTest {
    /// `-`: the word when the test holds, else the value.
    Default,
    /// `+`: the word when the test does not hold, else nothing.
    Alternative,
    /// `?`: an error (the script ends) when the test holds.
    Error,
}

/// Where `${NAME/P/R}` replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamReplace {
    /// `/`: the first match.
    First,
    /// `//`: every match.
    All,
    /// `/#`: a match at the start.
    Prefix,
    /// `/%`: a match at the end.
    Suffix,
}

/// The operator of a `${..}` expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ParamOp {
    /// `${#NAME}`.
    Length,
    /// `${NAME:-W}`, `${NAME-W}`, `${NAME:+W}`, `${NAME+W}`, `${NAME:?W}`, `${NAME?W}`; with the
    /// colon (`null_too`) an empty value counts as unset.
    Test {
        test: ParamTest,
        null_too: bool,
        word: Vec<Part>,
    },
    /// `${NAME#P}`, `${NAME##P}`, `${NAME%P}`, `${NAME%%P}`.
    Trim {
        suffix: bool,
        longest: bool,
        pattern: Vec<Part>,
    },
    /// `${NAME/P/R}` and its relatives.
    Replace {
        mode: ParamReplace,
        pattern: Vec<Part>,
        replacement: Vec<Part>,
    },
    /// `${NAME^}`, `${NAME^^}`, `${NAME,}`, `${NAME,,}`.
    Case { upper: bool, all: bool },
    /// `${NAME:OFFSET}`, `${NAME:OFFSET:LENGTH}` (arithmetic texts).
    Substring {
        offset: String,
        length: Option<String>,
    },
}

/// A compiled `[[ .. ]]` expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    /// A test of one operand.
    Unary(Unary, Word),
    /// A test of two operands.
    Binary(Binary, Word, Word),
}

/// The one-operand tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unary {
    Exists,
    Regular,
    Directory,
    Symlink,
    NonEmptyFile,
    Readable,
    Writable,
    Executable,
    Owned,
    /// `-b -c -p -S -u -g -k -t`: nothing in a workspace is one of these.
    Never,
    ModifiedSinceRead,
    EmptyString,
    NonEmptyString,
    VariableSet,
}

/// The two-operand tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binary {
    Matches,
    DoesNotMatch,
    Before,
    After,
    /// `-eq -ne -lt -le -gt -ge`: which orderings of the two numbers make it true.
    Number(Numeric),
    Newer,
    Older,
    SameFile,
}

/// An arithmetic comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Numeric {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}
