//! Command-line options as the programs themselves parse them: GNU `getopt_long` (and git's
//! parse-options, which behaves the same way for what matters here).
//!
//! - Short options cluster (`-la`), and an option that takes a value takes the rest of its word
//!   (`-oFILE`, `-uoFILE`) or the next word (`-o FILE`).
//! - Long options take their value after `=` (`--output=F`) or, when the value is required, as
//!   the next word (`--output F`); an optional value is only ever attached.
//! - Options may follow operands (GNU permutes the arguments; git's parse-options does too
//!   for the subcommands listed); `--` ends the options.
//! - Long options may be **abbreviated** to any unambiguous prefix of the program's own option
//!   table (`--outp` is `--output`). An allowlist only knows the options it allows, not the
//!   program's whole table, so it cannot tell which option a prefix would pick: a long option
//!   that is not spelled out exactly is [`ArgError::Abbreviated`], never a match. The other
//!   direction, recognising an abbreviation of a known *dangerous* option, is
//!   [`long_matches`].

use crate::shell::Word;

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// A flag.
    None,
    /// A value, attached or in the next word.
    Required,
    /// A value only when attached (`--color=always`, `-U5`).
    Optional,
}

/// What an option's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// Text (a number, a pattern, a format).
    Text,
    /// A file the program reads: checked like any path the command reads.
    ReadPath,
}

/// One option of a table: its short letter and long names, arity and value kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptSpec {
    /// The short letter, if any.
    pub short: Option<char>,
    /// The long names (without `--`), the first being the canonical one.
    pub long: Vec<&'static str>,
    /// Whether it takes a value.
    pub arity: Arity,
    /// What the value is.
    pub value: ValueKind,
}

/// A parsed option table. Built from a compact text form (see [`OptTable::parse`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptTable {
    /// The options.
    pub options: Vec<OptSpec>,
    /// `-NUM` is an option (`head -5`, `grep -3`, `git log -5`).
    pub numeric: bool,
    /// Every option of the program (not only those listed) is harmless, so a glob that could
    /// expand to an option name (`*`, `?x`, `[-]*`) may stand where options are read.
    pub glob_safe: bool,
}

impl OptTable {
    /// Parses the compact form: whitespace-separated entries, each one option's names joined
    /// by `|` (`n|--lines`), followed by `=` for a required text value, `=P` for a required
    /// path the program reads, or `?` for an optional attached value. For example
    /// `"a|--all n=|--lines= f=P|--file=P --color?"`. The marker may sit on any of the names.
    /// An entry with two short letters (`i|y|--ignore-case`) makes one option per letter.
    ///
    /// # Panics
    /// Never on the tables of this crate (a unit test parses every one); an entry that is
    /// malformed is skipped.
    pub fn parse(text: &'static str, numeric: bool) -> Self {
        let mut options = Vec::new();
        for entry in text.split_whitespace() {
            let mut spec = OptSpec {
                short: None,
                long: Vec::new(),
                arity: Arity::None,
                value: ValueKind::Text,
            };
            let mut more_shorts = Vec::new();
            for name in entry.split('|') {
                let (name, arity, value) = if let Some(n) = name.strip_suffix("=P") {
                    (n, Arity::Required, ValueKind::ReadPath)
                } else if let Some(n) = name.strip_suffix('=') {
                    (n, Arity::Required, ValueKind::Text)
                } else if let Some(n) = name.strip_suffix('?') {
                    (n, Arity::Optional, ValueKind::Text)
                } else {
                    (name, Arity::None, ValueKind::Text)
                };
                if arity != Arity::None {
                    spec.arity = arity;
                    spec.value = value;
                }
                if let Some(l) = name.strip_prefix("--") {
                    spec.long.push(l);
                } else if spec.short.is_none() {
                    spec.short = name.chars().next();
                } else {
                    more_shorts.extend(name.chars().next());
                }
            }
            for c in more_shorts {
                options.push(OptSpec {
                    short: Some(c),
                    long: Vec::new(),
                    ..spec.clone()
                });
            }
            options.push(spec);
        }
        Self {
            options,
            numeric,
            glob_safe: false,
        }
    }

    /// Marks every option of the program harmless (see [`OptTable::glob_safe`]).
    pub fn glob_safe(mut self) -> Self {
        self.glob_safe = true;
        self
    }

    fn short(&self, c: char) -> Option<&OptSpec> {
        self.options.iter().find(|o| o.short == Some(c))
    }

    fn long(&self, name: &str) -> Option<&OptSpec> {
        self.options.iter().find(|o| o.long.contains(&name))
    }
}

/// One argument after parsing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg<'a> {
    /// An option, by its spec, with its value (a word of its own when attached).
    Opt(&'a OptSpec, Option<Word>),
    /// An operand.
    Operand(&'a Word),
}

/// Why arguments do not fit a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgError {
    /// An option not in the table.
    Unknown(String),
    /// A long option written as a prefix (`--outp`): the program would resolve it against its
    /// whole option table, which an allowlist does not hold.
    Abbreviated(String),
    /// An option's required value is missing.
    MissingValue(String),
    /// A value given to an option that takes none (`--all=x`).
    UnexpectedValue(String),
    /// A word only known at run time where an option may stand: it could be any option.
    Dynamic(String),
}

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unknown(o) => write!(f, "option `{o}` is not on the command's read-only list"),
            Self::Abbreviated(o) => write!(
                f,
                "`{o}` is not spelled out; the program would complete it to one of its options"
            ),
            Self::MissingValue(o) => write!(f, "option `{o}` needs a value"),
            Self::UnexpectedValue(o) => write!(f, "option `{o}` takes no value"),
            Self::Dynamic(w) => {
                write!(f, "`{w}` is only known at run time and could be any option")
            }
        }
    }
}

fn attached(w: &Word, value: &str) -> Word {
    Word {
        text: value.to_owned(),
        ..w.clone()
    }
}

/// Parses `args` (the words after the command name) against `table`.
///
/// A word that is only known at run time (an expansion) where options are still recognised
/// is [`ArgError::Dynamic`]: its value could be `--output=…`. After `--` such words are
/// operands.
///
/// # Errors
/// The first [`ArgError`].
pub fn parse_args<'a>(table: &'a OptTable, args: &'a [Word]) -> Result<Vec<Arg<'a>>, ArgError> {
    let mut out = Vec::new();
    let mut options_done = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if options_done {
            out.push(Arg::Operand(w));
            continue;
        }
        if w.dynamic || w.splits {
            return Err(ArgError::Dynamic(w.raw.clone()));
        }
        if w.glob && !table.glob_safe && w.text.starts_with(['*', '?', '[', '{']) {
            return Err(ArgError::Dynamic(w.raw.clone()));
        }
        let t = w.text.as_str();
        if t == "--" {
            options_done = true;
            continue;
        }
        if t.len() < 2 || !t.starts_with('-') {
            out.push(Arg::Operand(w));
            continue;
        }
        if let Some(body) = t.strip_prefix("--") {
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            i = long_option(table, args, i, w, name, value, "--", &mut out)?;
            continue;
        }
        let body = &t[1..];
        if table.numeric && body.bytes().all(|b| b.is_ascii_digit()) {
            out.push(Arg::Opt(&NUMERIC, Some(attached(w, body))));
            continue;
        }
        // A cluster of short options.
        for (at, c) in body.char_indices() {
            let spec = table
                .short(c)
                .ok_or_else(|| ArgError::Unknown(format!("-{c}")))?;
            let rest = &body[at + c.len_utf8()..];
            match spec.arity {
                Arity::None => out.push(Arg::Opt(spec, None)),
                Arity::Optional => {
                    out.push(Arg::Opt(
                        spec,
                        (!rest.is_empty()).then(|| attached(w, rest)),
                    ));
                    break;
                }
                Arity::Required if !rest.is_empty() => {
                    out.push(Arg::Opt(spec, Some(attached(w, rest))));
                    break;
                }
                Arity::Required => {
                    let v = args
                        .get(i)
                        .ok_or_else(|| ArgError::MissingValue(format!("-{c}")))?;
                    if may_be_words(table, v) {
                        return Err(ArgError::Dynamic(v.raw.clone()));
                    }
                    i += 1;
                    out.push(Arg::Opt(spec, Some(v.clone())));
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// Whether an option's value in a word of its own may become several words, the second of
/// which would stand where options are read: an unquoted expansion, or a glob whose matches
/// could start with `-` (`sort -k * x` with files named `1` and `-o.bashrc`), unless every
/// option of the program is harmless.
fn may_be_words(table: &OptTable, v: &Word) -> bool {
    v.splits || (v.glob && !table.glob_safe && v.text.starts_with(['*', '?', '[', '-']))
}

/// The pseudo-option of `-NUM`.
static NUMERIC: OptSpec = OptSpec {
    short: None,
    long: Vec::new(),
    arity: Arity::Required,
    value: ValueKind::Text,
};

#[allow(
    clippy::too_many_arguments,
    reason = "one step of the parse loop; every argument is its state"
)]
fn long_option<'a>(
    table: &'a OptTable,
    args: &'a [Word],
    mut i: usize,
    w: &'a Word,
    name: &str,
    value: Option<&str>,
    dash: &str,
    out: &mut Vec<Arg<'a>>,
) -> Result<usize, ArgError> {
    let Some(spec) = table.long(name) else {
        let abbreviates = table
            .options
            .iter()
            .any(|o| o.long.iter().any(|l| l.starts_with(name)));
        return Err(if abbreviates && !name.is_empty() {
            ArgError::Abbreviated(format!("{dash}{name}"))
        } else {
            ArgError::Unknown(format!("{dash}{name}"))
        });
    };
    match (spec.arity, value) {
        (Arity::None, Some(_)) => return Err(ArgError::UnexpectedValue(format!("{dash}{name}"))),
        (Arity::None, None) | (Arity::Optional, None) => out.push(Arg::Opt(spec, None)),
        (_, Some(v)) => out.push(Arg::Opt(spec, Some(attached(w, v)))),
        (Arity::Required, None) => {
            let v = args
                .get(i)
                .ok_or_else(|| ArgError::MissingValue(format!("{dash}{name}")))?;
            if may_be_words(table, v) {
                return Err(ArgError::Dynamic(v.raw.clone()));
            }
            i += 1;
            out.push(Arg::Opt(spec, Some(v.clone())));
        }
    }
    Ok(i)
}

/// Whether the long-option word `arg` (`--outp=x`, `--output`) could be the long option
/// `name` (`output`) in a program that accepts abbreviations: it is `--name` or `--` and a
/// non-empty prefix of it, with or without `=value`. Used to find dangerous options, where
/// treating an ambiguous prefix as the option is the safe side.
pub fn long_matches(arg: &str, name: &str) -> bool {
    let Some(body) = arg.strip_prefix("--") else {
        return false;
    };
    let given = body.split_once('=').map_or(body, |(n, _)| n);
    !given.is_empty() && name.starts_with(given)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn forms() {
        let t = OptTable::parse("u|--unique r n=|--lines= f=P|--file=P --color?", true);
        let ok = |s: &str| parse_args(&t, &words(s)).is_ok();
        for s in [
            "-u",
            "-ur",
            "-n5",
            "-n 5",
            "--lines=5",
            "--lines 5",
            "-un5",
            "-fX",
            "--color",
            "--color=never",
            "x -u",
            "-5",
            "-- -o",
        ] {
            assert!(ok(s), "{s}");
        }
        for s in [
            "-o",
            "-uo x",
            "--out",
            "--lin=5",
            "--unique=1",
            "-n",
            "--lines",
            "-x5",
        ] {
            assert!(!ok(s), "{s}");
        }
        assert!(matches!(
            parse_args(&t, &words("--uniq")),
            Err(ArgError::Abbreviated(_))
        ));
        assert!(long_matches("--outp=x", "output"));
        assert!(long_matches("--output", "output"));
        assert!(!long_matches("--outputs", "output"));
        assert!(!long_matches("--", "output"));
    }
}
