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
//!
//! One parser ([`scan`]) reads every table, and what the table knows decides how it reads a
//! word ([`TableKind`]): an allowlist ([`OptTable`], the read-only set and `acceptEdits`)
//! refuses what it does not list and every abbreviation; a program's complete table
//! ([`super::getopt_long::Options`], the wrappers) resolves abbreviations as glibc does and
//! ends the options at the first operand; a list of the options looked for (the effects)
//! takes any prefix as the option and any other option as a flag, and never fails.

use std::fmt;

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

/// Parses `args` (the words after the command name) against `table`, an allowlist
/// ([`TableKind::Allowlist`]).
///
/// A word that is only known at run time (an expansion) where options are still recognised
/// is [`ArgError::Dynamic`]: its value could be `--output=…`. After `--` such words are
/// operands.
///
/// # Errors
/// The first [`ArgError`].
pub(crate) fn parse_args<'a>(
    table: &'a OptTable,
    args: &'a [Word],
) -> Result<Vec<Arg<'a>>, ArgError> {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let numeric = |t: &str| {
        let body = t.strip_prefix('-').filter(|b| !b.starts_with('-'))?;
        (table.numeric && !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()))
            .then(|| (&NUMERIC, body.to_owned()))
    };
    let guard = |i: usize, place: Place| {
        let w = &args[i];
        let refused = match place {
            Place::Option => {
                w.dynamic
                    || w.splits
                    || (w.glob && !table.glob_safe && w.text.starts_with(['*', '?', '[', '{']))
            }
            Place::Value => may_be_words(table, w),
        };
        if refused {
            Err(ArgError::Dynamic(w.raw.clone()))
        } else {
            Ok(())
        }
    };
    let scanned = scan(&table.options, TableKind::Allowlist, &texts, numeric, guard);
    if let Some(stop) = scanned.stop {
        return Err(match stop {
            Stop::Guard(e) => e,
            Stop::Abbreviated(name) => ArgError::Abbreviated(format!("--{name}")),
            Stop::Getopt(e) => match e {
                GetoptError::UnknownShort(c) => ArgError::Unknown(format!("-{c}")),
                GetoptError::UnknownLong(body) => ArgError::Unknown(format!(
                    "--{}",
                    body.split_once('=').map_or(body.as_str(), |(n, _)| n)
                )),
                GetoptError::Ambiguous { given, .. } => ArgError::Abbreviated(format!("--{given}")),
                GetoptError::MissingShortValue(c) => ArgError::MissingValue(format!("-{c}")),
                GetoptError::MissingLongValue(name) => ArgError::MissingValue(format!("--{name}")),
                GetoptError::UnexpectedValue(name) => {
                    ArgError::UnexpectedValue(format!("--{name}"))
                }
            },
        });
    }
    Ok(scanned
        .events
        .into_iter()
        .map(|e| match e {
            Event::Opt(spec, _, value) => Arg::Opt(
                spec,
                value.map(|v| {
                    if v.attached {
                        attached(&args[v.at], &v.text)
                    } else {
                        args[v.at].clone()
                    }
                }),
            ),
            Event::Operand(i) => Arg::Operand(&args[i]),
        })
        .collect())
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

/// An option of any table, as [`scan`] reads it.
pub trait OptionEntry {
    /// Its short letter, if any.
    fn short(&self) -> Option<char>;
    /// Its long spellings (without `--`).
    fn long(&self) -> &[&'static str];
    /// Whether it takes a value.
    fn arity(&self) -> Arity;
}

impl OptionEntry for OptSpec {
    fn short(&self) -> Option<char> {
        self.short
    }
    fn long(&self) -> &[&'static str] {
        &self.long
    }
    fn arity(&self) -> Arity {
        self.arity
    }
}

/// What a table knows about a program's options, which decides how [`scan`] reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind<'k> {
    /// The options a command may be given (an allowlist): options may follow operands, and a
    /// long option must be spelled out ([`Stop::Abbreviated`] otherwise); any other option is
    /// an error.
    Allowlist,
    /// Every option of the program, read as glibc's `getopt_long` with `+`: the options end at
    /// the first operand, a long option may be any prefix that names one option (an exact name
    /// wins; several options make it [`GetoptError::Ambiguous`]), any other option is an error.
    Complete,
    /// The options looked for, among others the table does not know: options may follow
    /// operands, a long option matches the first one of the table it is a prefix of (except
    /// when it is, spelled out, one of `known`, the program's other options), any other option
    /// is taken as a flag, and nothing is an error.
    Search {
        /// Other long options of the program, spelled out.
        known: &'k [&'k str],
    },
}

/// A value found for an option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    /// Its text.
    pub text: String,
    /// Index of the argument that holds it.
    pub at: usize,
    /// Whether it is attached to the option's own argument (`-n2`, `--lines=2`).
    pub attached: bool,
}

/// One thing [`scan`] found, in the order of the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event<'o, O> {
    /// An option, the index of the argument it is written in, and its value.
    Opt(&'o O, usize, Option<Value>),
    /// The index of an operand (only when options may follow operands).
    Operand(usize),
}

/// Why [`scan`] stopped before the end of the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop<E> {
    /// What glibc's `getopt_long` reports (an allowlist reports the same things).
    Getopt(GetoptError),
    /// A long option an allowlist cannot resolve (the name given).
    Abbreviated(String),
    /// The caller's guard refused an argument.
    Guard(E),
}

/// Why arguments do not parse, with glibc's wording (see [`GetoptError::message`]); [`super::getopt_long`] reports it as the program would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GetoptError {
    /// A short option not in the table (`-z`).
    UnknownShort(char),
    /// A long option that names none (the text after `--`, value included).
    UnknownLong(String),
    /// A long option that is a prefix of several options.
    Ambiguous {
        /// The text after `--`, value included.
        given: String,
        /// The long names it could be, in the table's order.
        candidates: Vec<&'static str>,
    },
    /// A short option's required value is missing.
    MissingShortValue(char),
    /// A long option's required value is missing (its full name).
    MissingLongValue(&'static str),
    /// A value given to a long option that takes none (its full name).
    UnexpectedValue(&'static str),
}

impl GetoptError {
    /// The line glibc prints for it: `PROGRAM: invalid option -- 'z'`,
    /// `PROGRAM: option '--max' is ambiguous; possibilities: '--max-args' '--max-chars'`...
    pub fn message(&self, program: &str) -> String {
        format!("{program}: {self}")
    }
}

impl fmt::Display for GetoptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownShort(c) => write!(f, "invalid option -- '{c}'"),
            Self::UnknownLong(given) => write!(f, "unrecognized option '--{given}'"),
            Self::Ambiguous { given, candidates } => {
                write!(f, "option '--{given}' is ambiguous; possibilities:")?;
                for c in candidates {
                    write!(f, " '--{c}'")?;
                }
                Ok(())
            }
            Self::MissingShortValue(c) => write!(f, "option requires an argument -- '{c}'"),
            Self::MissingLongValue(name) => write!(f, "option '--{name}' requires an argument"),
            Self::UnexpectedValue(name) => write!(f, "option '--{name}' doesn't allow an argument"),
        }
    }
}

impl std::error::Error for GetoptError {}

/// Where an argument stands, for a [`scan`] guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Where an option may stand.
    Option,
    /// As an option's value in a word of its own.
    Value,
}

/// What [`scan`] read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scanned<'o, O, E> {
    /// The options (and, when options may follow operands, the operands), in order, up to
    /// where it stopped.
    pub events: Vec<Event<'o, O>>,
    /// Index of the first operand when the options end at it ([`TableKind::Complete`]), of the
    /// argument it stopped at, or the arguments' length.
    pub operands: usize,
    /// Whether `--` ended the options.
    pub dashdash: bool,
    /// Why it stopped early, if it did.
    pub stop: Option<Stop<E>>,
}

/// Reads `args` (the arguments after the program's name) against the options `opts`, as a
/// table of `kind` (see [`TableKind`]). `numeric` reads a word that is an option by its
/// digits (`head -5`, `nice -10`) into its option and value; `guard` may refuse the argument
/// at an index before it is read where an option may stand, or taken as a value.
pub fn scan<'o, O: OptionEntry, S: AsRef<str>, E>(
    opts: &'o [O],
    kind: TableKind<'_>,
    args: &[S],
    numeric: impl Fn(&str) -> Option<(&'o O, String)>,
    mut guard: impl FnMut(usize, Place) -> Result<(), E>,
) -> Scanned<'o, O, E> {
    let permute = kind != TableKind::Complete;
    let mut out = Scanned {
        events: Vec::new(),
        operands: args.len(),
        dashdash: false,
        stop: None,
    };
    let mut options_done = false;
    let mut i = 0;
    while let Some(arg) = args.get(i).map(AsRef::as_ref) {
        if options_done {
            out.events.push(Event::Operand(i));
            i += 1;
            continue;
        }
        let step = if let Err(e) = guard(i, Place::Option) {
            Err(Stop::Guard(e))
        } else if arg == "--" {
            out.dashdash = true;
            if !permute {
                out.operands = i + 1;
                return out;
            }
            options_done = true;
            Ok(i + 1)
        } else if let Some((opt, value)) = numeric(arg) {
            let value = Value {
                text: value,
                at: i,
                attached: true,
            };
            out.events.push(Event::Opt(opt, i, Some(value)));
            Ok(i + 1)
        } else if let Some(body) = arg.strip_prefix("--") {
            long_option(opts, kind, args, i, body, &mut out.events, &mut guard)
        } else if arg.len() > 1 && arg.starts_with('-') {
            short_cluster(opts, kind, args, i, &arg[1..], &mut out.events, &mut guard)
        } else if permute {
            out.events.push(Event::Operand(i));
            Ok(i + 1)
        } else {
            out.operands = i;
            return out;
        };
        match step {
            Ok(next) => i = next,
            Err(stop) => {
                out.operands = i;
                out.stop = Some(stop);
                return out;
            }
        }
    }
    out
}

/// The value in the argument after the option at `i`, when there is one and the guard lets
/// it be one.
fn next_value<S: AsRef<str>, E>(
    args: &[S],
    i: usize,
    guard: &mut impl FnMut(usize, Place) -> Result<(), E>,
) -> Result<Option<Value>, E> {
    let Some(v) = args.get(i + 1) else {
        return Ok(None);
    };
    guard(i + 1, Place::Value)?;
    Ok(Some(Value {
        text: v.as_ref().to_owned(),
        at: i + 1,
        attached: false,
    }))
}

/// One `--name[=value]` argument at `i`; the index of the next argument.
fn long_option<'o, O: OptionEntry, S: AsRef<str>, E>(
    opts: &'o [O],
    kind: TableKind<'_>,
    args: &[S],
    i: usize,
    body: &str,
    events: &mut Vec<Event<'o, O>>,
    guard: &mut impl FnMut(usize, Place) -> Result<(), E>,
) -> Result<usize, Stop<E>> {
    let (name, inline) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    let Some((opt, spelled)) = find_long(opts, kind, name, body)? else {
        return Ok(i + 1); // an option a search does not look for
    };
    let search = matches!(kind, TableKind::Search { .. });
    let attached = |v: &str| Value {
        text: v.to_owned(),
        at: i,
        attached: true,
    };
    let (value, next) = match (opt.arity(), inline) {
        (Arity::None, Some(_)) if search => (None, i + 1),
        (Arity::None, Some(_)) => return Err(Stop::Getopt(GetoptError::UnexpectedValue(spelled))),
        (Arity::None | Arity::Optional, None) => (None, i + 1),
        (_, Some(v)) => (Some(attached(v)), i + 1),
        (Arity::Required, None) => match next_value(args, i, guard).map_err(Stop::Guard)? {
            Some(v) => (Some(v), i + 2),
            None if search => (None, i + 1),
            None => return Err(Stop::Getopt(GetoptError::MissingLongValue(spelled))),
        },
    };
    events.push(Event::Opt(opt, i, value));
    Ok(next)
}

/// The option the long name `name` stands for in a table of `kind`, and its spelling there;
/// `None` for one a search does not look for. `body` is the whole argument after `--`, for
/// messages.
fn find_long<'o, O: OptionEntry, E>(
    opts: &'o [O],
    kind: TableKind<'_>,
    name: &str,
    body: &str,
) -> Result<Option<(&'o O, &'static str)>, Stop<E>> {
    let spellings = || {
        opts.iter()
            .flat_map(|o| o.long().iter().map(move |l| (o, *l)))
    };
    let prefix_of = |l: &str| !name.is_empty() && l.starts_with(name);
    match kind {
        TableKind::Search { known } => {
            if known.contains(&name) && !spellings().any(|(_, l)| l == name) {
                return Ok(None);
            }
            Ok(spellings().find(|(_, l)| prefix_of(l)))
        }
        TableKind::Allowlist => match spellings().find(|(_, l)| *l == name) {
            Some(found) => Ok(Some(found)),
            None if spellings().any(|(_, l)| prefix_of(l)) => {
                Err(Stop::Abbreviated(name.to_owned()))
            }
            None => Err(Stop::Getopt(GetoptError::UnknownLong(body.to_owned()))),
        },
        TableKind::Complete => {
            if let Some(found) = spellings().find(|(_, l)| *l == name) {
                return Ok(Some(found));
            }
            let mut matches = spellings().filter(|(_, l)| prefix_of(l));
            let first = matches
                .next()
                .ok_or_else(|| Stop::Getopt(GetoptError::UnknownLong(body.to_owned())))?;
            // glibc: a later match that is another option (not a spelling of the first) makes
            // the prefix ambiguous; the possibilities are the first and every such other.
            let others: Vec<&'static str> = matches
                .filter(|(o, _)| !std::ptr::eq(*o, first.0))
                .map(|(_, l)| l)
                .collect();
            if others.is_empty() {
                return Ok(Some(first));
            }
            let mut candidates = vec![first.1];
            candidates.extend(others);
            Err(Stop::Getopt(GetoptError::Ambiguous {
                given: body.to_owned(),
                candidates,
            }))
        }
    }
}

/// One cluster of short options (`cluster` is the argument at `i` without its dash); the
/// index of the next argument.
fn short_cluster<'o, O: OptionEntry, S: AsRef<str>, E>(
    opts: &'o [O],
    kind: TableKind<'_>,
    args: &[S],
    i: usize,
    cluster: &str,
    events: &mut Vec<Event<'o, O>>,
    guard: &mut impl FnMut(usize, Place) -> Result<(), E>,
) -> Result<usize, Stop<E>> {
    let search = matches!(kind, TableKind::Search { .. });
    for (at, c) in cluster.char_indices() {
        let Some(opt) = opts.iter().find(|o| o.short() == Some(c)) else {
            if search {
                continue; // an option a search does not look for: taken as a flag
            }
            return Err(Stop::Getopt(GetoptError::UnknownShort(c)));
        };
        let rest = &cluster[at + c.len_utf8()..];
        let attached = (!rest.is_empty()).then(|| Value {
            text: rest.to_owned(),
            at: i,
            attached: true,
        });
        match opt.arity() {
            Arity::None => events.push(Event::Opt(opt, i, None)),
            Arity::Optional => {
                events.push(Event::Opt(opt, i, attached));
                return Ok(i + 1);
            }
            Arity::Required if attached.is_some() => {
                events.push(Event::Opt(opt, i, attached));
                return Ok(i + 1);
            }
            Arity::Required => {
                return match next_value(args, i, guard).map_err(Stop::Guard)? {
                    Some(v) => {
                        events.push(Event::Opt(opt, i, Some(v)));
                        Ok(i + 2)
                    }
                    None if search => Ok(i + 1),
                    None => Err(Stop::Getopt(GetoptError::MissingShortValue(c))),
                };
            }
        }
    }
    Ok(i + 1)
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
mod tests;
