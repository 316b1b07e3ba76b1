//! Conditional commands `[[ .. ]]`: their expressions and operators.

use super::{Position, Redirect, Word};

/// A conditional command `[[ .. ]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestCommand {
    /// The expression.
    pub expr: TestExpr,
    /// The redirects after it.
    pub redirects: Vec<Redirect>,
    /// Where it starts.
    pub at: Position,
}

/// The expression of a `[[ .. ]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestExpr {
    /// `a && b`.
    And(Box<TestExpr>, Box<TestExpr>),
    /// `a || b`.
    Or(Box<TestExpr>, Box<TestExpr>),
    /// `! a`.
    Not(Box<TestExpr>),
    /// `( a )`.
    Parenthesized(Box<TestExpr>),
    /// A test of one operand (`-f x`).
    Unary(UnaryTest, Word),
    /// A test of two operands (`a == b`).
    Binary(BinaryTest, Word, Word),
}

/// The one-operand tests of `[[ .. ]]`, named after their operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryTest {
    /// `-a` / `-e`: the file exists.
    Exists,
    /// `-b`: a block device.
    BlockSpecial,
    /// `-c`: a character device.
    CharSpecial,
    /// `-d`: a directory.
    Directory,
    /// `-f`: a regular file.
    RegularFile,
    /// `-g`: set-group-id.
    Setgid,
    /// `-h` / `-L`: a symbolic link.
    Symlink,
    /// `-k`: the sticky bit.
    Sticky,
    /// `-p`: a FIFO.
    Fifo,
    /// `-r`: readable.
    Readable,
    /// `-s`: not empty.
    NonEmptyFile,
    /// `-t`: a file descriptor open on a terminal.
    Terminal,
    /// `-u`: set-user-id.
    Setuid,
    /// `-w`: writable.
    Writable,
    /// `-x`: executable.
    Executable,
    /// `-G`: owned by the effective group.
    OwnedByGroup,
    /// `-N`: modified since last read.
    ModifiedSinceRead,
    /// `-O`: owned by the effective user.
    OwnedByUser,
    /// `-S`: a socket.
    Socket,
    /// `-o`: a shell option is on.
    OptionEnabled,
    /// `-v`: a variable is set.
    VariableSet,
    /// `-R`: a variable is a name reference.
    NameRef,
    /// `-z`: the string is empty.
    EmptyString,
    /// `-n`: the string is not empty.
    NonEmptyString,
}

/// The two-operand tests of `[[ .. ]]`, named after their operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryTest {
    /// `-ef`: the same file.
    SameFile,
    /// `-nt`: newer, or exists when the other does not.
    Newer,
    /// `-ot`: older, or does not exist when the other does.
    Older,
    /// `==` / `=` with a pattern on the right.
    MatchesPattern,
    /// `!=` with a pattern on the right.
    DoesNotMatchPattern,
    /// `==` comparing strings.
    EqualStrings,
    /// `!=` comparing strings.
    NotEqualStrings,
    /// `=~`: a regular expression match.
    MatchesRegex,
    /// `=~` with a quoted right side (a substring test).
    ContainsSubstring,
    /// `<`: sorts before.
    Before,
    /// `>`: sorts after.
    After,
    /// `-eq`.
    ArithmeticEq,
    /// `-ne`.
    ArithmeticNe,
    /// `-lt`.
    ArithmeticLt,
    /// `-le`.
    ArithmeticLe,
    /// `-gt`.
    ArithmeticGt,
    /// `-ge`.
    ArithmeticGe,
}

impl BinaryTest {
    /// Whether the operands are evaluated as arithmetic (`-eq`, `-ne`, `-lt`, `-le`, `-gt`,
    /// `-ge`).
    pub fn is_arithmetic(self) -> bool {
        matches!(
            self,
            Self::ArithmeticEq
                | Self::ArithmeticNe
                | Self::ArithmeticLt
                | Self::ArithmeticLe
                | Self::ArithmeticGt
                | Self::ArithmeticGe
        )
    }
}
