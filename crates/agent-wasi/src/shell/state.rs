//! The shell's state and what a command asks of it: [`State`] (variables, working directory,
//! last status, options, enclosing loops), read and changed by the interpreter and the
//! built-ins, and [`Flow`] (go on, exit, break, continue, stop).

use super::options::ShellOptions;
use super::vars::Vars;
use super::workspace::GuestPath;

/// The exit status of a script stopped by its cancellation flag (as bash after SIGINT).
pub(crate) const CANCELLED_STATUS: i32 = 130;

/// What a command asks of the shell after it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on; the command's status.
    Status(i32),
    /// `exit N`: end the script (or, in a pipeline stage, that stage) with N.
    Exit(i32),
    /// `break N`: leave N enclosing loops (at least 1, at most the loops there are), the loop
    /// then having this status (0, or 1 after bash's "loop count out of range").
    Break(u32, i32),
    /// `continue N`: the next iteration of the Nth enclosing loop.
    Continue(u32),
    /// The script's cancellation flag was seen: stop everything.
    Cancelled,
}

/// The shell's state: variables, working directory, last status, loops being run.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub vars: Vars,
    pub cwd: GuestPath,
    pub status: i32,
    /// How many `for` / `while` / `until` loops enclose the command running (0 in a pipeline
    /// stage, as in bash's subshells).
    pub loops: u32,
    /// The options `set` changes.
    pub options: ShellOptions,
    /// How many places enclose the command where a failure does not end the script under
    /// `set -e` (a condition, a `&&` / `||` operand but the last, a negated pipeline).
    pub guarded: u32,
}
