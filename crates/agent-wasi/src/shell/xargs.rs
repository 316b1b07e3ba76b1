//! `xargs`, run by the shell itself: a WASI guest cannot start other commands, so the shell
//! reads the items and runs each command line through the [`super::StageRunner`], exactly as
//! it runs a command the script names (a verified module, with its limits and audit record).
//!
//! GNU findutils' xargs for the options it documents, with its messages and exit statuses:
//! items separated by blanks and newlines with `'..'`, `".."` and `\` quoting (default), by NUL
//! (`-0`) or by one delimiter (`-d`); `-n`, `-L`, `-I`/`-i`, `-s`, `-x`, `-r`, `-t`, `-E`/`-e`,
//! `-a`, `-P` (accepted; commands run one at a time); `echo` when no command is given. The
//! command gets an empty stdin (GNU's `/dev/null`). Exit status: 0, or 123 when a command
//! exited 1-125, 124 when one exited 255 (xargs stops), 125 when a limit stopped one (as a
//! signal would; xargs stops), 126 / 127 when it cannot run or is not found (xargs stops), 1 for
//! a usage or input error. Not supported: `-p` / `-o` (no terminal), `--process-slot-var`,
//! `--show-limits`; GNU's continuation of `-L` lines that end in a blank. Options are read with
//! agent-core's table of GNU xargs ([`agent_core::programs::wrappers::XARGS`]), the one the
//! permission checker reads, so both agree on which word is the command.

use std::io::{BufRead, BufReader, Read, Write};

use agent_core::programs::getopt_long;
use agent_core::programs::wrappers::XARGS;

/// GNU's default `--max-chars` (the size of the command buffer it reports).
const DEFAULT_MAX_CHARS: usize = 131_072;

/// The longest item read whatever `-s` says: about the system's own argument limit (GNU
/// xargs accepts `-s` up to 2091263 on Linux). Nothing longer could run, and the host must not
/// keep an item of unbounded size in memory.
const MAX_ITEM_BYTES: usize = 2 << 20;

/// What running one command line gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ran {
    /// It ran and exited with this status.
    Status(i32),
    /// No bundle provides the command.
    NotFound,
}

/// The exit status of a script stopped by its cancellation flag.
const CANCELLED: i32 = super::state::CANCELLED_STATUS;

/// How input items are separated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Separator {
    /// Blanks and newlines, with quotes and backslashes.
    Blanks,
    /// One byte (`-0` is NUL, `-d X`), no quoting.
    Byte(u8),
}

/// How items are grouped into command lines.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Grouping {
    /// As many as fit (`-n` caps the count).
    Args(Option<usize>),
    /// `-L N`: the items of N non-blank lines.
    Lines(usize),
    /// `-I R`: one line per command, R replaced in the initial arguments.
    Replace(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Options {
    separator: Separator,
    grouping: Grouping,
    max_chars: usize,
    exit_if_too_long: bool,
    no_run_if_empty: bool,
    trace: bool,
    eof: Option<String>,
    arg_file: Option<String>,
}

/// xargs' options: GNU findutils' table, the one the permission checker reads xargs with.
const SPEC: getopt_long::Options = XARGS.options;

/// What `xargs ARGS...` runs, as far as its arguments say (for the router, `route.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct XargsCommand {
    /// Where the command starts in the arguments; their length when none is given (xargs then
    /// runs `echo`).
    pub at: usize,
    /// The command and its initial arguments (`echo` when none is given).
    pub command: Vec<String>,
    /// The `-I` / `-i` replace string, replaced in every initial argument, the command's name
    /// included.
    pub replace: Option<String>,
}

/// Parses xargs' arguments without running anything; the error is the lines xargs would
/// print (it then exits 1).
pub(crate) fn command(args: &[String]) -> Result<XargsCommand, Vec<String>> {
    let (options, at, command) = parse_options(args)?;
    Ok(XargsCommand {
        at,
        command,
        replace: match options.grouping {
            Grouping::Replace(r) if !r.is_empty() => Some(r),
            _ => None,
        },
    })
}

/// Parses xargs' options (GNU getopt with `+`: options end at the first operand); the rest is
/// the command and its initial arguments, starting at the index returned (the arguments'
/// length when there are none and the command is `echo`).
fn parse_options(args: &[String]) -> Result<(Options, usize, Vec<String>), Vec<String>> {
    let mut o = Options {
        separator: Separator::Blanks,
        grouping: Grouping::Args(None),
        max_chars: DEFAULT_MAX_CHARS,
        exit_if_too_long: false,
        no_run_if_empty: false,
        trace: false,
        eof: None,
        arg_file: None,
    };
    let at = SPEC
        .parse_with(args, |name, value| apply(&mut o, name, value))?
        .min(args.len());
    let mut command: Vec<String> = args[at..].to_vec();
    if command.is_empty() {
        command.push("echo".to_owned());
    }
    Ok((o, at, command))
}

/// A positive number for option `-letter`, with GNU's messages.
fn number(value: &str, letter: char, min: usize) -> Result<usize, Vec<String>> {
    let n: usize = value.parse().map_err(|_| {
        vec![format!(
            "xargs: invalid number \"{value}\" for -{letter} option"
        )]
    })?;
    if n < min {
        return Err(vec![format!(
            "xargs: value {value} for -{letter} option should be >= {min}"
        )]);
    }
    Ok(n)
}

fn apply(o: &mut Options, name: &str, value: Option<String>) -> Result<(), Vec<String>> {
    let value_or_empty = value.clone().unwrap_or_default();
    match name {
        "null" => o.separator = Separator::Byte(0),
        "delimiter" => o.separator = Separator::Byte(delimiter(&value_or_empty)?),
        "arg-file" => o.arg_file = value,
        "eof-strict" | "eof" => o.eof = value.filter(|v| !v.is_empty()),
        "replace-strict" => o.grouping = Grouping::Replace(value_or_empty),
        "replace" => o.grouping = Grouping::Replace(value.unwrap_or_else(|| "{}".to_owned())),
        "max-lines-strict" => o.grouping = Grouping::Lines(number(&value_or_empty, 'L', 1)?),
        "max-lines" => {
            o.grouping = Grouping::Lines(match value {
                Some(v) => number(&v, 'l', 1)?,
                None => 1,
            });
        }
        "max-args" => {
            let n = number(&value_or_empty, 'n', 1)?;
            // GNU: `-n1` after `-I` is ignored; any other `-n` turns the replacement off.
            if !(n == 1 && matches!(o.grouping, Grouping::Replace(_))) {
                o.grouping = Grouping::Args(Some(n));
            }
        }
        "max-procs" => {
            number(&value_or_empty, 'P', 0)?;
        }
        "max-chars" => o.max_chars = number(&value_or_empty, 's', 1)?,
        "no-run-if-empty" => o.no_run_if_empty = true,
        "verbose" => o.trace = true,
        "exit" => o.exit_if_too_long = true,
        "interactive" | "open-tty" => {
            return Err(vec![format!(
                "xargs: --{name} is not supported here: commands have no terminal"
            )]);
        }
        "help" => {
            return Err(vec![
                "xargs: --help: see docs/shell.md (xargs) for the options this xargs takes"
                    .to_owned(),
            ]);
        }
        other => {
            return Err(vec![format!(
                "xargs: --{other} is not supported by the agent's shell"
            )]);
        }
    }
    Ok(())
}

/// The byte `-d` names: one character or an escape (`\n`, `\t`, `\0`, `\\`, `\x41`, `\101`).
fn delimiter(spec: &str) -> Result<u8, Vec<String>> {
    let bad = || {
        vec![format!(
            "xargs: invalid input delimiter specification {spec}: the delimiter must be either a single character or an escape sequence starting with \\."
        )]
    };
    let bytes = spec.as_bytes();
    match bytes {
        [b] => Ok(*b),
        [b'\\', rest @ ..] if !rest.is_empty() => match rest {
            [b'a'] => Ok(7),
            [b'b'] => Ok(8),
            [b'f'] => Ok(12),
            [b'n'] => Ok(b'\n'),
            [b'r'] => Ok(b'\r'),
            [b't'] => Ok(b'\t'),
            [b'v'] => Ok(11),
            [b'\\'] => Ok(b'\\'),
            [b'x', hex @ ..] if !hex.is_empty() && hex.len() <= 2 => {
                u8::from_str_radix(&spec[2..], 16).map_err(|_| bad())
            }
            octal if octal.len() <= 3 && octal.iter().all(|b| (b'0'..=b'7').contains(b)) => {
                u8::try_from(u32::from_str_radix(&spec[1..], 8).map_err(|_| bad())?)
                    .map_err(|_| bad())
            }
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// What the item reader found next.
#[derive(Debug, PartialEq, Eq)]
enum Event {
    Item(Vec<u8>),
    EndOfLine,
}

/// Reads items as GNU xargs does.
struct Items<R> {
    input: BufReader<R>,
    separator: Separator,
    /// `-I`: a whole line is one item (leading blanks dropped, other blanks kept).
    whole_lines: bool,
    eof: Option<String>,
    done: bool,
    pending_eol: bool,
    /// The longest item kept (`-s`): a longer one can never fit a command line, and keeping it
    /// would let the input grow the host's memory without bound (GNU stops there too).
    max_item: usize,
}

impl<R: Read> Items<R> {
    /// Appends `b` to `item`, or fails as GNU does once the item cannot fit any command line.
    fn push(&mut self, item: &mut Vec<u8>, b: u8) -> Result<(), String> {
        if item.len() >= self.max_item {
            self.done = true;
            return Err("xargs: argument line too long".to_owned());
        }
        item.push(b);
        Ok(())
    }

    fn byte(&mut self) -> std::io::Result<Option<u8>> {
        let buf = self.input.fill_buf()?;
        let Some(&b) = buf.first() else {
            return Ok(None);
        };
        self.input.consume(1);
        Ok(Some(b))
    }

    /// The next item or end of line; `None` at the end of input. An unmatched quote is an
    /// error carrying GNU's message.
    fn next(&mut self) -> Result<Option<Event>, String> {
        if self.pending_eol {
            self.pending_eol = false;
            return Ok(Some(Event::EndOfLine));
        }
        if self.done {
            return Ok(None);
        }
        let io = |e: std::io::Error| format!("xargs: read error: {e}");
        if let Separator::Byte(sep) = self.separator {
            let mut item = Vec::new();
            loop {
                match self.byte().map_err(io)? {
                    None => {
                        self.done = true;
                        if item.is_empty() {
                            return Ok(None);
                        }
                        break;
                    }
                    Some(b) if b == sep => break,
                    Some(b) => self.push(&mut item, b)?,
                }
            }
            // Each item is a line of its own for -L and -I.
            self.pending_eol = true;
            return Ok(Some(Event::Item(item)));
        }
        let mut item = Vec::new();
        let mut started = false;
        let mut quoted = false;
        loop {
            let Some(b) = self.byte().map_err(io)? else {
                self.done = true;
                if started {
                    self.pending_eol = true;
                    return Ok(self.finish(item, quoted));
                }
                return Ok(None);
            };
            match b {
                b'\n' => {
                    if started {
                        self.pending_eol = true;
                        return Ok(self.finish(item, quoted));
                    }
                    return Ok(Some(Event::EndOfLine));
                }
                b' ' | b'\t' if !started => {}
                b' ' | b'\t' if self.whole_lines => self.push(&mut item, b)?,
                b' ' | b'\t' => return Ok(self.finish(item, quoted)),
                b'\'' | b'"' => {
                    started = true;
                    quoted = true;
                    loop {
                        match self.byte().map_err(io)? {
                            Some(c) if c == b => break,
                            Some(b'\n') | None => {
                                let which = if b == b'\'' { "single" } else { "double" };
                                self.done = true;
                                return Err(format!(
                                    "xargs: unmatched {which} quote; by default quotes are special to xargs unless you use the -0 option"
                                ));
                            }
                            Some(c) => self.push(&mut item, c)?,
                        }
                    }
                }
                b'\\' => {
                    started = true;
                    if let Some(c) = self.byte().map_err(io)? {
                        self.push(&mut item, c)?;
                    }
                }
                _ => {
                    started = true;
                    self.push(&mut item, b)?;
                }
            }
        }
    }

    /// An item read in blank mode, or the end of input when it is the `-E` string.
    fn finish(&mut self, item: Vec<u8>, quoted: bool) -> Option<Event> {
        if !quoted && self.eof.as_deref().is_some_and(|e| e.as_bytes() == item) {
            self.done = true;
            self.pending_eol = false;
            return None;
        }
        Some(Event::Item(item))
    }
}

/// Opens `-a FILE`: the file's reader, or the message to print.
pub(crate) type Opener<'a> = dyn Fn(&str) -> Result<Box<dyn Read + 'a>, String> + 'a;

/// Where xargs reads its items and writes its own messages, and how it runs a command line.
pub(crate) struct Io<'a> {
    /// The items (stdin, or the `-a` file once opened by `open`).
    pub input: &'a mut dyn Read,
    /// xargs' own stderr.
    pub stderr: &'a mut dyn Write,
    /// Opens `-a FILE` in the workspace (the error is the message to print).
    pub open: &'a Opener<'a>,
    /// Runs one command line.
    pub run: &'a mut dyn FnMut(Vec<String>) -> Ran,
    /// Whether the script was cancelled.
    pub cancelled: &'a dyn Fn() -> bool,
}

/// Runs `xargs ARGS...`; the exit status.
pub(crate) fn xargs(args: &[String], io: Io<'_>) -> i32 {
    let Io {
        input,
        stderr,
        open,
        run,
        cancelled,
    } = io;
    let mut launcher = Launcher {
        stderr,
        run,
        cancelled,
        trace: false,
        worst: 0,
    };
    let (options, _, command) = match parse_options(args) {
        Ok(parsed) => parsed,
        Err(lines) => {
            for line in lines {
                launcher.say(&line);
            }
            return 1;
        }
    };
    launcher.trace = options.trace;
    let input: Box<dyn Read + '_> = match &options.arg_file {
        Some(path) => match open(path) {
            Ok(file) => file,
            Err(message) => {
                launcher.say(&format!("xargs: {message}"));
                return 1;
            }
        },
        None => Box::new(input),
    };
    let mut items = Items {
        input: BufReader::new(input),
        separator: options.separator,
        whole_lines: matches!(options.grouping, Grouping::Replace(_)),
        eof: options.eof.clone(),
        done: false,
        pending_eol: false,
        max_item: options.max_chars.min(MAX_ITEM_BYTES),
    };
    let base_chars: usize = command.iter().map(|a| a.len() + 1).sum();
    if base_chars > options.max_chars {
        launcher.say("xargs: argument list too long");
        return 1;
    }
    let mut batch = Batch {
        command: &command,
        options: &options,
        items: Vec::new(),
        chars: base_chars,
        base_chars,
        lines: 0,
        line_has_items: false,
        ran_any: false,
    };
    match batch.run(&mut items, &mut launcher) {
        Ok(()) => launcher.worst,
        Err(status) => status,
    }
}

/// Runs xargs' command lines and keeps the exit status they add up to.
struct Launcher<'a> {
    stderr: &'a mut dyn Write,
    run: &'a mut dyn FnMut(Vec<String>) -> Ran,
    cancelled: &'a dyn Fn() -> bool,
    /// `-t`: each command line is written to stderr before it runs.
    trace: bool,
    /// The status so far: 0, or 123 once a command exited 1-125.
    worst: i32,
}

impl Launcher<'_> {
    /// Writes one of xargs' own lines to its stderr.
    fn say(&mut self, line: &str) {
        let _ignored = self.stderr.write_all(format!("{line}\n").as_bytes());
    }

    /// Runs one command line; `Err(status)` when xargs must stop.
    fn launch(&mut self, argv: Vec<String>) -> Result<(), i32> {
        if (self.cancelled)() {
            return Err(CANCELLED);
        }
        if self.trace {
            self.say(&argv.join(" "));
        }
        let name = argv.first().cloned().unwrap_or_default();
        match (self.run)(argv) {
            Ran::NotFound => {
                self.say(&format!("xargs: {name}: No such file or directory"));
                Err(127)
            }
            Ran::Status(0) => Ok(()),
            Ran::Status(255) => {
                self.say(&format!("xargs: {name}: exited with status 255; aborting"));
                Err(124)
            }
            Ran::Status(126) => Err(126),
            Ran::Status(127) => Err(127),
            Ran::Status(s) if (1..=125).contains(&s) => {
                self.worst = 123;
                Ok(())
            }
            Ran::Status(s) => {
                self.say(&format!(
                    "xargs: {name}: terminated by signal {}",
                    s.saturating_sub(128)
                ));
                Err(125)
            }
        }
    }
}

/// The command line being gathered from the items, and when it runs (`-n`, `-L`, `-s`).
struct Batch<'o> {
    /// The command and its initial arguments.
    command: &'o [String],
    options: &'o Options,
    /// The items gathered so far.
    items: Vec<String>,
    /// The length of the line so far (each argument counts its length plus one).
    chars: usize,
    /// The length of the command and its initial arguments.
    base_chars: usize,
    /// `-L`: the non-blank input lines gathered so far.
    lines: usize,
    /// Whether the current input line had an item (a blank line does not count for `-L`).
    line_has_items: bool,
    /// Whether any command line ran (without one, xargs runs the command once, unless `-r`).
    ran_any: bool,
}

impl Batch<'_> {
    /// Reads all the items and runs the command lines they make; `Err(status)` when xargs
    /// stops early.
    fn run<R: Read>(
        &mut self,
        items: &mut Items<R>,
        launcher: &mut Launcher<'_>,
    ) -> Result<(), i32> {
        loop {
            let event = match items.next() {
                Ok(e) => e,
                Err(message) => {
                    // GNU runs what it has read before the bad quote, then fails.
                    if !self.items.is_empty() {
                        let argv = line(self.command, &mut self.items);
                        launcher.launch(argv)?;
                    }
                    launcher.say(&message);
                    return Err(1);
                }
            };
            match event {
                None => break,
                Some(Event::EndOfLine) => self.end_of_line(launcher)?,
                Some(Event::Item(bytes)) => {
                    let item = String::from_utf8_lossy(&bytes).into_owned();
                    if let Grouping::Replace(pattern) = &self.options.grouping {
                        self.replace(pattern, &item, launcher)?;
                    } else {
                        self.add(item, launcher)?;
                    }
                }
            }
        }
        let replace = matches!(self.options.grouping, Grouping::Replace(_));
        if !self.items.is_empty() || (!self.ran_any && !self.options.no_run_if_empty && !replace) {
            let argv = line(self.command, &mut self.items);
            launcher.launch(argv)?;
        }
        Ok(())
    }

    /// Runs the line gathered so far (which leaves it empty).
    fn flush(&mut self, launcher: &mut Launcher<'_>) -> Result<(), i32> {
        let argv = line(self.command, &mut self.items);
        self.chars = self.base_chars;
        self.ran_any = true;
        launcher.launch(argv)
    }

    /// The end of an input line: with `-L N`, the Nth non-blank one runs the line.
    fn end_of_line(&mut self, launcher: &mut Launcher<'_>) -> Result<(), i32> {
        if let Grouping::Lines(n) = self.options.grouping
            && self.line_has_items
        {
            self.lines += 1;
            self.line_has_items = false;
            if self.lines >= n {
                self.lines = 0;
                self.flush(launcher)?;
            }
        }
        Ok(())
    }

    /// `-I R`: runs the command once for `item`, with R replaced in the initial arguments.
    fn replace(
        &mut self,
        pattern: &str,
        item: &str,
        launcher: &mut Launcher<'_>,
    ) -> Result<(), i32> {
        if item.is_empty() && self.options.separator == Separator::Blanks {
            return Ok(());
        }
        let argv: Vec<String> = self
            .command
            .iter()
            .map(|a| {
                if pattern.is_empty() {
                    a.clone()
                } else {
                    a.replace(pattern, item)
                }
            })
            .collect();
        let chars: usize = argv.iter().map(|a| a.len() + 1).sum();
        if chars > self.options.max_chars {
            launcher.say("xargs: argument line too long");
            return Err(1);
        }
        self.ran_any = true;
        launcher.launch(argv)
    }

    /// Adds `item` to the line: the line runs first when the item would not fit (`-s`), and
    /// after it when it makes `-n` items.
    fn add(&mut self, item: String, launcher: &mut Launcher<'_>) -> Result<(), i32> {
        self.line_has_items = true;
        let chars = item.len() + 1;
        if self.chars + chars > self.options.max_chars {
            // -x: a line of -n items or -L lines that does not fit is an error, not a split.
            let counted = !matches!(self.options.grouping, Grouping::Args(None));
            if self.items.is_empty() || (self.options.exit_if_too_long && counted) {
                launcher.say("xargs: argument line too long");
                return Err(1);
            }
            self.flush(launcher)?;
        }
        self.items.push(item);
        self.chars += chars;
        if let Grouping::Args(Some(n)) = self.options.grouping
            && self.items.len() >= n
        {
            self.flush(launcher)?;
        }
        Ok(())
    }
}

/// A command line: the command and its initial arguments, then the items gathered (which
/// leave `batch` empty for the next line).
fn line(command: &[String], batch: &mut Vec<String>) -> Vec<String> {
    let mut argv = command.to_vec();
    argv.append(batch);
    argv
}

#[cfg(test)]
mod tests;
