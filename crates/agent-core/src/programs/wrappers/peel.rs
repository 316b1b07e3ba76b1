//! Reading one wrapper's arguments as the program reads them, to the command it runs.

use super::{Layout, lookup};
use crate::programs::getopt_long::{self, Given, OptionRole, Parsed};
use crate::shell::wrappers::{Layer, basename, is_assignment};
use crate::shell::{Word, join};

/// What one wrapper at the head of a command shows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Peel {
    /// The word is not a wrapper, or the wrapper runs no command here (`command -v x`,
    /// `sudo -l`, `xargs` alone, which runs `echo`).
    None,
    /// A layer, and the indices of the words xargs fills from its input (`xargs -I{}`).
    Layer(Layer, Vec<usize>),
    /// The command it runs cannot be known: why.
    Unknown(String),
}

/// A wrapper's arguments (the words after its name), as [`peel`] reads them.
struct Args<'a> {
    words: &'a [Word],
    /// Index (in the command's words) of the first argument.
    base: usize,
    /// The wrapper's name, for messages.
    name: &'static str,
}

impl Args<'_> {
    fn get(&self, i: usize) -> Option<&Word> {
        self.words.get(i)
    }

    fn len(&self) -> usize {
        self.words.len()
    }

    /// The value of an option as a word of its own (attached values keep their word's flags).
    fn value(&self, g: &Given<'_>) -> Option<Word> {
        let at = g.value_at?;
        let w = self.get(at)?;
        let text = g.value.clone()?;
        Some(Word { text, ..w.clone() })
    }

    fn unknown(&self, why: impl std::fmt::Display) -> Peel {
        Peel::Unknown(format!(
            "cannot tell which command `{}` runs: {why}",
            self.name
        ))
    }

    /// The word at `i` is only known at run time and could be an option or the command.
    fn dynamic(&self, i: usize) -> Peel {
        let raw = self.get(i).map_or("", |w| w.raw.as_str());
        self.unknown(format_args!(
            "`{raw}` is only known at run time and could be one of its options or the command"
        ))
    }

    /// The word at `i` may be several words or none at run time.
    fn splits(&self, i: usize) -> Peel {
        let raw = self.get(i).map_or("", |w| w.raw.as_str());
        self.unknown(format_args!(
            "`{raw}` may make any number of words at run time (quote the expansion)"
        ))
    }

    /// Whether the word at `i` may be several words or none.
    fn may_split(&self, i: usize) -> bool {
        self.get(i).is_some_and(|w| w.splits || w.glob)
    }
}

/// Recognises the wrapper at `words[start]`.
pub(crate) fn peel(words: &[Word], start: usize) -> Peel {
    let Some(head) = words.get(start).filter(|w| w.is_static()) else {
        return Peel::None;
    };
    let Some(wrapper) = lookup(basename(&head.text)) else {
        return Peel::None;
    };
    let args = Args {
        words: words.get(start + 1..).unwrap_or(&[]),
        base: start + 1,
        name: wrapper.name,
    };
    let texts: Vec<&str> = args.words.iter().map(|w| w.text.as_str()).collect();
    let parsed = wrapper.options.parse(&texts);
    if let Some(refusal) = unknown_words(&args, &parsed) {
        return refusal;
    }
    if let Some(decided) = options_decide(&args, &parsed) {
        return decided;
    }
    let mut layer = Layer {
        wrapper: wrapper.name,
        inner: words.len(),
        // xargs only without options (claude-code.md §3.2 item 2).
        transparent: wrapper.transparent
            && (wrapper.layout != Layout::Xargs || parsed.given.is_empty()),
        appends_input: false,
        script: None,
        writes: Vec::new(),
        reads: Vec::new(),
    };
    for g in &parsed.given {
        match g.opt.role {
            OptionRole::WritesFile => layer.writes.extend(args.value(g)),
            OptionRole::ReadsFile => layer.reads.extend(args.value(g)),
            _ => {}
        }
    }
    if let Some(g) = parsed
        .given
        .iter()
        .find(|g| matches!(g.opt.role, OptionRole::RunsString | OptionRole::SplitString))
    {
        return string_option_layer(&args, g, layer);
    }
    let k = parsed.operands;
    match wrapper.layout {
        Layout::Command => inner_at(&args, layer, k),
        Layout::Assignments { dash, any_word } => {
            after_assignments(&args, layer, k, dash, any_word)
        }
        Layout::Operand => {
            if args.may_split(k) {
                return args.splits(k);
            }
            inner_at(&args, layer, k + 1)
        }
        Layout::Priority => after_priority(&args, layer, k),
        Layout::LockFile => after_lock_file(&args, &parsed, layer, k),
        Layout::Watch => {
            if parsed.given.iter().any(|g| g.opt.name == "exec") {
                return inner_at(&args, layer, k);
            }
            let command = args.words.get(k..).unwrap_or(&[]);
            if command.is_empty() {
                return Peel::None;
            }
            layer.script = Some(joined(command));
            Peel::Layer(layer, Vec::new())
        }
        Layout::Xargs => xargs(&args, &parsed, layer, k),
    }
}

/// What the options alone decide: a parse error, an option that runs nothing (`command -v`),
/// or one that runs the command in another directory.
fn options_decide(args: &Args<'_>, parsed: &Parsed<'_>) -> Option<Peel> {
    if let Some(e) = &parsed.error {
        let hint = match e {
            getopt_long::GetoptError::Ambiguous { .. } => "; spell the option out",
            _ => "",
        };
        return Some(args.unknown(format_args!("{e}{hint}")));
    }
    if parsed
        .given
        .iter()
        .any(|g| g.opt.role == OptionRole::RunsNothing)
    {
        return Some(Peel::None);
    }
    let g = parsed
        .given
        .iter()
        .find(|g| g.opt.role == OptionRole::Chdir)?;
    Some(args.unknown(format_args!(
        "`--{}` runs it in another directory, where its relative paths name other files \
         than those checked; write `cd DIR && …` instead",
        g.opt.name
    )))
}

/// The layer of an option whose value is a command line (`sh -c`-like, or `env -S`).
fn string_option_layer(args: &Args<'_>, g: &Given<'_>, mut layer: Layer) -> Peel {
    let Some(value) = args.value(g) else {
        return Peel::None;
    };
    layer.script = Some(if g.opt.role == OptionRole::SplitString {
        // `env -S STRING ARGS`: STRING's words, then ARGS, are env's arguments again.
        let rest = args
            .words
            .get(g.value_at.map_or(args.len(), |v| v + 1)..)
            .unwrap_or(&[]);
        script_word(args.name, &value, rest)
    } else {
        value
    });
    Peel::Layer(layer, Vec::new())
}

/// The layer whose command starts at argument `k`, or none when there is no such argument.
fn inner_at(args: &Args<'_>, mut layer: Layer, k: usize) -> Peel {
    if k >= args.len() {
        return Peel::None;
    }
    layer.inner = args.base + k;
    Peel::Layer(layer, Vec::new())
}

/// `env`-like: the command after an optional `-` and the `NAME=VALUE` words from `k`.
fn after_assignments(args: &Args<'_>, layer: Layer, k: usize, dash: bool, any_word: bool) -> Peel {
    let mut k = k;
    if dash && args.get(k).is_some_and(|w| w.is_static() && w.text == "-") {
        k += 1;
    }
    while let Some(a) = args.get(k).filter(|a| a.text.contains('=')) {
        if a.splits || a.glob {
            return args.splits(k);
        }
        if !any_word && !is_assignment(&a.text) {
            return args.unknown(format_args!(
                "`{}` holds a `=` but is not a NAME=VALUE assignment",
                a.raw
            ));
        }
        k += 1;
    }
    inner_at(args, layer, k)
}

/// `nice`-like: the command after an optional all-digit priority at `k` (when a command
/// follows it).
fn after_priority(args: &Args<'_>, layer: Layer, k: usize) -> Peel {
    let Some(first) = args.get(k) else {
        return Peel::None;
    };
    if !first.is_static() {
        return args.dynamic(k);
    }
    let priority = args.len() - k >= 2
        && !first.text.is_empty()
        && first.text.bytes().all(|b| b.is_ascii_digit());
    inner_at(args, layer, k + usize::from(priority))
}

/// `flock`: the lock file at `k` (written), then the command or `-c COMMAND_LINE`; with
/// `--fd` the command starts at `k`.
fn after_lock_file(args: &Args<'_>, parsed: &Parsed<'_>, mut layer: Layer, k: usize) -> Peel {
    if parsed.given.iter().any(|g| g.opt.name == "fd") {
        return inner_at(args, layer, k);
    }
    let Some(file) = args.get(k) else {
        return Peel::None;
    };
    if args.may_split(k) {
        return args.splits(k);
    }
    let Some(next) = args.get(k + 1) else {
        return Peel::None; // `flock NUMBER`: a descriptor, no command
    };
    layer.writes.push(file.clone());
    if next.is_static() && matches!(next.text.as_str(), "-c" | "--command") {
        let Some(script) = args.get(k + 2) else {
            return Peel::None;
        };
        layer.script = Some(script.clone());
        return Peel::Layer(layer, Vec::new());
    }
    inner_at(args, layer, k + 1)
}

/// Refuses words getopt reads (options, their values, and the first operand unless `--` came
/// before it) that are only known at run time.
fn unknown_words(args: &Args<'_>, parsed: &Parsed<'_>) -> Option<Peel> {
    for g in &parsed.given {
        if !args.get(g.at).is_some_and(Word::is_static) {
            return Some(args.dynamic(g.at));
        }
        if let Some(v) = g.value_at.filter(|&v| v != g.at) {
            if args.may_split(v) {
                return Some(args.splits(v));
            }
            if g.opt.role == OptionRole::Replace && !args.get(v).is_some_and(Word::is_static) {
                return Some(args.unknown(format_args!(
                    "its replace string `{}` is only known at run time",
                    args.get(v).map_or("", |w| w.raw.as_str())
                )));
            }
        }
    }
    let k = parsed.operands;
    if parsed.error.is_none() && !parsed.dashdash && args.get(k).is_some_and(may_be_option) {
        return Some(args.dynamic(k));
    }
    None
}

/// Whether a word only known at run time may begin with `-` (`$X`, `"$X"`, `*`, `{-a,b}`):
/// not when it begins with a letter, a digit, `_`, `/` or `.` written out (`A=$X`, `./$F`).
fn may_be_option(w: &Word) -> bool {
    !w.is_static()
        && !w
            .text
            .starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.'))
}

/// xargs: the command, and the items it gets (appended, or in place of the replace string).
fn xargs(args: &Args<'_>, parsed: &Parsed<'_>, mut layer: Layer, k: usize) -> Peel {
    if k >= args.len() {
        return Peel::None; // runs `echo` with the items
    }
    let replace = parsed
        .given
        .iter()
        .rfind(|g| g.opt.role == OptionRole::Replace)
        .map(|g| g.value.clone().unwrap_or_else(|| "{}".to_owned()));
    // GNU xargs: -n (but -n1), -L and -l after -I turn the replacement off; both ways are
    // assumed, so the items may be appended and replaced.
    let grouped = parsed
        .given
        .iter()
        .any(|g| matches!(g.opt.name, "max-args" | "max-lines" | "max-lines-strict"));
    layer.inner = args.base + k;
    layer.appends_input = replace.is_none() || grouped;
    let Some(r) = replace else {
        return Peel::Layer(layer, Vec::new());
    };
    if r.is_empty() {
        return args.unknown("its replace string is empty");
    }
    let filled: Vec<usize> = (k..args.len())
        .filter(|&i| args.get(i).is_some_and(|w| w.text.contains(r.as_str())))
        .collect();
    if filled.first() == Some(&k) {
        return args.unknown(format_args!(
            "the command's name `{}` holds the replace string `{r}`, so it comes from the input",
            args.get(k).map_or("", |w| w.raw.as_str())
        ));
    }
    Peel::Layer(layer, filled.into_iter().map(|i| args.base + i).collect())
}

/// `NAME` followed by the `rest` as written, as one command line (`env -S`).
fn script_word(name: &str, value: &Word, rest: &[Word]) -> Word {
    let mut text = format!("{name} {}", value.text);
    for w in rest {
        text.push(' ');
        text.push_str(&w.raw);
    }
    Word {
        raw: text.clone(),
        text,
        dynamic: value.dynamic || rest.iter().any(|w| w.dynamic),
        glob: false,
        home: false,
        splits: false,
    }
}

/// Words joined with spaces into one command line (`watch ls -l` runs `sh -c 'ls -l'`).
fn joined(words: &[Word]) -> Word {
    let text = join(words);
    Word {
        raw: text.clone(),
        text,
        dynamic: words.iter().any(|w| !w.is_static()),
        glob: false,
        home: false,
        splits: false,
    }
}
