//! grep's command line: the options (GNU's short and long forms, `-NUM`) → a [`Config`], with
//! the patterns gathered from `-e`, `-f` and the first operand.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read, Write};

use crate::util::{self, HasArg, Item, LongOpt, long};

/// Pattern dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dialect {
    Basic,
    Extended,
    Fixed,
    Perl,
}

/// How binary files are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Binary {
    /// Report "binary file matches".
    Report,
    /// `-a`: treat as text.
    Text,
    /// `-I`: treat as not matching.
    Skip,
}

/// Parsed options.
#[derive(Debug)]
pub(super) struct Config {
    pub(super) patterns: Vec<Vec<u8>>,
    pub(super) dialect: Dialect,
    pub(super) ignore_case: bool,
    pub(super) invert: bool,
    pub(super) line_number: bool,
    pub(super) byte_offset: bool,
    pub(super) count: bool,
    pub(super) files_with: bool,
    pub(super) files_without: bool,
    pub(super) quiet: bool,
    pub(super) no_messages: bool,
    pub(super) recursive: bool,
    pub(super) deref: bool,
    pub(super) word: bool,
    pub(super) line: bool,
    pub(super) only: bool,
    pub(super) with_filename: Option<bool>,
    pub(super) max_count: Option<u64>,
    pub(super) before: usize,
    pub(super) after: usize,
    pub(super) binary: Binary,
    pub(super) label: Vec<u8>,
    pub(super) include: Vec<Vec<u8>>,
    pub(super) exclude: Vec<Vec<u8>>,
    pub(super) exclude_dir: Vec<Vec<u8>>,
    pub(super) files: Vec<OsString>,
}

const SHORTS: &str = "0123456789A:B:C:D:EFGHILPRUVabce:f:hilm:noqrsuvwxy";

const LONGS: &[LongOpt] = &[
    long("after-context", HasArg::Required, "A"),
    long("before-context", HasArg::Required, "B"),
    long("context", HasArg::Required, "C"),
    long("basic-regexp", HasArg::No, "G"),
    long("extended-regexp", HasArg::No, "E"),
    long("fixed-strings", HasArg::No, "F"),
    long("fixed-regexp", HasArg::No, "F"),
    long("perl-regexp", HasArg::No, "P"),
    long("regexp", HasArg::Required, "e"),
    long("file", HasArg::Required, "f"),
    long("ignore-case", HasArg::No, "i"),
    long("no-ignore-case", HasArg::No, "no-ignore-case"),
    long("word-regexp", HasArg::No, "w"),
    long("line-regexp", HasArg::No, "x"),
    long("no-messages", HasArg::No, "s"),
    long("invert-match", HasArg::No, "v"),
    long("version", HasArg::No, "V"),
    long("help", HasArg::No, "help"),
    long("max-count", HasArg::Required, "m"),
    long("line-number", HasArg::No, "n"),
    long("byte-offset", HasArg::No, "b"),
    long("no-line-number", HasArg::No, "no-line-number"),
    long("line-buffered", HasArg::No, "line-buffered"),
    long("with-filename", HasArg::No, "H"),
    long("no-filename", HasArg::No, "h"),
    long("label", HasArg::Required, "label"),
    long("only-matching", HasArg::No, "o"),
    long("quiet", HasArg::No, "q"),
    long("silent", HasArg::No, "q"),
    long("binary-files", HasArg::Required, "binary-files"),
    long("text", HasArg::No, "a"),
    long("directories", HasArg::Required, "d"),
    long("devices", HasArg::Required, "D"),
    long("recursive", HasArg::No, "r"),
    long("dereference-recursive", HasArg::No, "R"),
    long("include", HasArg::Required, "include"),
    long("exclude", HasArg::Required, "exclude"),
    long("exclude-dir", HasArg::Required, "exclude-dir"),
    long("files-without-match", HasArg::No, "L"),
    long("files-with-matches", HasArg::No, "l"),
    long("count", HasArg::No, "c"),
    long("color", HasArg::Optional, "color"),
    long("colour", HasArg::Optional, "color"),
];

const USAGE: &str = "Usage: grep [OPTION]... PATTERNS [FILE]...";

const HELP: &str = "Usage: grep [OPTION]... PATTERNS [FILE]...
Search for PATTERNS in each FILE.
Example: grep -i 'hello world' menu.h main.c
PATTERNS can contain multiple patterns separated by newlines.

Pattern selection and interpretation:
  -E, --extended-regexp     PATTERNS are extended regular expressions
  -F, --fixed-strings       PATTERNS are strings
  -G, --basic-regexp        PATTERNS are basic regular expressions
  -P, --perl-regexp         PATTERNS use the Rust regex crate's syntax
  -e, --regexp=PATTERNS     use PATTERNS for matching
  -f, --file=FILE           take PATTERNS from FILE
  -i, --ignore-case         ignore case distinctions in patterns and data
  -w, --word-regexp         match only whole words
  -x, --line-regexp         match only whole lines

Miscellaneous:
  -s, --no-messages         suppress error messages
  -v, --invert-match        select non-matching lines
  -V, --version             display version information and exit
      --help                display this help text and exit

Output control:
  -m, --max-count=NUM       stop after NUM selected lines
  -n, --line-number         print line number with output lines
  -b, --byte-offset         print the byte offset with output lines
  -H, --with-filename       print file name with output lines
  -h, --no-filename         suppress the file name prefix on output
      --label=LABEL         use LABEL as the standard input file name prefix
  -o, --only-matching       show only nonempty parts of lines that match
  -q, --quiet, --silent     suppress all normal output
  -a, --text                equivalent to --binary-files=text
  -I                        equivalent to --binary-files=without-match
  -r, --recursive           search directories recursively (entries sorted by name)
  -R, --dereference-recursive  likewise, but follow all symlinks
      --include=GLOB        search only files that match GLOB
      --exclude=GLOB        skip files that match GLOB
      --exclude-dir=GLOB    skip directories that match GLOB
  -L, --files-without-match  print only names of FILEs with no selected lines
  -l, --files-with-matches  print only names of FILEs with selected lines
  -c, --count               print only a count of selected lines per FILE

Context control:
  -B, --before-context=NUM  print NUM lines of leading context
  -A, --after-context=NUM   print NUM lines of trailing context
  -C, --context=NUM         print NUM lines of output context
  -NUM                      same as --context=NUM

Exit status is 0 if any line is selected, 1 otherwise;
if any error occurs and -q is not given, the exit status is 2.
";

fn usage_error(err: &mut dyn Write, msg: &str) -> i32 {
    let _ = writeln!(
        err,
        "grep: {msg}\n{USAGE}\nTry 'grep --help' for more information."
    );
    2
}

fn parse_num(v: &Option<OsString>, what: &str) -> Result<u64, String> {
    let s = v
        .as_ref()
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    s.trim()
        .parse::<u64>()
        .map_err(|_| format!("invalid {what} argument"))
}

/// What the options say that is settled only once all of them are read.
#[derive(Default)]
struct Pending {
    /// A `-e` or `-f` was given (else the first operand is the pattern).
    have_patterns: bool,
    /// The matcher `-E`/`-F`/`-G`/`-P` named (naming two different ones is an error).
    dialect_set: Option<Dialect>,
    ctx_before: Option<u64>,
    ctx_after: Option<u64>,
    ctx_both: Option<u64>,
    /// `-NUM` digits accumulate within one argument: (argument index, value so far).
    digits: Option<(usize, u64)>,
}

impl Pending {
    /// One digit `d` of a `-NUM` option in argument `at`.
    fn digit(&mut self, at: usize, d: u8) {
        let n = u64::from(d - b'0');
        let v = match self.digits {
            Some((arg, prev)) if arg == at => prev.saturating_mul(10).saturating_add(n),
            _ => n,
        };
        self.digits = Some((at, v));
        self.ctx_both = Some(v);
    }

    /// Sets the context lengths: `-A`/`-B` override `-C`/`-NUM`.
    fn set_context(&self, c: &mut Config) {
        if let Some(n) = self.ctx_both {
            c.before = usize::try_from(n).unwrap_or(usize::MAX);
            c.after = c.before;
        }
        if let Some(n) = self.ctx_before {
            c.before = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = self.ctx_after {
            c.after = usize::try_from(n).unwrap_or(usize::MAX);
        }
    }
}

/// Parses the arguments (without the program name). `Err` is the exit status when grep stops
/// there (a usage error, or `--help` / `--version` written to standard output).
pub(super) fn parse(args: &[OsString], err: &mut dyn Write) -> Result<Config, i32> {
    let items = match util::getopt(args, SHORTS, LONGS, true) {
        Ok(i) => i,
        Err(m) => return Err(usage_error(err, &m)),
    };
    let mut c = Config {
        patterns: Vec::new(),
        dialect: Dialect::Basic,
        ignore_case: false,
        invert: false,
        line_number: false,
        byte_offset: false,
        count: false,
        files_with: false,
        files_without: false,
        quiet: false,
        no_messages: false,
        recursive: false,
        deref: false,
        word: false,
        line: false,
        only: false,
        with_filename: None,
        max_count: None,
        before: 0,
        after: 0,
        binary: Binary::Report,
        label: b"(standard input)".to_vec(),
        include: Vec::new(),
        exclude: Vec::new(),
        exclude_dir: Vec::new(),
        files: Vec::new(),
    };
    let mut pending = Pending::default();
    let mut operands = Vec::new();
    for item in items {
        let (key, val, at) = match item {
            Item::Operand(o) => {
                operands.push(o);
                continue;
            }
            Item::Opt { key, val, at } => (key, val, at),
        };
        if let Some(d) = key
            .bytes()
            .next()
            .filter(|b| b.is_ascii_digit() && key.len() == 1)
        {
            pending.digit(at, d);
            continue;
        }
        option(&mut c, &mut pending, key, val, err)?;
    }
    pending.set_context(&mut c);
    let mut operands = operands.into_iter();
    if !pending.have_patterns {
        let Some(p) = operands.next() else {
            return Err(usage_error(err, "no pattern given"));
        };
        add_patterns(&mut c, util::os_bytes(&p));
    }
    c.files = operands.collect();
    Ok(c)
}

/// Adds the newline-separated patterns of `text`.
fn add_patterns(c: &mut Config, text: &[u8]) {
    c.patterns
        .extend(text.split(|&b| b == b'\n').map(<[u8]>::to_vec));
}

/// Applies one option (`key` is its short letter or its long name).
fn option(
    c: &mut Config,
    pending: &mut Pending,
    key: &str,
    val: Option<OsString>,
    err: &mut dyn Write,
) -> Result<(), i32> {
    let bad = |e: String, err: &mut dyn Write| {
        let _ = writeln!(err, "grep: {e}");
        2
    };
    match key {
        "A" => {
            pending.ctx_after = Some(parse_num(&val, "context length").map_err(|e| bad(e, err))?)
        }
        "B" => {
            pending.ctx_before = Some(parse_num(&val, "context length").map_err(|e| bad(e, err))?)
        }
        "C" => pending.ctx_both = Some(parse_num(&val, "context length").map_err(|e| bad(e, err))?),
        "m" => c.max_count = Some(parse_num(&val, "max count").map_err(|e| bad(e, err))?),
        "E" | "F" | "G" | "P" => {
            let d = match key {
                "E" => Dialect::Extended,
                "F" => Dialect::Fixed,
                "G" => Dialect::Basic,
                _ => Dialect::Perl,
            };
            // Like GNU: naming two different matchers is an error, the same one twice is not.
            if pending.dialect_set.is_some_and(|prev| prev != d) {
                return Err(bad("conflicting matchers specified".into(), err));
            }
            pending.dialect_set = Some(d);
            c.dialect = d;
        }
        "e" => {
            pending.have_patterns = true;
            add_patterns(c, util::os_bytes(&val.unwrap_or_default()));
        }
        "f" => {
            pending.have_patterns = true;
            pattern_file(c, &val.unwrap_or_default(), err)?;
        }
        "i" | "y" => c.ignore_case = true,
        "no-ignore-case" => c.ignore_case = false,
        "w" => c.word = true,
        "x" => c.line = true,
        "s" => c.no_messages = true,
        "v" => c.invert = true,
        "n" => c.line_number = true,
        "b" => c.byte_offset = true,
        "no-line-number" => c.line_number = false,
        "H" => c.with_filename = Some(true),
        "h" => c.with_filename = Some(false),
        "label" => c.label = util::os_bytes(&val.unwrap_or_default()).to_vec(),
        "o" => c.only = true,
        "q" => c.quiet = true,
        "a" => c.binary = Binary::Text,
        "I" => c.binary = Binary::Skip,
        "binary-files" => {
            c.binary = match val.as_ref().and_then(|v| v.to_str()) {
                Some("binary") => Binary::Report,
                Some("text") => Binary::Text,
                Some("without-match") => Binary::Skip,
                _ => return Err(bad("invalid argument for --binary-files".into(), err)),
            }
        }
        "d" => match val.as_ref().and_then(|v| v.to_str()) {
            Some("recurse") => c.recursive = true,
            Some("read" | "skip") => {}
            _ => return Err(bad("invalid argument for --directories".into(), err)),
        },
        "r" => c.recursive = true,
        "R" => {
            c.recursive = true;
            c.deref = true;
        }
        "include" => c
            .include
            .push(util::os_bytes(&val.unwrap_or_default()).to_vec()),
        "exclude" => c
            .exclude
            .push(util::os_bytes(&val.unwrap_or_default()).to_vec()),
        "exclude-dir" => c
            .exclude_dir
            .push(util::os_bytes(&val.unwrap_or_default()).to_vec()),
        "L" => {
            c.files_without = true;
            c.files_with = false;
        }
        "l" => {
            c.files_with = true;
            c.files_without = false;
        }
        "c" => c.count = true,
        "V" => {
            let _ = writeln!(
                io::stdout(),
                "grep (guest-coreutils) {}",
                env!("CARGO_PKG_VERSION")
            );
            return Err(0);
        }
        "help" => {
            let _ = write!(io::stdout(), "{HELP}");
            return Err(0);
        }
        // Accepted and ignored: colour, buffering, binary/CRLF handling, devices, NUL output.
        _ => {}
    }
    Ok(())
}

/// `-f FILE` (`-` is standard input): one pattern a line; an empty file gives no pattern at all
/// (nothing matches).
fn pattern_file(c: &mut Config, name: &OsString, err: &mut dyn Write) -> Result<(), i32> {
    let data = if name == "-" {
        let mut d = Vec::new();
        io::stdin().read_to_end(&mut d).map(|_| d)
    } else {
        fs::read(name)
    };
    match data {
        Ok(d) if d.is_empty() => {}
        Ok(d) => add_patterns(c, d.strip_suffix(b"\n").unwrap_or(&d)),
        Err(e) => {
            let _ = writeln!(
                err,
                "grep: {}: {}",
                name.to_string_lossy(),
                util::io_msg(&e)
            );
            return Err(2);
        }
    }
    Ok(())
}
