//! Programs that run another program given in their arguments (`timeout 5 rm x`, `sudo rm x`,
//! `xargs rm`): one complete option table per program, as the program itself defines it,
//! read with [`super::getopt_long`] (GNU `getopt_long` with `+`: abbreviations, optional
//! values only attached, options ending at the command). The permission checker
//! ([`crate::shell::wrappers::unwrap`]) and the WASI shell's own `xargs`, `env` and `timeout`
//! use these same tables, so they agree on which word is the command.
//!
//! Each table says what comes between the options and the command ([`Layout`]), what its
//! options mean for the checker ([`OptionRole`](super::getopt_long::OptionRole): a file written or read, a command line run, no
//! command run at all), whether allow rules see through it (claude-code.md §3.2), and carries
//! example rows that a test runs through the checker's parse (as codex's execpolicy rules
//! carry `match` / `not_match` examples).
//!
//! When the arguments do not parse as the program parses them (an unknown or ambiguous option,
//! a missing value), or a word only known at run time stands where an option or the command
//! may stand, the checker does not guess which command runs: the command is not analysable
//! (an [`crate::shell::IssueKind::Wrapper`] issue), so it is never auto-approved and no prefix
//! rule approves it. The program itself would fail on a bad option; a different version of it
//! might not.

mod markdown;
mod peel;
mod tables;

pub use markdown::markdown_table;
pub(crate) use peel::{Peel, peel};
use tables::WRAPPERS;
pub use tables::{ENV, TIMEOUT, XARGS};

use super::getopt_long::{Opt, Options};

/// What stands between a wrapper's options and the command it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Nothing: the first operand is the command (`nice`, `time`, `sudo`, ...).
    Command,
    /// `NAME=VALUE` assignments (`env`, after a lone `-` that empties the environment; `sudo`).
    Assignments {
        /// Whether a lone `-` before them empties the environment (`env -`).
        dash: bool,
        /// Whether every word holding a `=` is an assignment, whatever its name (GNU `env`
        /// tests `strchr (arg, '=')`: `env A:=1 rm` and `env 1=2 rm` run `rm`). Otherwise only
        /// a shell identifier's `NAME=VALUE` is one, and another word with a `=` is not
        /// analysable (which of the two the program takes is not known).
        any_word: bool,
    },
    /// One operand (`timeout DURATION`, `taskset MASK`).
    Operand,
    /// `chrt [PRIORITY] COMMAND`: a priority when the first operand is a number and more
    /// follow (util-linux 2.40; older versions require it).
    Priority,
    /// `flock FILE COMMAND`, `flock FILE -c STRING` (FILE is opened with `O_CREAT`: a write),
    /// or `flock --fd N COMMAND`; `flock NUMBER` alone locks a descriptor and runs nothing.
    LockFile,
    /// `watch COMMAND...`: without `-x` the words are joined with spaces and run by `sh -c`.
    Watch,
    /// `xargs COMMAND...`: the command gets the items xargs reads, appended to its arguments,
    /// or, with `-I R`, put in place of `R` in each argument (the name included).
    Xargs,
}

/// What the checker sees in an example row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Runs the command with this name.
    Runs(&'static str),
    /// Runs the command with this name and writes this file.
    RunsWriting(&'static str, &'static str),
    /// Runs this command line through a shell.
    Script(&'static str),
    /// Runs no command.
    Nothing,
    /// Not analysable: the checker does not see through it.
    Unknown,
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Runs(name) => write!(f, "runs `{name}`"),
            Self::RunsWriting(name, file) => write!(f, "runs `{name}`, writes `{file}`"),
            Self::Script(script) => write!(f, "runs the command line `{script}`"),
            Self::Nothing => f.write_str("runs nothing"),
            Self::Unknown => f.write_str("not analysable"),
        }
    }
}

/// One wrapper program.
#[derive(Clone, Copy, Debug)]
pub struct Wrapper {
    /// Its name (the command's basename).
    pub name: &'static str,
    /// Its complete option table.
    pub options: Options,
    /// What stands between the options and the command.
    pub layout: Layout,
    /// Whether allow rules (and the read-only set) see through it; `xargs` only without
    /// options.
    pub transparent: bool,
    /// Whether only an exact-string allow rule approves it (exec wrappers,
    /// claude-code.md §3.2 item 5).
    pub exact_only: bool,
    /// Where the table comes from.
    pub source: &'static str,
    /// Example commands and what the checker sees in them.
    pub examples: &'static [(&'static str, Expect)],
}

const fn w(
    name: &'static str,
    opts: &'static [Opt],
    layout: Layout,
    transparent: bool,
    source: &'static str,
    examples: &'static [(&'static str, Expect)],
) -> Wrapper {
    Wrapper {
        name,
        options: Options {
            program: name,
            opts,
            numeric: None,
        },
        layout,
        transparent,
        exact_only: false,
        source,
        examples,
    }
}

/// The wrapper named `name` (a basename), if it is one.
pub fn lookup(name: &str) -> Option<&'static Wrapper> {
    WRAPPERS.iter().find(|w| w.name == name)
}

/// Whether only an exact-string allow rule approves `name` (`watch`, `setsid`, `ionice`,
/// `flock`: claude-code.md §3.2 item 5).
pub(crate) fn is_exec_wrapper(name: &str) -> bool {
    lookup(name).is_some_and(|w| w.exact_only)
}

#[cfg(test)]
mod tests;
