//! Word expansion at run time, in bash's order: parameter expansion (`$NAME`, `${NAME}`,
//! `$?`; unset is empty) and arithmetic expansion (`$((..))`, `arith.rs`), field splitting of unquoted expansion results on `$IFS`, pathname
//! expansion of unquoted glob characters, and quote removal (already done by the compiler).

use super::arith;
use super::glob::{self, TooManyMatches};
use super::plan::{Part, Word};
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
    /// `$((..))` failed (division by zero, a value that is not an expression, ...): bash's
    /// message. It ends the script, as in bash.
    Arithmetic(String),
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
            Self::Arithmetic(message) => message.clone(),
        }
    }

    /// Whether the script ends (bash ends a script on an arithmetic error).
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::Arithmetic(_))
    }
}

/// What expansion reads: variables, `$?`, and the workspace for globs.
pub(crate) struct Expander<'a> {
    pub vars: &'a Vars,
    pub status: i32,
    pub ws: &'a Workspace,
    pub cwd: &'a GuestPath,
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

impl Expander<'_> {
    /// The value of an expansion part (`None` for text).
    fn value(&self, part: &Part) -> Result<Option<String>, ExpandError> {
        Ok(match part {
            Part::Text { .. } => None,
            Part::Var { name, .. } => Some(self.vars.get(name).unwrap_or_default().to_owned()),
            Part::Status { .. } => Some(self.status.to_string()),
            Part::Arith { text, .. } => Some(
                arith::evaluate(text, self.vars, self.status)
                    .map_err(ExpandError::Arithmetic)?
                    .to_string(),
            ),
        })
    }

    /// Expands without field splitting or globbing: an assignment's value, a literal
    /// `export NAME=value` argument.
    pub fn single(&self, word: &Word) -> Result<String, ExpandError> {
        let mut out = String::new();
        for part in &word.parts {
            match part {
                Part::Text { text, .. } => out.push_str(text),
                Part::Var { .. } | Part::Status { .. } | Part::Arith { .. } => {
                    out.push_str(&self.value(part)?.unwrap_or_default());
                }
            }
            if out.len() > MAX_WORD_BYTES {
                return Err(ExpandError::TooLong(word.source.clone()));
            }
        }
        Ok(out)
    }

    /// Expands a `case` pattern: no field splitting, no pathname expansion; the bytes, and
    /// for each whether it may act as a pattern character (it came from unquoted text or an
    /// unquoted expansion).
    pub fn pattern(&self, word: &Word) -> Result<(Vec<u8>, Vec<bool>), ExpandError> {
        let mut field = Field::default();
        for part in &word.parts {
            match part {
                Part::Text { text, quoted } => field.push_str(text, !quoted),
                Part::Var { quoted, .. } | Part::Status { quoted } | Part::Arith { quoted, .. } => {
                    field.push_str(&self.value(part)?.unwrap_or_default(), !quoted);
                }
            }
            if field.bytes.len() > MAX_WORD_BYTES {
                return Err(ExpandError::TooLong(word.source.clone()));
            }
        }
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

    /// Expands one word into fields: split, then globbed.
    pub fn fields(&self, word: &Word) -> Result<Vec<String>, ExpandError> {
        let ifs = self.vars.get("IFS").unwrap_or(" \t\n");
        let mut fields: Vec<Field> = Vec::new();
        let mut current = Field::default();
        let mut delim = Delim::None;
        let mut total = 0usize;
        for part in &word.parts {
            match part {
                Part::Text { text, quoted } => {
                    current.push_str(text, !quoted);
                    current.started = true;
                    delim = Delim::None;
                    total += text.len();
                }
                Part::Var { quoted: true, .. }
                | Part::Status { quoted: true }
                | Part::Arith { quoted: true, .. } => {
                    let value = self.value(part)?.unwrap_or_default();
                    total += value.len();
                    current.push_str(&value, false);
                    current.started = true;
                    delim = Delim::None;
                }
                Part::Var { quoted: false, .. }
                | Part::Status { quoted: false }
                | Part::Arith { quoted: false, .. } => {
                    let value = self.value(part)?.unwrap_or_default();
                    total += value.len();
                    let mut buf = [0u8; 4];
                    for c in value.chars() {
                        if !ifs.contains(c) {
                            current.push_str(c.encode_utf8(&mut buf), true);
                            current.started = true;
                            delim = Delim::None;
                        } else if matches!(c, ' ' | '\t' | '\n') {
                            if current.started {
                                fields.push(std::mem::take(&mut current));
                                delim = Delim::White;
                            }
                        } else {
                            if current.started || delim != Delim::White {
                                fields.push(std::mem::take(&mut current));
                            }
                            delim = Delim::Hard;
                        }
                    }
                }
            }
            if total > MAX_WORD_BYTES {
                return Err(ExpandError::TooLong(word.source.clone()));
            }
        }
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
        let cwd = GuestPath::root();
        let e = Expander {
            vars: &v,
            status: 3,
            ws: &ws,
            cwd: &cwd,
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
