//! From a word of agent-core's lowered shell tree (its source text and its pieces) to plan
//! [`Part`]s, refusing every expansion outside the subset: only quoting, `$NAME`, `${NAME}`,
//! `$?`, the `${..}` operators of param.rs, `$((..))` and unquoted glob characters are kept.
//!
//! A quote-aware scan of the source text runs first and names the unsupported expansions
//! (`$(`, backquotes, `${x@Q}`, `$1`, ...) with their position. The pieces are then checked
//! again, so what the scan misses is still refused, and a word agent-core could not lower (its
//! word guards, such as the bound on unclosed `[`, or brush's word parser refused it) is a
//! parse error.

use agent_core::shell::tree::{
    Parameter, ParameterExpansion, ParameterTest, Piece, ReplaceMode, SpecialParameter,
    Word as TreeWord, WordPiece,
};

use super::arith;
use super::error::{Position, ShellError};
use super::plan::{ParamOp, ParamReplace, ParamTest, Part, Word};

/// Where a word starts in the script, to turn byte offsets inside it into positions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WordOrigin<'a> {
    /// The word's source text.
    pub raw: &'a str,
    /// The position of its first character.
    pub start: Position,
}

impl WordOrigin<'_> {
    /// The position of byte `offset` of the word.
    pub fn at(&self, offset: usize) -> Position {
        self.start
            .advance(self.raw.get(..offset).unwrap_or(self.raw))
    }

    fn unsupported(&self, offset: usize, construct: &'static str) -> ShellError {
        ShellError::Unsupported {
            construct,
            position: self.at(offset),
        }
    }
}

/// What a word is, which decides how it expands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WordKind {
    /// A command name or argument.
    Plain,
    /// A `NAME=value` argument of a literal `export`: expanded like an assignment.
    Declaration,
    /// The value of an assignment (`A=value cmd`).
    Value,
}

/// Compiles the word whose source text is `origin.raw` and whose pieces agent-core lowered.
pub(crate) fn compile(
    origin: WordOrigin<'_>,
    pieces: &Result<Vec<WordPiece>, String>,
    kind: WordKind,
) -> Result<Word, ShellError> {
    let raw = origin.raw;
    if let Some((offset, construct)) = scan(raw) {
        return Err(origin.unsupported(offset, construct));
    }
    let pieces = pieces.as_ref().map_err(|message| ShellError::Parse {
        message: message.clone(),
        position: Some(origin.start),
    })?;
    let mut acc = Acc::default();
    convert(pieces, false, origin, &mut acc)?;
    check_unquoted(&acc.stream, origin)?;
    check_assignment_tilde(&acc.stream, kind, origin)?;
    Ok(Word {
        source: raw.to_owned(),
        parts: acc.parts,
        assignment_like: kind != WordKind::Plain,
        braced: false,
    })
}

#[derive(Default)]
struct Acc {
    parts: Vec<Part>,
    /// Unquoted literal bytes with their offsets; `None` stands for anything else (quoted
    /// text, an expansion), which breaks brace and extglob syntax.
    stream: Vec<Option<(u8, usize)>>,
}

fn convert(
    pieces: &[WordPiece],
    quoted: bool,
    origin: WordOrigin<'_>,
    acc: &mut Acc,
) -> Result<(), ShellError> {
    for p in pieces {
        let at = p.start;
        match &p.piece {
            Piece::Text(text) => {
                if quoted {
                    // brush keeps a backslash-newline inside double quotes; bash removes it.
                    acc.parts.push(Part::Text {
                        text: text.replace("\\\n", ""),
                        quoted: true,
                    });
                    acc.stream.push(None);
                } else {
                    acc.stream
                        .extend(text.bytes().enumerate().map(|(i, b)| Some((b, at + i))));
                    acc.parts.push(Part::Text {
                        text: text.clone(),
                        quoted: false,
                    });
                }
            }
            Piece::SingleQuoted(text) => {
                acc.parts.push(Part::Text {
                    text: text.clone(),
                    quoted: true,
                });
                acc.stream.push(None);
            }
            Piece::AnsiC(text) => {
                let text = decode_ansi_c(text).map_err(|c| origin.unsupported(at, c))?;
                acc.parts.push(Part::Text { text, quoted: true });
                acc.stream.push(None);
            }
            Piece::DoubleQuoted(inner) | Piece::GettextDoubleQuoted(inner) => {
                // An empty quoted part: `""` is a word of its own even when nothing is inside.
                acc.parts.push(Part::Text {
                    text: String::new(),
                    quoted: true,
                });
                acc.stream.push(None);
                convert(inner, true, origin, acc)?;
            }
            Piece::Escape(seq) => {
                let mut chars = seq.chars();
                chars.next();
                let text = match chars.as_str() {
                    "\n" => String::new(),
                    rest => rest.to_owned(),
                };
                acc.parts.push(Part::Text { text, quoted: true });
                acc.stream.push(None);
            }
            Piece::Tilde(_) => {
                return Err(origin.unsupported(at, "tilde expansion (~)"));
            }
            Piece::Parameter(expr) => {
                let part = match operator(expr, quoted, origin, at)? {
                    Some(part) => part,
                    None => parameter(expr, quoted).map_err(|c| origin.unsupported(at, c))?,
                };
                acc.parts.push(part);
                acc.stream.push(None);
            }
            Piece::CommandSubstitution(_) => {
                return Err(origin.unsupported(at, "command substitution $(..)"));
            }
            Piece::BackquotedSubstitution(_) => {
                return Err(origin.unsupported(at, "command substitution `..` (backquotes)"));
            }
            Piece::Arithmetic(text) => {
                arith::check(text).map_err(|c| origin.unsupported(at, c))?;
                acc.parts.push(Part::Arith {
                    text: text.clone(),
                    quoted,
                });
                acc.stream.push(None);
            }
        }
    }
    Ok(())
}

/// How deep `${..}` may nest inside another's word (`${a:-${b:-..}}`).
const MAX_PARAMETER_NESTING: usize = 8;

/// A `${NAME<op>..}` of the supported operators (param.rs) as a part; `None` for the other
/// forms, which [`parameter`] takes or refuses.
fn operator(
    expr: &ParameterExpansion,
    quoted: bool,
    origin: WordOrigin<'_>,
    at: usize,
) -> Result<Option<Part>, ShellError> {
    let refuse = |construct: &'static str| Err(origin.unsupported(at, construct));
    // The words inside: compiled as the word around them is; a pattern keeps its own quoting
    // whatever surrounds the `${..}` (bash: `"${x#*.}"` still matches `*`).
    let inner = |word: Option<&TreeWord>, quoted: bool| -> Result<Vec<Part>, ShellError> {
        inner_word(word, quoted, origin, at)
    };
    let named = |parameter: &Parameter, indirect: bool| match parameter {
        Parameter::Named(name) if !indirect => Some(name.clone()),
        _ => None,
    };
    let (name, op) = match expr {
        ParameterExpansion::Length {
            parameter,
            indirect,
        } => match named(parameter, *indirect) {
            Some(name) => (name, ParamOp::Length),
            None => return Ok(None),
        },
        ParameterExpansion::Test {
            test: ParameterTest::AssignDefault,
            ..
        } => {
            return refuse(
                "assigning a default ${NAME:=..} (write [ -n \"$NAME\" ] || NAME=.. first)",
            );
        }
        ParameterExpansion::Test {
            parameter,
            indirect,
            test,
            null_too,
            word,
        } => {
            let Some(name) = named(parameter, *indirect) else {
                return Ok(None);
            };
            let test = match test {
                ParameterTest::UseDefault => ParamTest::Default,
                ParameterTest::Alternative => ParamTest::Alternative,
                ParameterTest::Error | ParameterTest::AssignDefault => ParamTest::Error,
            };
            let op = ParamOp::Test {
                test,
                null_too: *null_too,
                word: inner(word.as_ref(), quoted)?,
            };
            (name, op)
        }
        ParameterExpansion::Trim {
            parameter,
            indirect,
            suffix,
            longest,
            pattern,
        } => {
            let Some(name) = named(parameter, *indirect) else {
                return Ok(None);
            };
            let op = ParamOp::Trim {
                suffix: *suffix,
                longest: *longest,
                pattern: inner(pattern.as_ref(), false)?,
            };
            (name, op)
        }
        ParameterExpansion::Replace {
            parameter,
            indirect,
            mode,
            pattern,
            replacement,
        } => {
            let Some(name) = named(parameter, *indirect) else {
                return Ok(None);
            };
            let mode = match mode {
                ReplaceMode::Prefix => ParamReplace::Prefix,
                ReplaceMode::Suffix => ParamReplace::Suffix,
                ReplaceMode::First => ParamReplace::First,
                ReplaceMode::All => ParamReplace::All,
            };
            let op = ParamOp::Replace {
                mode,
                pattern: inner(Some(pattern), false)?,
                replacement: inner(replacement.as_ref(), false)?,
            };
            (name, op)
        }
        ParameterExpansion::Case {
            parameter,
            indirect,
            upper,
            all,
            pattern,
        } => {
            let Some(name) = named(parameter, *indirect) else {
                return Ok(None);
            };
            if pattern.as_ref().is_some_and(|p| !p.raw.is_empty()) {
                return refuse("case conversion of matching characters ${NAME^^PATTERN}");
            }
            (
                name,
                ParamOp::Case {
                    upper: *upper,
                    all: *all,
                },
            )
        }
        ParameterExpansion::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => {
            let Some(name) = named(parameter, *indirect) else {
                return Ok(None);
            };
            for text in std::iter::once(offset).chain(length) {
                arith::check(text).map_err(|c| origin.unsupported(at, c))?;
            }
            let op = ParamOp::Substring {
                offset: offset.clone(),
                length: length.clone(),
            };
            (name, op)
        }
        ParameterExpansion::Plain { .. }
        | ParameterExpansion::Transform { .. }
        | ParameterExpansion::VariableNames { .. }
        | ParameterExpansion::MemberKeys { .. } => return Ok(None),
    };
    Ok(Some(Part::Param { name, op, quoted }))
}

/// Compiles a word inside `${..}` (a default, a pattern, a replacement; absent: empty).
fn inner_word(
    word: Option<&TreeWord>,
    quoted: bool,
    origin: WordOrigin<'_>,
    at: usize,
) -> Result<Vec<Part>, ShellError> {
    let Some(word) = word else {
        return Ok(Vec::new());
    };
    let pieces = word.pieces.as_ref().map_err(|message| ShellError::Parse {
        message: message.clone(),
        position: Some(origin.at(at)),
    })?;
    if quoted
        && pieces
            .iter()
            .any(|p| matches!(p.piece, Piece::SingleQuoted(_) | Piece::AnsiC(_)))
    {
        // bash keeps them literally there; refused rather than read another way.
        return Err(origin.unsupported(at, "single quotes inside a double-quoted ${..}"));
    }
    // Positions inside report the `${` itself.
    let here = WordOrigin {
        raw: "",
        start: origin.at(at),
    };
    let mut acc = Acc::default();
    convert(pieces, quoted, here, &mut acc)?;
    check_unquoted(&acc.stream, here)?;
    Ok(acc.parts)
}

fn parameter(expr: &ParameterExpansion, quoted: bool) -> Result<Part, &'static str> {
    match expr {
        ParameterExpansion::Plain {
            parameter,
            indirect: false,
        } => match parameter {
            Parameter::Named(name) => Ok(Part::Var {
                name: name.clone(),
                quoted,
            }),
            Parameter::Special(SpecialParameter::LastExitStatus) => Ok(Part::Status { quoted }),
            Parameter::Special(special) => Err(special_name(*special)),
            Parameter::Positional(0) => Err("script name $0"),
            Parameter::Positional(_) => Err("positional parameter $1"),
            Parameter::NamedWithIndex { .. } | Parameter::NamedWithAllIndices { .. } => {
                Err("array")
            }
        },
        ParameterExpansion::Plain { indirect: true, .. } => Err("indirect expansion ${!NAME}"),
        ParameterExpansion::Length { .. } => Err("parameter length ${#NAME}"),
        ParameterExpansion::Test { .. }
        | ParameterExpansion::Trim { .. }
        | ParameterExpansion::Substring { .. }
        | ParameterExpansion::Transform { .. }
        | ParameterExpansion::Case { .. }
        | ParameterExpansion::Replace { .. }
        | ParameterExpansion::VariableNames { .. }
        | ParameterExpansion::MemberKeys { .. } => {
            Err("parameter expansion operator (${NAME:-..}, ${NAME#..}, ...)")
        }
    }
}

fn special_name(special: SpecialParameter) -> &'static str {
    match special {
        SpecialParameter::AllPositional { .. } => "positional parameters $@ / $*",
        SpecialParameter::PositionalCount => "parameter count $#",
        SpecialParameter::LastExitStatus => "exit status $?",
        SpecialParameter::OptionFlags => "shell options $-",
        SpecialParameter::ProcessId => "process id $$",
        SpecialParameter::LastBackgroundProcessId => "background job id $!",
        SpecialParameter::ShellName => "script name $0",
    }
}

/// Refuses brace expansion (`{a,b}`, `{1..3}`) and extended globs (`@(a|b)`), looking only at
/// unquoted literal text as bash does.
fn check_unquoted(
    stream: &[Option<(u8, usize)>],
    origin: WordOrigin<'_>,
) -> Result<(), ShellError> {
    let lit = |i: usize| stream.get(i).copied().flatten().map(|(b, _)| b);
    for (i, item) in stream.iter().enumerate() {
        let Some((b, at)) = *item else { continue };
        if b == b'(' {
            return Err(origin.unsupported(at, "extended glob pattern (@(..), !(..), ...)"));
        }
        if b != b'{' {
            continue;
        }
        let mut depth = 0usize;
        let mut expands = false;
        let mut j = i;
        while j < stream.len() {
            match lit(j) {
                Some(b'{') => depth += 1,
                Some(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Some(b',') if depth == 1 => expands = true,
                Some(b'.') if depth == 1 && lit(j + 1) == Some(b'.') => expands = true,
                _ => {}
            }
            j += 1;
        }
        if depth == 0 && expands {
            return Err(origin.unsupported(at, "brace expansion {a,b}"));
        }
    }
    Ok(())
}

/// Refuses the tildes bash expands in assignment-shaped words, which brush-parser (with
/// `tilde_expansion_after_colon` off) leaves as text: an unquoted `~` right after the `=` of
/// `NAME=...` (an assignment's value, or any argument of that shape, `echo x=~`) or after an
/// unquoted `:` in it (`PATH=a:~/bin`).
fn check_assignment_tilde(
    stream: &[Option<(u8, usize)>],
    kind: WordKind,
    origin: WordOrigin<'_>,
) -> Result<(), ShellError> {
    let lit = |i: usize| stream.get(i).copied().flatten().map(|(b, _)| b);
    let value_start = if kind == WordKind::Value {
        0
    } else {
        let mut i = 0;
        if !lit(0).is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') {
            return Ok(());
        }
        while lit(i).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
            i += 1;
        }
        if lit(i) == Some(b'+') {
            i += 1;
        }
        if lit(i) != Some(b'=') {
            return Ok(());
        }
        i + 1
    };
    for (i, item) in stream.iter().enumerate().skip(value_start) {
        if let Some((b'~', at)) = *item
            && (i == value_start || lit(i - 1) == Some(b':'))
        {
            return Err(origin.unsupported(at, "tilde expansion (~)"));
        }
    }
    Ok(())
}

/// Names the first unsupported expansion in `raw` (quote-aware), with its byte offset.
fn scan(raw: &str) -> Option<(usize, &'static str)> {
    scan_nested(raw.as_bytes(), 0)
}

/// [`scan`] of a word, or of the word inside a `${..}` at nesting `depth`.
fn scan_nested(b: &[u8], depth: usize) -> Option<(usize, &'static str)> {
    let mut i = 0;
    let mut double = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' if !double => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                double = !double;
                i += 1;
            }
            b'`' => return Some((i, "command substitution `..` (backquotes)")),
            b'$' => {
                match b.get(i + 1) {
                    Some(b'\'') if !double => {
                        // $'..': skip to the closing quote; escapes are decoded later.
                        i += 2;
                        while i < b.len() && b[i] != b'\'' {
                            i += if b[i] == b'\\' { 2 } else { 1 };
                        }
                        i += 1;
                        continue;
                    }
                    Some(b'"') if !double => {
                        double = true;
                        i += 2;
                        continue;
                    }
                    _ => {}
                }
                match dollar(&b[i + 1..], depth) {
                    Ok(len) => i += 1 + len,
                    Err(construct) => return Some((i, construct)),
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// What follows a `$`: the length of a supported expansion (0 for a literal `$`), or the name
/// of the unsupported one. `depth`: how many `${..}` words this one is inside.
fn dollar(rest: &[u8], depth: usize) -> Result<usize, &'static str> {
    let is_name_start = |c: &u8| c.is_ascii_alphabetic() || *c == b'_';
    let is_name = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    match rest.first() {
        Some(b'(') if rest.get(1) == Some(&b'(') => arithmetic(rest),
        Some(b'(') => Err("command substitution $(..)"),
        Some(b'[') => Err("arithmetic expansion $[..]"),
        Some(b'0') => Err("script name $0"),
        Some(c) if c.is_ascii_digit() => Err("positional parameter $1"),
        Some(b'@' | b'*') => Err("positional parameters $@ / $*"),
        Some(b'#') => Err("parameter count $#"),
        Some(b'$') => Err("process id $$"),
        Some(b'!') => Err("background job id $!"),
        Some(b'-') => Err("shell options $-"),
        Some(b'?') => Ok(1),
        Some(c) if is_name_start(c) => Ok(rest.iter().take_while(|c| is_name(c)).count()),
        Some(b'{') => {
            let inner = &rest[1..];
            let name_len = match inner.first() {
                Some(c) if is_name_start(c) => inner.iter().take_while(|c| is_name(c)).count(),
                Some(b'?') => 1,
                Some(b'#') if inner.get(1).is_some_and(is_name_start) => {
                    // `${#NAME}`.
                    let len = inner[1..].iter().take_while(|c| is_name(c)).count();
                    return match inner.get(1 + len) {
                        Some(b'}') => Ok(len + 3),
                        Some(b'[') => Err("array"),
                        _ => Err("parameter length ${#NAME}"),
                    };
                }
                Some(b'#') if inner.get(1) != Some(&b'}') => {
                    return Err("parameter length ${#NAME}");
                }
                Some(b'!') => return Err("indirect expansion ${!NAME}"),
                Some(b'0') => return Err("script name $0"),
                Some(c) if c.is_ascii_digit() => return Err("positional parameter $1"),
                Some(b'@' | b'*') => return Err("positional parameters $@ / $*"),
                Some(b'#') => return Err("parameter count $#"),
                Some(b'$') => return Err("process id $$"),
                Some(b'-') => return Err("shell options $-"),
                _ => return Err("parameter expansion operator (${NAME:-..}, ${NAME#..}, ...)"),
            };
            match inner.get(name_len) {
                Some(b'}') => Ok(name_len + 2),
                Some(b'[') => Err("array"),
                Some(b':' | b'-' | b'=' | b'?' | b'+' | b'#' | b'%' | b'/' | b'^' | b',') => {
                    // An operator and its word, up to the matching `}`: the word is checked as
                    // words are (param.rs runs the operators; word.rs refuses the others).
                    if depth >= MAX_PARAMETER_NESTING {
                        return Err("parameter expansion nested more than 8 deep");
                    }
                    let close = closing_brace(&inner[name_len..])
                        .ok_or("parameter expansion operator (${NAME:-..}, ${NAME#..}, ...)")?;
                    let word = &inner[name_len + 1..name_len + close];
                    if let Some((_, construct)) = scan_nested(word, depth + 1) {
                        return Err(construct);
                    }
                    Ok(name_len + close + 2)
                }
                _ => Err("parameter expansion operator (${NAME:-..}, ${NAME#..}, ...)"),
            }
        }
        _ => Ok(0),
    }
}

/// The offset in `b` of the `}` that closes a `${` whose operator starts `b`: the first one
/// no quote, backslash or nested `${..}` protects; `None` when it never closes.
fn closing_brace(b: &[u8]) -> Option<usize> {
    agent_core::shell::braces::walk(b, 0, |_, c| c == b'}')
}

/// `((EXPRESSION))` after a `$`: its length when it closes and `arith::check` accepts it.
fn arithmetic(rest: &[u8]) -> Result<usize, &'static str> {
    let mut depth = 0usize;
    for (i, &c) in rest.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    // `$((..)` closed by one parenthesis is a command substitution of a subshell.
                    if i < 2 || rest[i - 1] != b')' {
                        return Err("command substitution $(..)");
                    }
                    let inner = std::str::from_utf8(&rest[2..i - 1]).map_err(|_| arith::REFUSED)?;
                    arith::check(inner)?;
                    return Ok(i + 1);
                }
            }
            _ => {}
        }
    }
    Err(arith::REFUSED)
}

/// Decodes the body of `$'..'` with agent-core's decoder (the one the permission checker uses,
/// so the two never read such a word differently). Escapes whose value is uncertain (a byte
/// above 0x7f, `\cX`, `\x` without digits) and a NUL (bash cuts the word there) are refused
/// rather than guessed; `\uHHHH` gives the character, as bash does in a UTF-8 locale.
fn decode_ansi_c(s: &str) -> Result<String, &'static str> {
    const REFUSED: &str = "ANSI-C escape outside ASCII, \\0 or \\cX in $'..'";
    match agent_core::shell::decode_ansi_c(s) {
        Some(text) if !text.contains('\0') => Ok(text),
        _ => Err(REFUSED),
    }
}

#[cfg(test)]
mod tests;
