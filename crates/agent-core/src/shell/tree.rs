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

/// A word: its source text, where it starts, and its pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The word as written, quotes and all.
    pub raw: String,
    /// Where it starts, as brush reports it (`None` for words inside a `${..}` and where brush
    /// records none).
    pub at: Option<Position>,
    /// The pieces, or why the word could not be lowered (brush's word parser failed or
    /// panicked, or a guard refused the word's shape): a reader fails closed on it.
    pub pieces: Result<Vec<WordPiece>, String>,
}

impl Word {
    /// Lowers the word `raw` (behind the word guards), for text that becomes a word at run
    /// time: the alternatives brace expansion makes from a word, for example.
    pub fn parse(raw: &str, at: Option<Position>) -> Self {
        super::lower::word(raw, at)
    }
}

/// A piece of a word, with its byte range in the word's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordPiece {
    /// The piece.
    pub piece: Piece,
    /// The byte offset where it starts in the text it was lowered from.
    pub start: usize,
    /// The byte offset where it ends.
    pub end: usize,
}

/// The pieces a word is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Unquoted text (globs and brace expansion are in it, unexpanded).
    Text(String),
    /// `'..'`: the text inside.
    SingleQuoted(String),
    /// `$'..'`: the text inside, escapes not decoded ([`super::decode_ansi_c`] decodes them).
    AnsiC(String),
    /// `".."`: the pieces inside.
    DoubleQuoted(Vec<WordPiece>),
    /// `$".."`: the pieces inside.
    GettextDoubleQuoted(Vec<WordPiece>),
    /// `\x` as written, backslash included.
    Escape(String),
    /// A tilde prefix.
    Tilde(Tilde),
    /// A parameter expansion.
    Parameter(ParameterExpansion),
    /// `$(..)`: the script inside.
    CommandSubstitution(String),
    /// `` `..` ``: the text inside, as written (backslashes not yet removed).
    BackquotedSubstitution(String),
    /// `$((..))`: the expression inside.
    Arithmetic(String),
}

/// A tilde prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tilde {
    /// `~`: the home directory.
    Home,
    /// `~user`.
    User(String),
    /// `~+`: the working directory.
    WorkingDirectory,
    /// `~-`: the previous working directory.
    OldWorkingDirectory,
    /// `~N` / `~+N`: an entry of the directory stack from its top.
    DirStackFromTop {
        /// N.
        n: usize,
        /// Written `~+N`.
        plus: bool,
    },
    /// `~-N`: an entry of the directory stack from its bottom.
    DirStackFromBottom {
        /// N.
        n: usize,
    },
}

/// A parameter expansion: `$NAME`, `${NAME}`, `${NAME<operator>..}`, `$?`, `${#NAME}`, ...
/// `indirect` is the `!` of `${!NAME..}`. Operand words are lowered too (their positions are
/// `None` and their byte ranges count from the operand's start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParameterExpansion {
    /// `$NAME`, `${NAME}`, `${!NAME}`.
    Plain {
        /// The parameter.
        parameter: Parameter,
        /// `${!..}`.
        indirect: bool,
    },
    /// `${#NAME}`.
    Length {
        /// The parameter.
        parameter: Parameter,
        /// `${!..}`.
        indirect: bool,
    },
    /// `${NAME-word}`, `${NAME=word}`, `${NAME?word}`, `${NAME+word}` (with `:`, `null_too`).
    Test {
        /// The parameter.
        parameter: Parameter,
        /// `${!..}`.
        indirect: bool,
        /// Which operator.
        test: ParameterTest,
        /// Written with `:`: an empty value counts as unset.
        null_too: bool,
        /// The word after the operator.
        word: Option<Word>,
    },
    /// `${NAME%pattern}`, `${NAME%%pattern}`, `${NAME#pattern}`, `${NAME##pattern}`.
    Trim {
        /// The parameter.
        parameter: Parameter,
        /// `${!..}`.
        indirect: bool,
        /// `%` / `%%` rather than `#` / `##`.
        suffix: bool,
        /// `%%` / `##`.
        longest: bool,
        /// The pattern.
        pattern: Option<Word>,
    },
    /// `${NAME:offset}` / `${NAME:offset:length}`: the arithmetic as written.
    Substring {
        /// The parameter.
        parameter: Parameter,
        /// `${!..}`.
        indirect: bool,
        /// The offset expression.
        offset: String,
        /// The length expression.
        length: Option<String>,
    },
    /// `${NAME@op}`.
    Transform {
        /// The parameter.
        parameter: Parameter,
        /// `${!..}`.
        indirect: bool,
        /// The operator.
        op: Transform,
    },
    /// `${NAME^pattern}`, `${NAME^^pattern}`, `${NAME,pattern}`, `${NAME,,pattern}`.
    Case {
        /// The parameter.
        parameter: Parameter,
        /// `${!..}`.
        indirect: bool,
        /// `^` rather than `,`.
        upper: bool,
        /// Doubled: every matching character rather than the first.
        all: bool,
        /// The pattern.
        pattern: Option<Word>,
    },
    /// `${NAME/pattern/replacement}` and its `//`, `/#`, `/%` forms.
    Replace {
        /// The parameter.
        parameter: Parameter,
        /// `${!..}`.
        indirect: bool,
        /// Which occurrences.
        mode: ReplaceMode,
        /// The pattern.
        pattern: Word,
        /// The replacement.
        replacement: Option<Word>,
    },
    /// `${!prefix*}` / `${!prefix@}`: the names of variables starting with `prefix`.
    VariableNames {
        /// The prefix.
        prefix: String,
        /// `*` rather than `@`.
        concatenate: bool,
    },
    /// `${!name[*]}` / `${!name[@]}`: the keys of an array.
    MemberKeys {
        /// The array.
        name: String,
        /// `*` rather than `@`.
        concatenate: bool,
    },
}

impl ParameterExpansion {
    /// The parameter expanded and whether it is indirect (`None` for the forms that list
    /// names: `${!prefix*}`, `${!name[@]}`).
    pub fn parameter(&self) -> Option<(&Parameter, bool)> {
        match self {
            Self::Plain {
                parameter,
                indirect,
            }
            | Self::Length {
                parameter,
                indirect,
            }
            | Self::Test {
                parameter,
                indirect,
                ..
            }
            | Self::Trim {
                parameter,
                indirect,
                ..
            }
            | Self::Substring {
                parameter,
                indirect,
                ..
            }
            | Self::Transform {
                parameter,
                indirect,
                ..
            }
            | Self::Case {
                parameter,
                indirect,
                ..
            }
            | Self::Replace {
                parameter,
                indirect,
                ..
            } => Some((parameter, *indirect)),
            Self::VariableNames { .. } | Self::MemberKeys { .. } => None,
        }
    }

    /// The operand words the shell expands (a default, a pattern, a replacement), in order.
    pub fn operand_words(&self) -> Vec<&Word> {
        match self {
            Self::Test { word, .. } => word.iter().collect(),
            Self::Trim { pattern, .. } | Self::Case { pattern, .. } => pattern.iter().collect(),
            Self::Replace {
                pattern,
                replacement,
                ..
            } => std::iter::once(pattern).chain(replacement).collect(),
            Self::Plain { .. }
            | Self::Length { .. }
            | Self::Substring { .. }
            | Self::Transform { .. }
            | Self::VariableNames { .. }
            | Self::MemberKeys { .. } => Vec::new(),
        }
    }
}

/// The operators of [`ParameterExpansion::Test`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParameterTest {
    /// `-`: use the word when unset.
    UseDefault,
    /// `=`: assign the word when unset.
    AssignDefault,
    /// `?`: fail with the word when unset.
    Error,
    /// `+`: use the word when set.
    Alternative,
}

/// Which occurrences [`ParameterExpansion::Replace`] replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplaceMode {
    /// `/#`: at the start.
    Prefix,
    /// `/%`: at the end.
    Suffix,
    /// `/`: the first.
    First,
    /// `//`: every one.
    All,
}

/// The operators of `${NAME@op}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// `@u`.
    CapitalizeInitial,
    /// `@E`.
    ExpandEscapes,
    /// `@K` / `@k`.
    QuoteWithArraysExpanded {
        /// `@k`: separate words.
        separate_words: bool,
    },
    /// `@P`: prompt expansion.
    PromptExpand,
    /// `@Q`.
    Quoted,
    /// `@A`.
    AssignmentForm,
    /// `@a`.
    AttributeFlags,
    /// `@L`.
    LowerCase,
    /// `@U`.
    UpperCase,
}

/// The parameter of an expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parameter {
    /// `$1`, `${10}`, `$0`.
    Positional(u32),
    /// `$?`, `$#`, `$@`, ...
    Special(SpecialParameter),
    /// `$NAME`.
    Named(String),
    /// `${NAME[index]}`: the subscript as written.
    NamedWithIndex {
        /// The array.
        name: String,
        /// The subscript.
        index: String,
    },
    /// `${NAME[@]}` / `${NAME[*]}`.
    NamedWithAllIndices {
        /// The array.
        name: String,
        /// `*` rather than `@`.
        concatenate: bool,
    },
}

/// The special parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialParameter {
    /// `$@` / `$*` (`concatenate`).
    AllPositional {
        /// `$*`.
        concatenate: bool,
    },
    /// `$#`.
    PositionalCount,
    /// `$?`.
    LastExitStatus,
    /// `$-`.
    OptionFlags,
    /// `$$`.
    ProcessId,
    /// `$!`.
    LastBackgroundProcessId,
    /// `$0`.
    ShellName,
}
