//! The compiled expression: the tree of operators, tests and actions that [`super::parse`]
//! builds from the arguments and [`super::walk`] evaluates for each file.

use std::time::SystemTime;

/// A numeric comparison of `-size`, `-mtime`, `-mmin`: `+N`, `-N` or `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cmp {
    More(u64),
    Less(u64),
    Exactly(u64),
}

impl Cmp {
    /// Parses `+N`, `-N` or `N`.
    pub(super) fn parse(s: &str) -> Option<Self> {
        let (ctor, digits): (fn(u64) -> Cmp, &str) = if let Some(d) = s.strip_prefix('+') {
            (Cmp::More, d)
        } else if let Some(d) = s.strip_prefix('-') {
            (Cmp::Less, d)
        } else {
            (Cmp::Exactly, s)
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(ctor(digits.parse().ok()?))
    }

    /// Whether `v` passes the comparison.
    pub(super) fn test(self, v: u64) -> bool {
        match self {
            Cmp::More(n) => v > n,
            Cmp::Less(n) => v < n,
            Cmp::Exactly(n) => v == n,
        }
    }
}

/// One node of the expression.
#[derive(Debug)]
pub(super) enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    True,
    False,
    Name(Vec<u8>, bool),
    Path(Vec<u8>, bool),
    Regex(regex::bytes::Regex),
    Type(Vec<u8>),
    Empty,
    Newer(SystemTime),
    /// Size comparison in units of the given byte count.
    Size(Cmp, u64),
    /// Age comparison in units of the given number of seconds.
    Age(Cmp, u64),
    Print,
    Print0,
    Printf(Vec<u8>),
    Prune,
    Quit,
    Delete,
}
