//! The conditional command `[[ EXPRESSION ]]`, as bash 5.2 evaluates it: operands are expanded
//! without word splitting or pathname expansion; `&&`, `||`, `!` and parentheses; `==` / `=` and
//! `!=` match the right side as a pattern (its quoted parts literally); `<` / `>` compare
//! bytes; `-eq -ne -lt -le -gt -ge` compare arithmetic expressions (`[[ n+1 -eq 4 ]]`); file
//! tests look at the workspace. Status 0 true, 1 false, 1 with a message when an arithmetic
//! operand is malformed (bash does the same).
//!
//! File tests have the same answers as the bundle's `test` (guest/src/test.rs), since the
//! guest cannot see owners or permission bits either: `-r` / `-w` whether the file may be read
//! / written (a directory: always; a FIFO or device: never; a regular file: asked of the
//! kernel without opening it, on Linux, so a file test is no read or write), `-x` true for a
//! directory and false for a file, `-O` / `-G` true for anything that exists, `-u -g -k -b -c
//! -p -S -t` false. `-v NAME` is
//! whether the variable is set. Refused when the script is compiled: `=~` (regular
//! expressions; use `grep -E` or a `case` pattern), `-o OPTION` and `-R NAME`.

use agent_core::shell::tree::{self, BinaryTest, TestExpr, UnaryTest};

use super::arith;
use super::expand::{ExpandError, Expander};
use super::glob;
use super::plan::{Binary, Cond, Numeric, Unary, Word};
use super::workspace::GuestPath;

impl Numeric {
    fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Self::Eq => a == b,
            Self::Ne => a != b,
            Self::Lt => a < b,
            Self::Le => a <= b,
            Self::Gt => a > b,
            Self::Ge => a >= b,
        }
    }
}

/// Compiles the tree's expression; `word` compiles an operand. The error is the construct
/// refused.
pub(crate) fn compile<E>(
    expr: &TestExpr,
    word: &mut dyn FnMut(&tree::Word) -> Result<Word, E>,
    refuse: &dyn Fn(&'static str) -> E,
) -> Result<Cond, E> {
    Ok(match expr {
        TestExpr::And(a, b) => Cond::And(
            Box::new(compile(a, word, refuse)?),
            Box::new(compile(b, word, refuse)?),
        ),
        TestExpr::Or(a, b) => Cond::Or(
            Box::new(compile(a, word, refuse)?),
            Box::new(compile(b, word, refuse)?),
        ),
        TestExpr::Not(a) => Cond::Not(Box::new(compile(a, word, refuse)?)),
        TestExpr::Parenthesized(a) => compile(a, word, refuse)?,
        TestExpr::Unary(test, operand) => {
            let unary = match test {
                UnaryTest::Exists => Unary::Exists,
                UnaryTest::RegularFile => Unary::Regular,
                UnaryTest::Directory => Unary::Directory,
                UnaryTest::Symlink => Unary::Symlink,
                UnaryTest::NonEmptyFile => Unary::NonEmptyFile,
                UnaryTest::Readable => Unary::Readable,
                UnaryTest::Writable => Unary::Writable,
                UnaryTest::Executable => Unary::Executable,
                UnaryTest::OwnedByGroup | UnaryTest::OwnedByUser => Unary::Owned,
                UnaryTest::BlockSpecial
                | UnaryTest::CharSpecial
                | UnaryTest::Fifo
                | UnaryTest::Socket
                | UnaryTest::Setuid
                | UnaryTest::Setgid
                | UnaryTest::Sticky
                | UnaryTest::Terminal => Unary::Never,
                UnaryTest::ModifiedSinceRead => Unary::ModifiedSinceRead,
                UnaryTest::EmptyString => Unary::EmptyString,
                UnaryTest::NonEmptyString => Unary::NonEmptyString,
                UnaryTest::VariableSet => Unary::VariableSet,
                UnaryTest::OptionEnabled => {
                    return Err(refuse("shell option test [[ -o OPTION ]]"));
                }
                UnaryTest::NameRef => {
                    return Err(refuse("name reference test [[ -R NAME ]]"));
                }
            };
            Cond::Unary(unary, word(operand)?)
        }
        TestExpr::Binary(test, left, right) => {
            let binary = match test {
                BinaryTest::MatchesPattern | BinaryTest::EqualStrings => Binary::Matches,
                BinaryTest::DoesNotMatchPattern | BinaryTest::NotEqualStrings => {
                    Binary::DoesNotMatch
                }
                BinaryTest::Before => Binary::Before,
                BinaryTest::After => Binary::After,
                BinaryTest::ArithmeticEq => Binary::Number(Numeric::Eq),
                BinaryTest::ArithmeticNe => Binary::Number(Numeric::Ne),
                BinaryTest::ArithmeticLt => Binary::Number(Numeric::Lt),
                BinaryTest::ArithmeticLe => Binary::Number(Numeric::Le),
                BinaryTest::ArithmeticGt => Binary::Number(Numeric::Gt),
                BinaryTest::ArithmeticGe => Binary::Number(Numeric::Ge),
                BinaryTest::Newer => Binary::Newer,
                BinaryTest::Older => Binary::Older,
                BinaryTest::SameFile => Binary::SameFile,
                BinaryTest::MatchesRegex | BinaryTest::ContainsSubstring => {
                    return Err(refuse(
                        "regular expression match [[ .. =~ .. ]] (use grep -E or a case pattern)",
                    ));
                }
            };
            Cond::Binary(binary, word(left)?, word(right)?)
        }
    })
}

/// Why `[[ .. ]]` could not decide: the message (status 1, or the script's end when the
/// expansion error is fatal).
pub(crate) enum CondError {
    Expand(ExpandError),
    Arithmetic(String),
}

impl From<ExpandError> for CondError {
    fn from(e: ExpandError) -> Self {
        Self::Expand(e)
    }
}

impl Cond {
    /// Evaluates the expression (`&&` and `||` short-circuit).
    pub fn eval(&self, env: &Expander<'_>) -> Result<bool, CondError> {
        Ok(match self {
            Self::And(a, b) => a.eval(env)? && b.eval(env)?,
            Self::Or(a, b) => a.eval(env)? || b.eval(env)?,
            Self::Not(a) => !a.eval(env)?,
            Self::Unary(test, operand) => {
                let value = env.single(operand)?;
                unary(*test, &value, env)
            }
            Self::Binary(test, left, right) => {
                let l = env.single(left)?;
                match test {
                    Binary::Matches | Binary::DoesNotMatch => {
                        let (bytes, active) = env.pattern(right)?;
                        let hit = glob::pattern_matches(&bytes, &active, l.as_bytes());
                        hit == (*test == Binary::Matches)
                    }
                    _ => {
                        let r = env.single(right)?;
                        binary(*test, &l, &r, env)?
                    }
                }
            }
        })
    }
}

/// A path operand inside the workspace (`None`: it names something outside, above the root or
/// outside the mount, which does not exist for the script).
fn path(operand: &str, env: &Expander<'_>) -> Option<GuestPath> {
    if operand.is_empty() {
        return None;
    }
    GuestPath::resolve(env.cwd, operand).ok()
}

fn unary(test: Unary, operand: &str, env: &Expander<'_>) -> bool {
    match test {
        Unary::EmptyString => return operand.is_empty(),
        Unary::NonEmptyString => return !operand.is_empty(),
        Unary::VariableSet => return env.vars.get(operand).is_some(),
        Unary::Never => return false,
        _ => {}
    }
    let Some(p) = path(operand, env) else {
        return false;
    };
    let ws = env.ws;
    match test {
        Unary::Symlink => ws.symlink_metadata(&p).is_ok_and(|m| m.is_symlink()),
        Unary::Exists | Unary::Owned => ws.metadata(&p).is_ok(),
        Unary::Regular => ws.metadata(&p).is_ok_and(|m| m.is_file()),
        Unary::Directory => ws.metadata(&p).is_ok_and(|m| m.is_dir()),
        Unary::NonEmptyFile => ws.metadata(&p).is_ok_and(|m| m.len() > 0),
        Unary::Readable => ws.can_read(&p),
        Unary::Writable => ws.can_write(&p),
        Unary::Executable => ws.metadata(&p).is_ok_and(|m| m.is_dir()),
        Unary::ModifiedSinceRead => ws
            .metadata(&p)
            .is_ok_and(|m| matches!((m.accessed(), m.modified()), (Ok(a), Ok(w)) if w > a)),
        Unary::EmptyString | Unary::NonEmptyString | Unary::VariableSet | Unary::Never => false,
    }
}

fn binary(test: Binary, l: &str, r: &str, env: &Expander<'_>) -> Result<bool, CondError> {
    let modified = |operand: &str| {
        path(operand, env)
            .and_then(|p| env.ws.metadata(&p).ok())
            .and_then(|m| m.modified().ok())
    };
    Ok(match test {
        Binary::Before => l.as_bytes() < r.as_bytes(),
        Binary::After => l.as_bytes() > r.as_bytes(),
        Binary::Number(order) => {
            let number = |text: &str| {
                arith::evaluate(text, env.vars, env.status).map_err(CondError::Arithmetic)
            };
            order.holds(number(l)?, number(r)?)
        }
        Binary::Newer => match (modified(l), modified(r)) {
            (Some(a), Some(b)) => a > b,
            (Some(_), None) => true,
            _ => false,
        },
        Binary::Older => match (modified(l), modified(r)) {
            (Some(a), Some(b)) => a < b,
            (None, Some(_)) => true,
            _ => false,
        },
        Binary::SameFile => match (path(l, env), path(r, env)) {
            (Some(a), Some(b)) => env.ws.same_file(&a, &b),
            _ => false,
        },
        Binary::Matches | Binary::DoesNotMatch => false,
    })
}
