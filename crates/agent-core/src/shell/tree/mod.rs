//! The lowered shell tree: one owned tree of a whole script, built once from one brush-parser
//! parse, behind the parse guards, and read by everything that needs to know what a script does.
//!
//! [`super::parse_script`] builds it. The permission rules and the sandbox's command checker read
//! the flat [`super::ParsedScript`] derived from the same parse; the WASI shell (agent-wasi)
//! compiles its plan from this tree. Nothing outside agent-core calls brush-parser, so the three
//! cannot read a script two ways.
//!
//! The tree keeps brush's shapes (lists, and-or lists, pipelines, compound commands, simple
//! commands with their prefix and suffix items, redirects, `[[ ]]` expressions) with the source
//! positions brush reports, and every word is lowered into its [`Piece`]s (quoting, parameter
//! expansions with their operators and operand words, command substitutions, arithmetic, tilde)
//! once. Scripts nested inside words (`$(..)`, `bash -c '..'`) are text here; whoever walks them
//! lowers them in turn with [`Script::parse`]. A word brush's word parser refuses (or the guards
//! refuse for it) keeps the reason instead of pieces: readers fail closed on it.
//!
//! ```
//! use agent_core::shell::tree::{Command, CommandItem, Piece};
//!
//! let script = agent_core::shell::tree::Script::parse("echo \"$HOME\" >out")?;
//! let Command::Simple(echo) = &script.items[0].and_or.first.commands[0] else {
//!     unreachable!("a simple command")
//! };
//! assert_eq!(echo.name.as_ref().map(|w| w.raw.as_str()), Some("echo"));
//! let CommandItem::Word(arg) = &echo.suffix[0] else { unreachable!("a word") };
//! let pieces = arg.pieces.as_ref().map_err(|e| e.clone())?;
//! assert!(matches!(&pieces[0].piece, Piece::DoubleQuoted(_)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

mod test_expr;
mod word;

pub use test_expr::{BinaryTest, TestCommand, TestExpr, UnaryTest};
pub use word::{
    Parameter, ParameterExpansion, ParameterTest, Piece, ReplaceMode, SpecialParameter, Tilde,
    Transform, Word, WordPiece,
};

/// A place in the script text: 1-based line and column, columns counted in characters (as
/// brush-parser counts them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// The 1-based line.
    pub line: usize,
    /// The 1-based column, in characters.
    pub column: usize,
}

impl Position {
    /// The position at `line`, `column` (both 1-based).
    pub const fn new(line: usize, column: usize) -> Self {
        Self { line, column }
    }

    /// The position reached after `text`, starting here (a newline starts the next line).
    #[must_use]
    pub fn advance(self, text: &str) -> Self {
        let mut pos = self;
        for c in text.chars() {
            if c == '\n' {
                pos.line += 1;
                pos.column = 1;
            } else {
                pos.column += 1;
            }
        }
        pos
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A whole script: its lists, in source order (brush's complete commands, one after another).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    /// The and-or lists of the script, each with its separator.
    pub items: Vec<Item>,
}

impl Script {
    /// Parses and lowers `text`, behind the parse guards (size, nesting, here-document shapes,
    /// brush-parser panics), without walking it ([`super::parse_script`] gives the walk too).
    /// The fast path for plain scripts is used; the tree is the same either way.
    ///
    /// # Errors
    /// [`super::ScriptParseError`] when the text does not parse or the guards refuse it.
    pub fn parse(text: &str) -> Result<Self, super::ScriptParseError> {
        super::lower::parse(text, true).map_err(|message| super::ScriptParseError { message })
    }
}

/// One and-or list of a list, with how it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The and-or list.
    pub and_or: AndOr,
    /// `Some` when it ends with `&` (runs in the background): where the `&` is.
    pub background: Option<Position>,
}

/// Pipelines joined by `&&` / `||`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AndOr {
    /// The first pipeline.
    pub first: Pipeline,
    /// The pipelines after it, each with the operator before it.
    pub rest: Vec<(Connector, Pipeline)>,
}

/// `&&` or `||`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connector {
    /// `&&`: runs when the pipeline before succeeded.
    And,
    /// `||`: runs when the pipeline before failed.
    Or,
}

/// Commands joined by `|` (a `|&` shows as a `2>&1` redirect of the command before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// `Some` for a pipeline prefixed with the `time` keyword: where the keyword is.
    pub timed: Option<Position>,
    /// Prefixed with `!`.
    pub negated: bool,
    /// The commands, left to right.
    pub commands: Vec<Command>,
}

/// One command of a pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// A simple command: assignments, words, redirects.
    Simple(SimpleCommand),
    /// A compound command with its redirects.
    Compound(CompoundCommand),
    /// A function definition (`f() { ..; }`).
    Function(FunctionDefinition),
    /// A conditional command `[[ .. ]]` with its redirects.
    Test(TestCommand),
}

impl Command {
    /// Where the command starts, as brush reports it (`None` when it does not).
    pub fn at(&self) -> Option<Position> {
        match self {
            Self::Simple(c) => c.at,
            Self::Compound(c) => c.at,
            Self::Function(f) => f.at,
            Self::Test(t) => Some(t.at),
        }
    }
}

/// A simple command: prefix items (assignments, redirects), the command name, then suffix items
/// (arguments, redirects), each in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The items before the name: assignments and redirects.
    pub prefix: Vec<CommandItem>,
    /// The command name, absent for a bare assignment or a redirect-only command.
    pub name: Option<Word>,
    /// The items after the name: arguments (an argument shaped `NAME=value` is an
    /// [`CommandItem::Assignment`]) and redirects.
    pub suffix: Vec<CommandItem>,
    /// Where the command starts, as brush reports it (`None` for a command made of redirects
    /// only: brush records no position for a redirect).
    pub at: Option<Position>,
}

/// One item of a simple command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandItem {
    /// A redirection.
    Redirect(Redirect),
    /// A word (an argument).
    Word(Word),
    /// A word shaped `NAME=value` (`NAME+=value`, `NAME[i]=value`, `NAME=(..)`): an assignment
    /// in the prefix, an argument that looks like one in the suffix (`export A=1`).
    Assignment(Assignment),
    /// A process substitution `<(..)` / `>(..)` standing as an argument.
    ProcessSubstitution(ProcessSubstitution),
}

/// `NAME=value` and its variants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The variable name.
    pub name: String,
    /// The subscript of `NAME[i]=value`, as written.
    pub index: Option<String>,
    /// `NAME+=value`.
    pub append: bool,
    /// The value.
    pub value: AssignmentValue,
    /// The whole `NAME=value` word.
    pub word: Word,
    /// Where the assignment starts.
    pub at: Position,
}

/// The value of an [`Assignment`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssignmentValue {
    /// One word (its position is where it starts inside the assignment).
    Scalar(Word),
    /// `(a b [k]=c)`: each element's subscript as written, and its value.
    Array(Vec<(Option<String>, Word)>),
}

/// A process substitution: a list whose output is read (`<(..)`) or whose input is written
/// (`>(..)`) through a file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessSubstitution {
    /// `<(..)` or `>(..)`.
    pub kind: ProcessKind,
    /// The list inside.
    pub body: Vec<Item>,
    /// The construct as brush prints it (`<(ls)`).
    pub shown: String,
    /// Where the `<` or `>` is.
    pub at: Position,
}

/// The direction of a [`ProcessSubstitution`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessKind {
    /// `<(..)`: the command reads the list's output.
    Read,
    /// `>(..)`: the command writes the list's input.
    Write,
}

/// One redirection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor written before the operator, if any.
    pub fd: Option<i32>,
    /// The operator and its target.
    pub kind: RedirectKind,
}

/// The kinds of [`Redirect`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`, `>`, `>>`, `<>`, `>|`, `<&`, `>&` and their target.
    File {
        /// The operator.
        op: FileOp,
        /// The target.
        target: RedirectTarget,
    },
    /// `<<` / `<<-`.
    HereDocument(HereDocument),
    /// `<<< word`.
    HereString(Word),
    /// `&> word` (`&>> word` when `append`).
    OutputAndError {
        /// The file.
        target: Word,
        /// `&>>`.
        append: bool,
    },
}

/// The operator of a [`RedirectKind::File`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>|`
    Clobber,
    /// `<&`
    DuplicateInput,
    /// `>&`
    DuplicateOutput,
}

/// The target of a [`RedirectKind::File`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedirectTarget {
    /// A file name.
    File(Word),
    /// A file descriptor number (`2>&1`).
    Fd(i32),
    /// The word of `<&word` / `>&word` that is not a plain number (`>&-`, `>&$fd`, `>&file`).
    Duplicate(Word),
    /// A process substitution (`< <(ls)`).
    Process(ProcessSubstitution),
}

/// A here-document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HereDocument {
    /// `<<-`: leading tabs are removed.
    pub remove_tabs: bool,
    /// The delimiter is unquoted, so the body is expanded (parameters, `$(..)`, arithmetic).
    pub expands: bool,
    /// The delimiter word as written.
    pub delimiter: Word,
    /// The body. When it expands and holds a `$` or a backquote its pieces are the
    /// here-document reading (quotes are literal, `\` quotes only `$`, `` ` `` and `\`);
    /// otherwise its one piece is the literal text.
    pub body: Word,
}

/// A compound command with its redirects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompoundCommand {
    /// The command.
    pub body: Compound,
    /// The redirects after it, which apply to every command inside.
    pub redirects: Vec<Redirect>,
    /// Where it starts, as brush reports it.
    pub at: Option<Position>,
}

/// The compound commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compound {
    /// `{ LIST; }`.
    BraceGroup(Vec<Item>),
    /// `( LIST )`.
    Subshell(Vec<Item>),
    /// `if C; then B; elif C; then B; else B; fi`.
    If {
        /// The first condition.
        condition: Vec<Item>,
        /// The first body.
        then: Vec<Item>,
        /// The `elif` and `else` clauses, in order.
        elses: Vec<ElseClause>,
    },
    /// `for NAME in WORDS; do BODY; done` (`values` absent for `for NAME; do`).
    For {
        /// The variable.
        name: String,
        /// The words after `in`.
        values: Option<Vec<Word>>,
        /// The body.
        body: Vec<Item>,
    },
    /// `for (( INIT; CONDITION; UPDATE )); do BODY; done`: each part as written.
    ArithmeticFor {
        /// The initializer.
        init: Option<String>,
        /// The condition.
        condition: Option<String>,
        /// The update.
        update: Option<String>,
        /// The body.
        body: Vec<Item>,
    },
    /// `while C; do B; done`, or `until` when `until`.
    While {
        /// `until` rather than `while`.
        until: bool,
        /// The condition.
        condition: Vec<Item>,
        /// The body.
        body: Vec<Item>,
    },
    /// `case WORD in PATTERN|PATTERN) LIST ;; ... esac`.
    Case {
        /// The word matched.
        subject: Word,
        /// The arms, in order.
        arms: Vec<CaseArm>,
    },
    /// `(( EXPRESSION ))`: the expression as written.
    Arithmetic(String),
    /// `coproc [NAME] COMMAND`.
    Coprocess {
        /// The name, when given.
        name: Option<Word>,
        /// The command.
        body: Box<Command>,
    },
}

/// An `elif` (with a condition) or `else` (without) clause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElseClause {
    /// The `elif` condition; `None` for `else`.
    pub condition: Option<Vec<Item>>,
    /// The body.
    pub body: Vec<Item>,
}

/// One `PATTERN|PATTERN) LIST ;;` of a `case`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseArm {
    /// The patterns.
    pub patterns: Vec<Word>,
    /// The list (empty when there is none).
    pub body: Vec<Item>,
    /// What follows when the arm ran.
    pub next: CaseNext,
}

/// What a `case` does after an arm ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseNext {
    /// `;;`: stop.
    Stop,
    /// `;&`: run the next arm's list.
    FallThrough,
    /// `;;&`: go on testing the next arms' patterns.
    TestNext,
}

/// A function definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionDefinition {
    /// The function's name.
    pub name: Word,
    /// The body with its redirects.
    pub body: CompoundCommand,
    /// Where the definition starts (its name), as brush reports it.
    pub at: Option<Position>,
}
