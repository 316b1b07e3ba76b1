//! The compiled script: what [`super::parse`] makes of a sed script and [`super::exec`] runs.
//! Regular expressions and output files are compiled once and referred to by index.

use regex::bytes::Regex;

use super::replace::Subst;

/// A first address.
#[derive(Debug, Clone)]
pub(super) enum Addr {
    Line(u64),
    Last,
    /// A regex index into [`Program::regexes`], or `None` for "the last regex used".
    Re(Option<usize>),
    Step(u64, u64),
    /// `0` in `0,/re/`.
    Zero,
}

/// A second (range end) address.
#[derive(Debug, Clone)]
pub(super) enum Addr2 {
    Line(u64),
    Last,
    Re(Option<usize>),
    Plus(u64),
    Tilde(u64),
}

/// A command of the program.
#[derive(Debug, Clone)]
pub(super) enum Cmd {
    /// `{`: index of the matching `}`.
    Block(usize),
    EndBlock,
    Subst(Box<Subst>),
    Translit(Box<[u8; 256]>),
    Print,
    PrintFirst,
    Delete,
    DeleteFirst,
    Next,
    NextAppend,
    Quit(i32),
    QuitSilent(i32),
    LineNo,
    Append(Vec<u8>),
    Insert(Vec<u8>),
    Change(Vec<u8>),
    List(Option<usize>),
    Hold,
    HoldAppend,
    Get,
    GetAppend,
    Exchange,
    /// Branches carry the target command index (the program's length for "end of script").
    Branch(usize),
    BranchIfSub(usize),
    BranchIfNotSub(usize),
    Label,
    ReadFile(Vec<u8>),
    ReadLine(Vec<u8>),
    WriteFile(usize),
    WriteFirst(usize),
    Zap,
    FileName,
}

/// One command with its address.
#[derive(Debug, Clone)]
pub(super) struct Command {
    pub(super) a1: Option<Addr>,
    pub(super) a2: Option<Addr2>,
    pub(super) negate: bool,
    pub(super) cmd: Cmd,
}

/// A parsed script.
#[derive(Debug, Default)]
pub(super) struct Program {
    pub(super) cmds: Vec<Command>,
    pub(super) regexes: Vec<Regex>,
    /// Output files of `w`, `W` and `s///w`, by name.
    pub(super) wfiles: Vec<Vec<u8>>,
    /// `#n` on the first line.
    pub(super) quiet: bool,
}
