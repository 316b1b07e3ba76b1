//! Word expansion at run time, in bash's order: parameter expansion (`$NAME`, `${NAME}`, the
//! `${NAME<op>..}` operators of `param.rs`, `$?`; unset is empty) and arithmetic expansion
//! (`$((..))`, `arith.rs`), field splitting of unquoted expansion results on `$IFS`, pathname
//! expansion of unquoted glob characters, and quote removal (already done by the compiler).

use super::arith;
use super::glob::{self, TooManyMatches};
use super::param::{self, Pattern};
use super::plan::{ParamOp, ParamTest, Part, Word};
use super::vars::Vars;
use super::workspace::{GuestPath, Workspace};

/// The longest a single expanded word may be (1 MiB), so a command line stays bounded.
pub(crate) const MAX_WORD_BYTES: usize = 1 << 20;

/// The most words one command line may expand to (100,000).
pub(crate) const MAX_ARGS: usize = 100_000;

/// Why a word could not be expanded; the command does not run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ExpandError {
    /// The word grew over [`MAX_WORD_BYTES`].
    TooLong(String),
    /// A pattern matched over [`glob::MAX_GLOB_MATCHES`] paths, or the line over [`MAX_ARGS`].
    TooMany(String),
    /// `$((..))` failed (division by zero, a value that is not an expression, ...), or a
    /// `${..}` operator did (a bad substring, a value too long for a pattern): bash's message.
    /// It ends the script, as in bash.
    Arithmetic(String),
    /// `${NAME:?message}` of an unset (or empty) NAME: it ends the script, as in bash.
    Unset(String),
}

impl ExpandError {
    /// The message bash-style, without the `bash: ` prefix.
    pub fn message(&self) -> String {
        match self {
            Self::TooLong(w) => format!(
                "{w}: expansion longer than {MAX_WORD_BYTES} bytes; the shell refuses such words"
            ),
            Self::TooMany(w) => format!(
                "{w}: expands to more than {} words; narrow the pattern",
                glob::MAX_GLOB_MATCHES.min(MAX_ARGS)
            ),
            Self::Arithmetic(message) | Self::Unset(message) => message.clone(),
        }
    }

    /// The error with the word's source for a too-long word (named by its start inside).
    fn for_word(self, source: &str) -> Self {
        match self {
            Self::TooLong(_) => Self::TooLong(source.to_owned()),
            other => other,
        }
    }

    /// The status the script ends with, when it ends (bash ends a script on an arithmetic
    /// error with 1, on `${NAME:?}` with 127).
    pub fn fatal_status(&self) -> Option<i32> {
        match self {
            Self::Arithmetic(_) => Some(1),
            Self::Unset(_) => Some(127),
            Self::TooLong(_) | Self::TooMany(_) => None,
        }
    }
}

/// What expansion reads: variables, `$?`, and the workspace for globs.
pub(crate) struct Expander<'a> {
    pub vars: &'a Vars,
    pub status: i32,
    pub ws: &'a Workspace,
    pub cwd: &'a GuestPath,
    /// `set -u`: an unset variable is an error that ends the script.
    pub nounset: bool,
}

/// A field being built: its bytes, and for each byte whether it may act as a glob character.
#[derive(Default)]
struct Field {
    bytes: Vec<u8>,
    active: Vec<bool>,
    /// Has content or a quoted part (`""` is a field of its own; an empty `$X` is not).
    started: bool,
}

impl Field {
    fn push_str(&mut self, s: &str, active: bool) {
        self.bytes.extend_from_slice(s.as_bytes());
        self.active.extend(std::iter::repeat_n(active, s.len()));
    }
}

/// The state between two delimiters of field splitting.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Delim {
    /// Inside a field (or at the start of the word).
    None,
    /// After IFS whitespace that ended a field: a following non-whitespace IFS character
    /// belongs to the same delimiter.
    White,
    /// After a non-whitespace IFS character: another one delimits an empty field.
    Hard,
}

/// What a `${NAME<op>..}` gives: a value, or a word of the expansion's own to expand in its
/// place (`${X:-word}`).
enum Expansion<'p> {
    Value(String),
    Parts(&'p [Part]),
}

/// Field splitting in progress over one word's parts.
struct Splitter<'i> {
    ifs: &'i str,
    fields: Vec<Field>,
    current: Field,
    delim: Delim,
    total: usize,
}

impl Splitter<'_> {
    /// Literal text, or a quoted expansion's value: never split.
    fn text(&mut self, text: &str, quoted: bool) {
        self.current.push_str(text, !quoted);
        self.current.started = true;
        self.delim = Delim::None;
        self.total += text.len();
    }

    /// An unquoted expansion's value: split on IFS, its characters may glob.
    fn split(&mut self, value: &str) {
        self.total += value.len();
        let mut buf = [0u8; 4];
        for c in value.chars() {
            if !self.ifs.contains(c) {
                self.current.push_str(c.encode_utf8(&mut buf), true);
                self.current.started = true;
                self.delim = Delim::None;
            } else if matches!(c, ' ' | '\t' | '\n') {
                if self.current.started {
                    self.fields.push(std::mem::take(&mut self.current));
                    self.delim = Delim::White;
                }
            } else {
                if self.current.started || self.delim != Delim::White {
                    self.fields.push(std::mem::take(&mut self.current));
                }
                self.delim = Delim::Hard;
            }
        }
    }
}

impl Expander<'_> {
    /// The value of an expansion part (`None` for text; a `${..}` operator goes through
    /// [`Self::param`]).
    fn value(&self, part: &Part) -> Result<Option<String>, ExpandError> {
        Ok(match part {
            Part::Text { .. } | Part::Param { .. } => None,
            Part::Var { name, .. } => Some(self.get(name)?.unwrap_or_default().to_owned()),
            Part::Status { .. } => Some(self.status.to_string()),
            Part::Arith { text, .. } => Some(
                arith::evaluate(text, self.vars, self.status)
                    .map_err(ExpandError::Arithmetic)?
                    .to_string(),
            ),
        })
    }

    /// A variable's value; under `set -u` an unset one is an error.
    fn get(&self, name: &str) -> Result<Option<&str>, ExpandError> {
        match self.vars.get(name) {
            None if self.nounset => Err(ExpandError::Unset(format!("{name}: unbound variable"))),
            value => Ok(value),
        }
    }

    /// Runs a `${NAME<op>..}` operator.
    fn param<'p>(&self, name: &str, op: &'p ParamOp) -> Result<Expansion<'p>, ExpandError> {
        // The tests (`${X:-..}` ...) are how a script asks whether X is set: never an error.
        let value = if matches!(op, ParamOp::Test { .. }) {
            self.vars.get(name)
        } else {
            self.get(name)?
        };
        let text = value.unwrap_or_default();
        let pattern_error = |message: String| ExpandError::Arithmetic(format!("{name}: {message}"));
        Ok(match op {
            ParamOp::Length => Expansion::Value(text.chars().count().to_string()),
            ParamOp::Test {
                test,
                null_too,
                word,
            } => {
                let missing = value.is_none() || (*null_too && text.is_empty());
                match (test, missing) {
                    (ParamTest::Default, true) | (ParamTest::Alternative, false) => {
                        Expansion::Parts(word)
                    }
                    (ParamTest::Default, false) => Expansion::Value(text.to_owned()),
                    (ParamTest::Alternative, true) => Expansion::Value(String::new()),
                    (ParamTest::Error, false) => Expansion::Value(text.to_owned()),
                    (ParamTest::Error, true) => {
                        let mut message = String::new();
                        self.flatten(word, &mut message)?;
                        if message.is_empty() {
                            message = if *null_too {
                                "parameter null or not set".to_owned()
                            } else {
                                "parameter not set".to_owned()
                            };
                        }
                        return Err(ExpandError::Unset(format!("{name}: {message}")));
                    }
                }
            }
            ParamOp::Trim {
                suffix,
                longest,
                pattern,
            } => {
                let mut field = Field::default();
                self.pattern_parts(pattern, &mut field)?;
                let mut pattern = Pattern::new(&field.bytes, &field.active);
                Expansion::Value(
                    param::trim(text, &mut pattern, *suffix, *longest).map_err(pattern_error)?,
                )
            }
            ParamOp::Replace {
                mode,
                pattern,
                replacement,
            } => {
                let mut field = Field::default();
                self.pattern_parts(pattern, &mut field)?;
                let mut with = Field::default();
                self.pattern_parts(replacement, &mut with)?;
                let mut pattern = Pattern::new(&field.bytes, &field.active);
                // bash 5.2's patsub_replacement: an unquoted `&` is the matched text.
                let replace = |matched: &str| -> String {
                    let mut out = Vec::with_capacity(with.bytes.len());
                    for (b, active) in with.bytes.iter().zip(&with.active) {
                        if *b == b'&' && *active {
                            out.extend_from_slice(matched.as_bytes());
                        } else {
                            out.push(*b);
                        }
                    }
                    String::from_utf8_lossy(&out).into_owned()
                };
                Expansion::Value(
                    param::replace(text, &mut pattern, *mode, &replace).map_err(pattern_error)?,
                )
            }
            ParamOp::Case { upper, all } => Expansion::Value(param::case(text, *upper, *all)),
            ParamOp::Substring { offset, length } => {
                let number = |expr: &str| {
                    arith::evaluate(expr, self.vars, self.status).map_err(ExpandError::Arithmetic)
                };
                let offset = number(offset)?;
                let length = length.as_deref().map(number).transpose()?;
                Expansion::Value(
                    param::substring(text, offset, length)
                        .map_err(|m| ExpandError::Arithmetic(format!("{name}: {m}")))?,
                )
            }
        })
    }

    /// Appends the parts' expansion without splitting or globbing.
    fn flatten(&self, parts: &[Part], out: &mut String) -> Result<(), ExpandError> {
        for part in parts {
            match part {
                Part::Text { text, .. } => out.push_str(text),
                Part::Param { name, op, .. } => match self.param(name, op)? {
                    Expansion::Value(v) => out.push_str(&v),
                    Expansion::Parts(inner) => self.flatten(inner, out)?,
                },
                _ => out.push_str(&self.value(part)?.unwrap_or_default()),
            }
            if out.len() > MAX_WORD_BYTES {
                return Err(ExpandError::TooLong(out.chars().take(40).collect()));
            }
        }
        Ok(())
    }

    /// Appends the parts' expansion as a pattern: the bytes, each active when it came from
    /// unquoted text or an unquoted expansion.
    fn pattern_parts(&self, parts: &[Part], field: &mut Field) -> Result<(), ExpandError> {
        for part in parts {
            match part {
                Part::Text { text, quoted } => field.push_str(text, !quoted),
                Part::Param { name, op, quoted } => match self.param(name, op)? {
                    Expansion::Value(v) => field.push_str(&v, !quoted),
                    Expansion::Parts(inner) => self.pattern_parts(inner, field)?,
                },
                Part::Var { quoted, .. } | Part::Status { quoted } | Part::Arith { quoted, .. } => {
                    field.push_str(&self.value(part)?.unwrap_or_default(), !quoted);
                }
            }
            if field.bytes.len() > MAX_WORD_BYTES {
                return Err(ExpandError::TooLong(
                    String::from_utf8_lossy(field.bytes.get(..40).unwrap_or(&field.bytes))
                        .into_owned(),
                ));
            }
        }
        Ok(())
    }

    /// Expands without field splitting or globbing: an assignment's value, a literal
    /// `export NAME=value` argument.
    pub fn single(&self, word: &Word) -> Result<String, ExpandError> {
        let mut out = String::new();
        self.flatten(&word.parts, &mut out)
            .map_err(|e| e.for_word(&word.source))?;
        Ok(out)
    }

    /// Expands a `case` pattern: no field splitting, no pathname expansion; the bytes, and
    /// for each whether it may act as a pattern character (it came from unquoted text or an
    /// unquoted expansion).
    pub fn pattern(&self, word: &Word) -> Result<(Vec<u8>, Vec<bool>), ExpandError> {
        let mut field = Field::default();
        self.pattern_parts(&word.parts, &mut field)
            .map_err(|e| e.for_word(&word.source))?;
        Ok((field.bytes, field.active))
    }

    /// Expands the words of a command line.
    pub fn words(&self, words: &[Word]) -> Result<Vec<String>, ExpandError> {
        let mut out = Vec::new();
        for word in words {
            if word.assignment_like {
                out.push(self.single(word)?);
            } else {
                out.extend(self.fields(word)?);
            }
            if out.len() > MAX_ARGS {
                return Err(ExpandError::TooMany(word.source.clone()));
            }
        }
        Ok(out)
    }

    /// Splits the parts' expansion into `s`; `quoted` when a quoted `${..}` holds them,
    /// `inside` when any `${..}` does (its unquoted text is then an expansion result, split
    /// and globbed like a variable's value: `${X:-a b}` is two words).
    fn split_parts(
        &self,
        parts: &[Part],
        quoted: bool,
        inside: bool,
        s: &mut Splitter<'_>,
        source: &str,
    ) -> Result<(), ExpandError> {
        for part in parts {
            match part {
                Part::Text { text, quoted: q } if inside && !*q && !quoted => s.split(text),
                Part::Text { text, quoted: q } => s.text(text, *q || quoted),
                Part::Param {
                    name,
                    op,
                    quoted: q,
                } => match self.param(name, op)? {
                    Expansion::Value(v) if *q || quoted => s.text(&v, true),
                    Expansion::Value(v) => s.split(&v),
                    Expansion::Parts(inner) => {
                        // A word inside `${..}` that is not quoted as a whole still makes a
                        // field of its own when empty and quoted (`${X:-""}`).
                        self.split_parts(inner, *q || quoted, true, s, source)?;
                        if *q || quoted {
                            s.current.started = true;
                        }
                    }
                },
                Part::Var { quoted: q, .. }
                | Part::Status { quoted: q }
                | Part::Arith { quoted: q, .. } => {
                    let value = self.value(part)?.unwrap_or_default();
                    if *q || quoted {
                        s.text(&value, true);
                    } else {
                        s.split(&value);
                    }
                }
            }
            if s.total > MAX_WORD_BYTES {
                return Err(ExpandError::TooLong(source.to_owned()));
            }
        }
        Ok(())
    }

    /// Expands one word into fields: split, then globbed.
    pub fn fields(&self, word: &Word) -> Result<Vec<String>, ExpandError> {
        let mut s = Splitter {
            ifs: self.vars.get("IFS").unwrap_or(" \t\n"),
            fields: Vec::new(),
            current: Field::default(),
            delim: Delim::None,
            total: 0,
        };
        self.split_parts(&word.parts, false, false, &mut s, &word.source)?;
        let Splitter {
            mut fields,
            current,
            ..
        } = s;
        if current.started {
            fields.push(current);
        }
        let mut out = Vec::with_capacity(fields.len());
        for field in fields {
            if glob::is_pattern(&field.bytes, &field.active) {
                match glob::expand(self.ws, self.cwd, &field.bytes, &field.active) {
                    Ok(Some(paths)) => {
                        out.extend(paths);
                        continue;
                    }
                    Ok(None) => {}
                    Err(TooManyMatches) => return Err(ExpandError::TooMany(word.source.clone())),
                }
            }
            out.push(String::from_utf8_lossy(&field.bytes).into_owned());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(parts: Vec<Part>) -> Word {
        Word {
            source: String::new(),
            parts,
            assignment_like: false,
            braced: false,
        }
    }

    fn var(name: &str, quoted: bool) -> Part {
        Part::Var {
            name: name.to_owned(),
            quoted,
        }
    }

    fn text(t: &str, quoted: bool) -> Part {
        Part::Text {
            text: t.to_owned(),
            quoted,
        }
    }

    fn fields(vars: &[(&str, &str)], parts: Vec<Part>) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let mut v = Vars::default();
        for (k, val) in vars {
            v.set(k, (*val).to_owned()).unwrap();
        }
        let cwd = GuestPath::root(&crate::shell::workspace::Mount::root());
        let e = Expander {
            vars: &v,
            status: 3,
            ws: &ws,
            cwd: &cwd,
            nounset: false,
        };
        e.fields(&word(parts)).unwrap()
    }

    #[test]
    fn splitting_on_whitespace() {
        assert_eq!(
            fields(&[("X", " a  b ")], vec![var("X", false)]),
            ["a", "b"]
        );
        assert_eq!(fields(&[("X", " a  b ")], vec![var("X", true)]), [" a  b "]);
        assert_eq!(
            fields(
                &[("X", " a b ")],
                vec![text("x", false), var("X", false), text("y", true)]
            ),
            ["x", "a", "b", "y"]
        );
        assert_eq!(fields(&[], vec![var("X", false)]), Vec::<String>::new());
        assert_eq!(fields(&[], vec![text("", true), var("X", false)]), [""]);
        assert_eq!(fields(&[], vec![Part::Status { quoted: false }]), ["3"]);
    }

    #[test]
    fn splitting_on_other_ifs_characters() {
        let ifs = |x: &str| fields(&[("IFS", ":"), ("X", x)], vec![var("X", false)]);
        assert_eq!(ifs("a::b:"), ["a", "", "b"]);
        assert_eq!(ifs(":a"), ["", "a"]);
        let both = |x: &str| {
            fields(
                &[("IFS", " :"), ("X", x)],
                vec![text("x", false), var("X", false), text("y", false)],
            )
        };
        assert_eq!(both(" a : b  :: c "), ["x", "a", "b", "", "c", "y"]);
        assert_eq!(
            fields(&[("IFS", ""), ("X", "a b")], vec![var("X", false)]),
            ["a b"]
        );
    }

    #[test]
    fn unmatched_globs_stay_as_written() {
        assert_eq!(fields(&[], vec![text("*.none", false)]), ["*.none"]);
        assert_eq!(
            fields(&[("X", "*.none")], vec![var("X", false)]),
            ["*.none"]
        );
    }
}
