//! Words: each lowered once into its pieces (quoting, parameter expansions with their
//! operators and operand words, substitutions, arithmetic, tilde).

use super::Position;

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
        crate::shell::lower::word(raw, at)
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
    /// `$'..'`: the text inside, escapes not decoded ([`crate::shell::decode_ansi_c`] decodes them).
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
